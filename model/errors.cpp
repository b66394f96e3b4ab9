#include "errors.h"

#include <iostream>

namespace tp {

std::string SourceLocation::str() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

namespace {
std::string compose(const SourceLocation& where, const std::string& field, const std::string& message) {
  std::string out = where.str();
  if (!out.empty()) out += ": ";
  if (!field.empty()) out += field + ": ";
  return out + message;
}
}  // namespace

InputError::InputError(SourceLocation where, std::string field, std::string message)
    : std::runtime_error(compose(where, field, message)),
      where_(std::move(where)),
      field_(std::move(field)),
      message_(std::move(message)) {}

int run_with_exit_codes(const std::function<int()>& command) {
  try {
    return command();
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
