#include "output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "errors.h"
#include "input_file.h"

namespace tp {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& what, const std::string& path, const std::string& why) {
  throw IoError("cannot write " + what + " '" + path + "': " + why);
}

// Why the last system call failed, or that a write did (a stream's failure need not set errno).
std::string last_error() { return errno != 0 ? std::strerror(errno) : "the write failed"; }

// The file a path names once links are followed, link by link (a dangling link names the file it would
// make, whose folder must then exist); a loop of links is an error, as the system's 40 levels have it.
std::string resolved(const std::string& path, const std::string& what) {
  fs::path p = path;
  std::error_code ec;
  for (int hops = 0; fs::is_symlink(p, ec); ++hops) {
    if (hops == 40) fail(what, path, "too many levels of links");
    const fs::path next = fs::read_symlink(p, ec);
    if (ec) fail(what, path, ec.message());
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  return p.string();
}

// The temporary files being written, removed by the handler of an interrupting signal (Ctrl-C, SIGTERM,
// SIGHUP) before the process ends as the signal would have ended it: an interrupted write leaves nothing
// behind (a CLI audit, 2026-12-01: a 94 MB trace's temporary file stayed). Fixed slots of plain characters:
// the handler may only call async-signal-safe functions (unlink, signal, raise).
constexpr std::size_t kSlots = 8, kPathBytes = 4096;
std::array<std::array<char, kPathBytes>, kSlots> pending_paths{};
std::array<std::atomic<bool>, kSlots> pending_claimed{};  // a writer holds the slot
std::array<std::atomic<bool>, kSlots> pending_ready{};    // its path is in place for the handler

extern "C" void remove_pending_and_reraise(int sig) {
  for (std::size_t i = 0; i < kSlots; ++i) {
    if (pending_ready[i].load()) ::unlink(pending_paths[i].data());
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// A temporary file registered for removal on a signal while it exists (one slot; none left or a path too
// long: not registered, as before).
class PendingFile {
 public:
  explicit PendingFile(const std::string& path) {
    static std::once_flag handlers;
    std::call_once(handlers, [] {
      for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        // A signal ignored (a background job's SIGINT, nohup's SIGHUP) stays ignored.
        struct sigaction now {};
        if (::sigaction(sig, nullptr, &now) == 0 && now.sa_handler == SIG_IGN) continue;
        std::signal(sig, remove_pending_and_reraise);
      }
    });
    if (path.size() >= kPathBytes) return;
    for (std::size_t i = 0; i < kSlots; ++i) {
      bool expected = false;
      if (!pending_claimed[i].compare_exchange_strong(expected, true)) continue;
      std::memcpy(pending_paths[i].data(), path.c_str(), path.size() + 1);
      pending_ready[i] = true;
      slot_ = static_cast<int>(i);
      return;
    }
  }
  ~PendingFile() {
    if (slot_ < 0) return;
    pending_ready[static_cast<std::size_t>(slot_)] = false;
    pending_claimed[static_cast<std::size_t>(slot_)] = false;
  }
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;

 private:
  int slot_ = -1;
};

// The mode a new file gets (0666 less the umask), or the replaced file's own.
mode_t mode_for(const std::string& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) return st.st_mode & 07777;
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

// Writes through an ofstream on `file`; false when any write failed.
bool stream_to(const std::string& file, const std::function<void(std::ostream&)>& write, std::ios::openmode mode) {
  std::ofstream out(file, std::ios::binary | mode);
  if (!out) return false;
  write(out);
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace

void check_output_target(const std::string& path, const std::string& what) {
  if (path.empty()) fail(what, path, "no file name given");
  // Not a file named "-" beside the user's files: the standard output is the commands' own (their tables).
  if (path == "-") fail(what, path, "'-' is not the standard output here; give a file name");
  const std::string target = resolved(path, what);
  std::error_code ec;
  if (fs::is_directory(target, ec)) fail(what, path, "it is a directory; give a file name");
  if (was_read_as_input(target)) fail(what, path, "it is one of the command's input files; give another file name");
  const fs::path parent = fs::path(target).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) fail(what, path, "the folder " + parent.string() + " does not exist");
}

void write_output_file(const std::string& path, const std::function<void(std::ostream&)>& write, const std::string& what) {
  check_output_target(path, what);
  const std::string target = resolved(path, what);
  std::error_code ec;
  if (fs::exists(target, ec) && !fs::is_regular_file(target, ec)) {  // a device or a pipe: written in place
    errno = 0;
    if (!stream_to(target, write, std::ios::out)) fail(what, path, last_error());
    return;
  }
  std::string tmp = target + ".XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) fail(what, path, std::strerror(errno));
  const PendingFile pending(tmp);
  const bool moded = ::fchmod(fd, mode_for(target)) == 0;
  ::close(fd);
  errno = 0;
  bool written = false;
  try {
    written = moded && stream_to(tmp, write, std::ios::trunc);
  } catch (...) {  // the writer's own failure: no temporary file left behind
    std::remove(tmp.c_str());
    throw;
  }
  if (!written) {
    const std::string why = last_error();
    std::remove(tmp.c_str());
    fail(what, path, why);
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    fail(what, path, why);
  }
}

void write_file_atomically(const std::string& path, const std::string& text) {
  write_output_file(path, [&](std::ostream& out) { out << text; });
}

}  // namespace tp
