// Typed errors of trainplan's library code. Only main() turns them into exit codes.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

namespace tp {

// Where a value came from: a file position, or the command line (--set).
struct SourceLocation {
  std::string file;  // "scenario.yaml", "catalog/gpus.yaml" or "--set"
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;    // 1-based; 0 when unknown

  std::string str() const;  // "file:line:column" or just "file"
};

// Bad input: names the place, the field (dotted path) and what is wrong.
class InputError : public std::runtime_error {
 public:
  InputError(SourceLocation where, std::string field, std::string message);

  const SourceLocation& where() const { return where_; }
  const std::string& field() const { return field_; }
  const std::string& message() const { return message_; }

 private:
  SourceLocation where_;
  std::string field_;
  std::string message_;
};

// A number as messages show it: the shortest of %g's forms ("0.9", "1e-09", "1048576").
std::string shown(double value);

// A file that cannot be read or written.
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs a command of an executable's main() and turns what it throws into the project's exit codes:
// bad input or a file that cannot be read or written prints "error: ..." and gives 1; anything else is a
// bug, printed as "internal error: ..." with 70. Otherwise the command's own status.
int run_with_exit_codes(const std::function<int()>& command);

}  // namespace tp
