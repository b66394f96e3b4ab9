// model/output_file.h: an output file is never half-written. Oracles: the files each test writes and the
// POSIX rules the writer promises (the umask's mode for a new file, the old file's for a replaced one).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "errors.h"
#include "output_file.h"

namespace tp {
namespace {

namespace fs = std::filesystem;

fs::path fresh_folder(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string text_of(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::size_t entries(const fs::path& dir) { return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), {})); }

TEST(OutputFile, AWriterThatFailsLeavesTheOldFileAndNoTemporary) {
  const fs::path dir = fresh_folder("trainplan-output-throw");
  const fs::path file = dir / "out.txt";
  write_file_atomically(file.string(), "old\n");
  EXPECT_THROW(write_output_file(file.string(), [](std::ostream& out) {
                 out << "half";
                 throw std::runtime_error("the writer failed");
               }),
               std::runtime_error);
  EXPECT_EQ(text_of(file), "old\n");
  EXPECT_EQ(entries(dir), 1u);
  fs::remove_all(dir);
}

TEST(OutputFile, ANewFileTakesTheUmasksModeAndAReplacedOneKeepsItsOwn) {
  const fs::path dir = fresh_folder("trainplan-output-mode");
  const mode_t mask = ::umask(0022);
  const fs::path file = dir / "new.txt";
  write_file_atomically(file.string(), "a\n");
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);  // 0666 less 022 (mkstemp alone gives 0600)
  ASSERT_EQ(::chmod(file.c_str(), 0640), 0);
  write_file_atomically(file.string(), "b\n");
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(text_of(file), "b\n");
  ::umask(mask);
  fs::remove_all(dir);
}

TEST(OutputFile, AMissingFolderOrAFolderIsAnIoErrorNamingThePath) {
  const fs::path dir = fresh_folder("trainplan-output-where");
  try {
    write_file_atomically((dir / "no-such" / "x.txt").string(), "x");
    FAIL() << "expected an IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such/x.txt': the folder"), std::string::npos) << e.what();
  }
  EXPECT_THROW(write_file_atomically(dir.string(), "x"), IoError);
  EXPECT_EQ(entries(dir), 0u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tp
