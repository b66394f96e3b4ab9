#include "input_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "errors.h"
#include "work_limits.h"

namespace tp {
namespace {

[[noreturn]] void too_large(const std::string& path, std::uint64_t max_bytes) {
  throw InputError({path, 0, 0}, "",
                   "the file is larger than the input limit of " + limit_bytes_text(max_bytes) +
                       " (raise it with --max-input-mib)");
}

}  // namespace

std::string read_input_file(const std::string& path, std::uint64_t max_bytes) {
  if (max_bytes == 0) max_bytes = work_limits().input_bytes;
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    throw InputError({path, 0, 0}, "", std::string("cannot open the file: ") + std::strerror(errno));
  }
  if (S_ISDIR(info.st_mode)) throw InputError({path, 0, 0}, "", "is a directory, not a file");
  if (!S_ISREG(info.st_mode)) {
    throw InputError({path, 0, 0}, "", "is not a regular file (a device, pipe or socket); give a file");
  }
  if (static_cast<std::uint64_t>(info.st_size) > max_bytes) too_large(path, max_bytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, 0}, "", std::string("cannot open the file: ") + std::strerror(errno));
  // The file may grow between stat() and the read: read at most one byte past the cap.
  std::string text(static_cast<std::size_t>(info.st_size) + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  while (in && text.size() <= max_bytes) {
    char chunk[65536];
    in.read(chunk, sizeof chunk);
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
  }
  if (text.size() > max_bytes) too_large(path, max_bytes);
  if (in.bad()) throw InputError({path, 0, 0}, "", "read error");
  return text;
}

}  // namespace tp
