// Helpers of the error tests: a valid base scenario to break one field at a time, the InputError a
// text raises, and the file:line:column of a piece of text (an oracle independent of yaml-cpp marks).
#pragma once

#include <string>
#include <vector>

#include "errors.h"
#include "test_support.h"

namespace tp::errtest {

// The minimal valid scenario of the error tests; each test replaces one part.
struct Yaml {
  std::string model = "llama3.1-8b";
  std::string cluster = "{preset: dgx-h100, nodes: 1}";
  std::string training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1}";
  std::string parallel = "{tp: 2, pp: 2}";
  std::string extra;  // appended after the parallel line

  std::string str() const {
    return "name: t\nmodel: " + model + "\ncluster: " + cluster + "\ntraining: " + training +
           "\nparallel: " + parallel + "\n" + extra;
  }
};

struct Failure {
  bool thrown = false;
  std::string what;   // the full message: "file:line:col: field: message"
  std::string field;  // InputError::field()
  SourceLocation where;
};

// The InputError that loading `yaml` (label "test.yaml") raises; thrown == false when it loads.
inline Failure load_error(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  try {
    (void)test::scenario(yaml, sets);
  } catch (const InputError& e) {
    return {true, e.what(), e.field(), e.where()};
  }
  return {};
}

// "test.yaml:LINE:COL" of the character `offset` characters into the first occurrence of `needle`
// in `text` (1-based line and column), or "not found" when `needle` is absent.
inline std::string at(const std::string& text, const std::string& needle, size_t offset = 0) {
  size_t pos = text.find(needle);
  if (pos == std::string::npos) return "not found: " + needle;
  pos += offset;
  int line = 1;
  int column = 1;
  for (size_t i = 0; i < pos; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "test.yaml:" + std::to_string(line) + ":" + std::to_string(column);
}

}  // namespace tp::errtest
