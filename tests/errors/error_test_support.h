// Helpers of the error tests: a valid base scenario to break one field at a time, the InputError a
// text raises, the file:line:column of a piece of text (an oracle independent of yaml-cpp marks), the
// check that an error's text starts with its location and field and contains the expected parts, and
// temporary input files.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
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

// Whether `f` is a raised InputError whose text starts with `prefix` and contains each of `parts`. A
// failure names every part that does not hold and quotes the whole error text.
inline ::testing::AssertionResult raised(const Failure& f, const std::string& prefix,
                                         std::initializer_list<std::string> parts = {}) {
  if (!f.thrown) return ::testing::AssertionFailure() << "no InputError was raised";
  std::string wrong;
  if (f.what.compare(0, prefix.size(), prefix) != 0) wrong += "\n  does not start with \"" + prefix + "\"";
  for (const std::string& part : parts) {
    if (f.what.find(part) == std::string::npos) wrong += "\n  does not contain \"" + part + "\"";
  }
  if (wrong.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "the error \"" << f.what << "\"" << wrong;
}

// Whether loading `yaml` raises an InputError on the dotted `field` at the character `offset` characters into
// `needle` (see at()) whose text contains each of `parts`: it starts "at(yaml, needle, offset): field: ".
inline ::testing::AssertionResult fails_at(const std::string& yaml, const std::string& needle, size_t offset,
                                           const std::string& field, std::initializer_list<std::string> parts = {}) {
  return raised(load_error(yaml), at(yaml, needle, offset) + ": " + field + ": ", parts);
}

// Whether loading `yaml` raises an InputError whose text contains each of `parts` (anywhere).
inline ::testing::AssertionResult fails_with(const std::string& yaml, std::initializer_list<std::string> parts) {
  return raised(load_error(yaml), "", parts);
}

// The path of `name` in the test's temporary directory.
inline std::string temp_path(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

// Writes `text` to temp_path(name) and returns that path.
inline std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace tp::errtest
