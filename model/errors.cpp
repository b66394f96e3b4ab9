#include "errors.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iostream>

namespace tp {

std::string SourceLocation::str() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string shown(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", value);
  return buf;
}

namespace {
// A quoted value longer than 100 characters (a 100 kB name) shown by its first 60 and its length, so that the
// message stays one readable line. A quote opens after a non-alphanumeric character and closes before one,
// so an apostrophe ("the GPU's peak") is no quote.
bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

std::string clip_quoted(const std::string& message) {
  std::string out;
  std::size_t i = 0;
  while (i < message.size()) {
    std::size_t open = message.find('\'', i);
    while (open != std::string::npos && open > 0 && is_word_char(message[open - 1])) open = message.find('\'', open + 1);
    if (open == std::string::npos) break;
    std::size_t close = message.find('\'', open + 1);
    while (close != std::string::npos && close + 1 < message.size() && is_word_char(message[close + 1])) {
      close = message.find('\'', close + 1);
    }
    if (close == std::string::npos) break;
    out.append(message, i, open + 1 - i);
    const std::size_t length = close - open - 1;
    if (length > 100) out += message.substr(open + 1, 60) + "... (" + std::to_string(length) + " characters)";
    else out.append(message, open + 1, length);
    out += '\'';
    i = close + 1;
  }
  return out + message.substr(std::min(i, message.size()));
}

std::string compose(const SourceLocation& where, const std::string& field, const std::string& message) {
  std::string out = where.str();
  if (!out.empty()) out += ": ";
  if (!field.empty() && field != where.file) out += field + ": ";  // "--gpu: --gpu:" once
  return out + clip_quoted(message);
}
}  // namespace

InputError::InputError(SourceLocation where, std::string field, std::string message)
    : std::runtime_error(compose(where, field, message)),
      where_(std::move(where)),
      field_(std::move(field)),
      message_(std::move(message)) {}

namespace {
// Whether everything printed reached the standard output (a full disk, a closed pipe's reader fails it):
// a command whose output was lost must not exit 0.
bool standard_output_written() {
  std::cout.flush();
  const bool stream_ok = static_cast<bool>(std::cout);
  return std::fflush(stdout) == 0 && std::ferror(stdout) == 0 && stream_ok;
}
}  // namespace

int run_with_exit_codes(const std::function<int()>& command) {
  try {
    const int status = command();
    if (!standard_output_written()) {
      std::cerr << "error: cannot write the standard output\n";
      return status != 0 ? status : 1;
    }
    return status;
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const IoError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 70;
  }
}

}  // namespace tp
