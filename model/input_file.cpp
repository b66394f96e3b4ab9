#include "input_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <utility>
#include <vector>

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

namespace {

// The files read so far, by device and inode (a link or another spelling of the path is the same file).
std::mutex inputs_mutex;
std::vector<std::pair<dev_t, ino_t>> inputs_read;

}  // namespace

bool was_read_as_input(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return false;
  const std::lock_guard<std::mutex> lock(inputs_mutex);
  return std::find(inputs_read.begin(), inputs_read.end(), std::make_pair(info.st_dev, info.st_ino)) != inputs_read.end();
}

std::string read_input_file(const std::string& path, std::uint64_t max_bytes) {
  if (max_bytes == 0) max_bytes = work_limits().input_bytes;
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    throw InputError({path, 0, 0}, "", std::string("cannot open the file: ") + std::strerror(errno));
  }
  {
    const std::lock_guard<std::mutex> lock(inputs_mutex);
    inputs_read.emplace_back(info.st_dev, info.st_ino);
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
