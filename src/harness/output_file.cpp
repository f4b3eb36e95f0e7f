#include "src/harness/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "src/model/invalid_input.hpp"

namespace pg {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const NamedPath& out, const std::string& what, int error) {
  throw InvalidInput(out.option + " " + out.path + ": " + what + ": " + std::strerror(error));
}

// The canonical form of a path whose last components may not exist yet.
std::string canonical_text(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? path : p.string();
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  return canonical_text(a) == canonical_text(b);
}

fs::path directory_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

void write_all(const NamedPath& out, int fd, const std::vector<unsigned char>& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(out, "write failed after " + std::to_string(done) + " of " + std::to_string(bytes.size()) + " bytes",
                     n < 0 ? errno : ENOSPC);
    done += static_cast<size_t>(n);
  }
}

}  // namespace

void check_paths(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& out = outputs[i];
    struct stat st;
    if (::stat(out.path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      throw InvalidInput(out.option + " " + out.path + " exists and is not a regular file");
    for (const NamedPath& in : inputs)
      if (same_file(out.path, in.path))
        throw InvalidInput(out.option + " " + out.path + " is the same file as " + in.option + " " + in.path +
                           " (it would overwrite an input)");
    for (size_t j = 0; j < i; ++j)
      if (same_file(out.path, outputs[j].path))
        throw InvalidInput(out.option + " " + out.path + " is the same file as " + outputs[j].option + " " +
                           outputs[j].path);
  }
}

OutputCommit::~OutputCommit() {
  for (const Staged& s : staged_)
    if (!s.temporary.empty()) ::unlink(s.temporary.c_str());
}

void OutputCommit::stage(const NamedPath& out, const std::vector<unsigned char>& bytes) {
  if (out.path.empty()) throw InvalidInput(out.option + " is empty");
  const fs::path dir = directory_of(out.path);
  // O_EXCL with a random name: the file is ours, created with 0666 less the umask like any
  // output, never a file another process made.
  std::random_device rd;
  std::string temporary;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    temporary = (dir / ("." + fs::path(out.path).filename().string() + ".poolgrad-" + std::to_string(rd()))).string();
    fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt == 16))
      fail(out, "cannot create a temporary file in " + dir.string(), errno);
  }
  staged_.push_back({out, temporary});
  try {
    write_all(out, fd, bytes);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    fail(out, "fsync failed", e);
  }
  if (::close(fd) != 0) fail(out, "close failed", errno);
}

void OutputCommit::commit() {
  for (size_t i = 0; i < staged_.size(); ++i) {
    if (::rename(staged_[i].temporary.c_str(), staged_[i].out.path.c_str()) != 0) {
      const int e = errno;
      fail(staged_[i].out, "cannot rename the finished temporary into place", e);
    }
    staged_[i].temporary.clear();
  }
  // The renames are durable once each directory is synced; a failure here loses nothing written.
  for (const Staged& s : staged_) {
    const int dir = ::open(directory_of(s.out.path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
      ::fsync(dir);
      ::close(dir);
    }
  }
  staged_.clear();
}

void write_file_atomically(const NamedPath& out, const std::vector<unsigned char>& bytes) {
  OutputCommit c;
  c.stage(out, bytes);
  c.commit();
}

}  // namespace pg
