#include "json_positions.h"

#include <set>

namespace tp {
namespace {

// A recursive walk over valid JSON text, recording each value's position under its path.
class Scanner {
 public:
  Scanner(const std::string& text, const std::string& file, std::map<std::string, SourceLocation>& at)
      : text_(text), file_(file), at_(at) {}

  void value(const std::string& path) {
    space();
    at_[path] = here();
    if (i_ >= text_.size()) return;
    const char c = text_[i_];
    if (c == '{') return object(path);
    if (c == '[') return array(path);
    if (c == '"') {
      (void)string();
      return;
    }
    while (i_ < text_.size() && text_[i_] != ',' && text_[i_] != '}' && text_[i_] != ']' && !is_space(text_[i_])) step();
  }

 private:
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  SourceLocation here() const { return {file_, line_, column_}; }
  void step() {
    if (text_[i_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++i_;
  }
  void space() {
    while (i_ < text_.size() && is_space(text_[i_])) step();
  }
  // The string at the cursor, its escapes kept as written (keys of these files are plain words).
  std::string string() {
    std::string out;
    step();  // the opening quote
    while (i_ < text_.size() && text_[i_] != '"') {
      if (text_[i_] == '\\' && i_ + 1 < text_.size()) {
        out += text_[i_];
        step();
      }
      out += text_[i_];
      step();
    }
    if (i_ < text_.size()) step();  // the closing quote
    return out;
  }
  void object(const std::string& path) {
    step();  // {
    std::set<std::string> keys;
    for (space(); i_ < text_.size() && text_[i_] != '}'; space()) {
      const SourceLocation key_at = here();
      const std::string key = string();
      const std::string field = path.empty() ? key : path + "." + key;
      if (!keys.insert(key).second) {
        throw InputError(key_at, field, "given twice in one object (a JSON reader would keep the last silently)");
      }
      space();
      if (i_ < text_.size() && text_[i_] == ':') step();
      value(field);
      space();
      if (i_ < text_.size() && text_[i_] == ',') step();
    }
    if (i_ < text_.size()) step();  // }
  }
  void array(const std::string& path) {
    step();  // [
    int index = 0;
    for (space(); i_ < text_.size() && text_[i_] != ']'; space()) {
      value(path + "[" + std::to_string(index++) + "]");
      space();
      if (i_ < text_.size() && text_[i_] == ',') step();
    }
    if (i_ < text_.size()) step();  // ]
  }

  const std::string& text_;
  const std::string& file_;
  std::map<std::string, SourceLocation>& at_;
  std::size_t i_ = 0;
  int line_ = 1, column_ = 1;
};

}  // namespace

JsonPositions::JsonPositions(const std::string& text, const std::string& file) : file_(file) {
  Scanner(text, file_, at_).value("");
}

SourceLocation JsonPositions::find(const std::string& field) const {
  for (std::string path = field;; ) {
    const auto it = at_.find(path);
    if (it != at_.end() && !path.empty()) return it->second;
    const std::size_t cut = path.find_last_of(".[");
    if (cut == std::string::npos || cut == 0) return {file_, 0, 0};
    path.resize(cut);
  }
}

void rethrow_at_line(const InputError& e, const JsonPositions& positions, const std::string& file) {
  if (e.where().file != file || e.where().line != 0 || e.field().empty()) throw e;
  const SourceLocation at = positions.find(e.field());
  if (at.line == 0) throw e;
  throw InputError(at, e.field(), e.message());
}

}  // namespace tp
