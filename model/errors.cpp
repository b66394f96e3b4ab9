#include "errors.h"

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
std::string compose(const SourceLocation& where, const std::string& field, const std::string& message) {
  std::string out = where.str();
  if (!out.empty()) out += ": ";
  if (!field.empty() && field != where.file) out += field + ": ";  // "--gpu: --gpu:" once
  return out + message;
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
