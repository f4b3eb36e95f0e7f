// Output files that are either wholly written or untouched.
//
// Each output is first written to a temporary file in its own directory (so the final rename
// stays on one file system and is atomic) with every write, the fsync and the close checked:
// a full disk, a file size limit or an I/O error is an InvalidInput naming the option, and the
// file the path named before is left as it was. Only when every output of a command is staged
// does commit() rename them into place, so a bad second path (`--indices-output`) can no
// longer cost the first (`--output`) its old contents. A temporary not committed is removed.
//
// check_paths() runs before any work: an output that names the same file as an input or as
// another output (same inode, or the same canonical path when it does not exist yet) is
// refused, and so is an existing output that is not a regular file (/dev/full, a directory):
// renaming over a device node would replace it.
#pragma once

#include <string>
#include <vector>

namespace pg {

struct NamedPath {
  std::string option;  // "--output"
  std::string path;
};

void check_paths(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs);

class OutputCommit {
 public:
  OutputCommit() = default;
  OutputCommit(const OutputCommit&) = delete;
  OutputCommit& operator=(const OutputCommit&) = delete;
  ~OutputCommit();

  // Writes `bytes` to a temporary beside out.path; out.path itself is not touched yet.
  void stage(const NamedPath& out, const std::vector<unsigned char>& bytes);
  // Renames every staged temporary onto its path, in staging order.
  void commit();

 private:
  struct Staged {
    NamedPath out;
    std::string temporary;
  };
  std::vector<Staged> staged_;
};

// One output, staged and committed at once (tests, single-output commands).
void write_file_atomically(const NamedPath& out, const std::vector<unsigned char>& bytes);

}  // namespace pg
