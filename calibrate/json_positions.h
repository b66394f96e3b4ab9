// Where each value of a JSON text stands (line and column), by the path the readers name fields with
// ("measurements[2].time.median"), so that an error in a measurements file names its line; and the one thing
// nlohmann::json accepts silently that a hand-edited file should not have: a key given twice in one object.
#pragma once

#include <map>
#include <string>

#include "errors.h"

namespace tp {

class JsonPositions {
 public:
  // Indexes `text`, which must already be valid JSON (nlohmann::json::parse accepted it). A key repeated in
  // one object is an InputError at the second one.
  JsonPositions(const std::string& text, const std::string& file);

  // The location of `field`, or of its longest prefix that is a value of the text (a missing key: the object
  // that lacks it); line 0 when nothing matches.
  SourceLocation find(const std::string& field) const;

 private:
  std::string file_;
  std::map<std::string, SourceLocation> at_;
};

// Re-throws `e` at the line of its field when it names the `file` without a line.
[[noreturn]] void rethrow_at_line(const InputError& e, const JsonPositions& positions, const std::string& file);

}  // namespace tp
