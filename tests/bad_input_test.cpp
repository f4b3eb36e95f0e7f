// The bad-input table (tests/bad_input_table.txt) run against the poolgrad executable: one row
// per input class with the exit code and a fragment of the one stderr line it must print. Every
// row must finish within 2 s (a hang is killed at 20 s and fails), print one line on
// stderr that starts "poolgrad CMD: ", and leave an output it names with keep= exactly as it was.
//
// Row syntax: EXIT | FRAGMENT | FLAGS | ARGUMENTS, '#' starts a comment line. ARGUMENTS are split
// on spaces; '...' quotes one argument with spaces; {name} is a fixture file in the row's
// directory (made below), {dir} the directory. FLAGS, space separated:
//   keep=NAME   NAME exists before the run with known bytes, and must hold them after it
//   fsize=BYTES the run's file size limit (RLIMIT_FSIZE, SIGXFSZ ignored): a write past it
//               fails with EFBIG, as a full disk fails with ENOSPC
//   mem=BYTES   POOLGRAD_HOST_MEMORY for the run: the host memory the checks believe in
//   stdout      the fragment is looked for on stdout (a mismatch report), not stderr
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "src/harness/npy.hpp"
#include "kernels/common/numeric.hpp"
#include "tests/npy_arrays.hpp"

namespace pg {
namespace {

namespace fs = std::filesystem;

struct Row {
  int line = 0;
  int exit_code = 0;
  std::string fragment;
  std::vector<std::string> flags;
  std::vector<std::string> args;
};

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<std::string> split_args(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false, any = false;
  for (const char ch : text) {
    if (ch == '\'') {
      quoted = !quoted;
      any = true;
    } else if (ch == ' ' && !quoted) {
      if (any) out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += ch;
      any = true;
    }
  }
  if (any) out.push_back(cur);
  return out;
}

std::vector<Row> read_table(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::vector<Row> rows;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    line += ' ';  // a row with no arguments ends in " |"
    std::vector<std::string> cols;
    size_t start = 0;
    for (int i = 0; i < 3; ++i) {
      const size_t bar = line.find(" | ", start);
      EXPECT_NE(bar, std::string::npos) << path << ":" << n << ": expected EXIT | FRAGMENT | FLAGS | ARGUMENTS";
      if (bar == std::string::npos) break;
      cols.push_back(trim(line.substr(start, bar - start)));
      start = bar + 3;
    }
    if (cols.size() != 3) continue;
    Row r;
    r.line = n;
    r.exit_code = std::stoi(cols[0]);
    r.fragment = cols[1];
    r.flags = split_args(cols[2]);
    r.args = split_args(line.substr(start));
    rows.push_back(r);
  }
  return rows;
}

template <class I>
NpyArray ints(NpyType t, std::vector<int64_t> shape, const std::vector<I>& v) {
  NpyArray a;
  a.header.type = t;
  a.header.shape = std::move(shape);
  a.data.resize(v.size() * sizeof(I));
  std::memcpy(a.data.data(), v.data(), a.data.size());
  return a;
}

void write_bytes(const fs::path& p, const std::vector<unsigned char>& bytes) {
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void write_text(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

// A .npy file with a hand-written header dict (padded like NumPy's) and `payload` bytes.
std::vector<unsigned char> raw_npy(const std::string& dict, size_t payload) {
  std::string text = dict;
  text.append((64 - (10 + text.size() + 1) % 64) % 64, ' ');
  text.push_back('\n');
  std::vector<unsigned char> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.push_back(static_cast<unsigned char>(text.size() & 0xff));
  out.push_back(static_cast<unsigned char>(text.size() >> 8));
  out.insert(out.end(), text.begin(), text.end());
  out.resize(out.size() + payload, 0);
  return out;
}

// The fixtures rows name as {name}.
void make_fixtures(const fs::path& dir) {
  auto save = [&](const char* name, const NpyArray& a) { write_bytes(dir / name, format_npy(a)); };
  save("x1.npy", npy_array(NpyType::f32, {1, 1, 4}, {1, 2, 3, 4}));
  save("x1u.npy", npy_array(NpyType::f32, {1, 4}, {1, 2, 3, 4}));
  save("x1h.npy", npy_array(NpyType::f16, {1, 1, 4}, {1, 2, 3, 4}));
  save("x1d.npy", npy_array(NpyType::f64, {1, 1, 4}, {1, 2, 3, 4}));
  save("x2.npy", npy_array(NpyType::f32, {1, 1, 4, 4}, std::vector<double>(16, 1.0)));
  save("x3.npy", npy_array(NpyType::f32, {1, 1, 4, 4, 4}, std::vector<double>(64, 1.0)));
  save("x0.npy", npy_array(NpyType::f32, {1, 0, 4}, {}));
  save("dy1.npy", npy_array(NpyType::f32, {1, 1, 2}, {1, 1}));
  save("dy1x5.npy", npy_array(NpyType::f32, {1, 1, 5}, {1, 2, 3, 4, 5}));
  save("dy1d.npy", npy_array(NpyType::f64, {1, 1, 2}, {1, 1}));
  save("dy1s.npy", npy_array(NpyType::f32, {1, 1, 3}, {1, 1, 1}));
  save("xi.npy", ints<int32_t>(NpyType::i32, {1, 1, 4}, {1, 2, 3, 4}));
  save("idx1.npy", ints<int64_t>(NpyType::i64, {1, 1, 2}, {1, 3}));
  save("idxbad.npy", ints<int64_t>(NpyType::i64, {1, 1, 2}, {1, 0}));
  save("idxneg.npy", ints<int64_t>(NpyType::i64, {1, 1, 2}, {-5, 3}));
  save("idxi32.npy", ints<int32_t>(NpyType::i32, {1, 1, 2}, {1, 3}));
  save("idxshape.npy", ints<int64_t>(NpyType::i64, {1, 1, 3}, {1, 3, 3}));
  save("idxu8.npy", ints<uint8_t>(NpyType::u8, {1, 1, 2}, {255, 1}));
  const std::vector<unsigned char> good = format_npy(npy_array(NpyType::f32, {1, 1, 4}, {1, 2, 3, 4}));
  write_bytes(dir / "trunc.npy", std::vector<unsigned char>(good.begin(), good.end() - 3));
  std::vector<unsigned char> longer = good;
  longer.push_back(0);
  write_bytes(dir / "trailing.npy", longer);
  write_bytes(dir / "headcut.npy", std::vector<unsigned char>(good.begin(), good.begin() + 30));
  write_text(dir / "empty.npy", "");
  write_text(dir / "text.npy", "x,y\n1,2\n");
  write_bytes(dir / "neg.npy", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, -3), }", 0));
  write_bytes(dir / "frac.npy", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 2.5), }", 0));
  write_bytes(dir / "fortran.npy", raw_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 1, 4), }", 16));
  write_bytes(dir / "bigendian.npy", raw_npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1, 1, 4), }", 16));
  write_bytes(dir / "complex.npy", raw_npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1, 1, 4), }", 32));
  write_bytes(dir / "nodescr.npy", raw_npy("{'fortran_order': False, 'shape': (1, 1, 4), }", 16));
  write_bytes(dir / "extrakey.npy", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 4), 'x': 1, }", 16));
  write_bytes(dir / "hugeshape.npy", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }", 0));
  write_bytes(dir / "overflow.npy", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 99999999999999999999), }", 0));
  write_bytes(dir / "big.npy", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1000000), }", 4000000));
  std::vector<unsigned char> version = good;
  version[6] = 9;
  write_bytes(dir / "version.npy", version);
  fs::create_directories(dir / "subdir");
  ::symlink((dir / "x1.npy").c_str(), (dir / "link.npy").c_str());
}

struct Result {
  int exit_code = -1;
  bool timed_out = false;
  double seconds = 0;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

Result run(const std::string& exe, const Row& row, const std::vector<std::string>& args, const fs::path& dir) {
  long fsize = -1;
  std::string mem;
  for (const std::string& f : row.flags) {
    if (f.rfind("fsize=", 0) == 0) fsize = std::stol(f.substr(6));
    if (f.rfind("mem=", 0) == 0) mem = f.substr(4);
  }
  // Pipes, not files: a row's file size limit must not cut the error line short.
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) return Result{};
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    if (chdir(dir.c_str()) != 0) _exit(127);
    if (fsize >= 0) {
      signal(SIGXFSZ, SIG_IGN);
      const rlimit limit{static_cast<rlim_t>(fsize), static_cast<rlim_t>(fsize)};
      setrlimit(RLIMIT_FSIZE, &limit);
    }
    if (!mem.empty()) setenv("POOLGRAD_HOST_MEMORY", mem.c_str(), 1);
    std::vector<char*> argv{const_cast<char*>(exe.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
  fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
  Result r;
  auto drain = [&] {
    char buf[4096];
    for (auto [fd, text] : {std::pair{out_pipe[0], &r.out}, {err_pipe[0], &r.err}})
      for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) text->append(buf, static_cast<size_t>(n));
  };
  int status = 0;
  for (;;) {
    drain();
    if (waitpid(pid, &status, WNOHANG) == pid) break;
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(20)) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  drain();
  close(out_pipe[0]);
  close(err_pipe[0]);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

TEST(BadInput, EveryRowOfTheTable) {
  const char* exe = std::getenv("POOLGRAD_EXE");
  const char* table = std::getenv("POOLGRAD_BAD_INPUT_TABLE");
  ASSERT_NE(exe, nullptr) << "set POOLGRAD_EXE to the poolgrad executable";
  ASSERT_NE(table, nullptr) << "set POOLGRAD_BAD_INPUT_TABLE to tests/bad_input_table.txt";
  const std::vector<Row> rows = read_table(table);
  EXPECT_GE(rows.size(), 100u);
  const fs::path base = fs::temp_directory_path() / ("poolgrad-bad-input-" + std::to_string(::getpid()));
  for (const Row& row : rows) {
    // A fresh directory per row: no row sees another's outputs.
    const fs::path dir = base / std::to_string(row.line);
    fs::create_directories(dir);
    make_fixtures(dir);
    auto expand = [&](std::string a) {
      for (size_t at; (at = a.find("{dir}")) != std::string::npos;) a.replace(at, 5, dir.string());
      for (size_t at, end; (at = a.find('{')) != std::string::npos && (end = a.find('}', at)) != std::string::npos;)
        a.replace(at, end - at + 1, (dir / a.substr(at + 1, end - at - 1)).string());
      return a;
    };
    std::vector<std::string> args;
    for (const std::string& a : row.args) args.push_back(expand(a));
    const std::string fragment = expand(row.fragment);
    const std::string keep_bytes = "kept: this file must survive the failed run\n";
    std::vector<fs::path> kept;
    for (const std::string& f : row.flags)
      if (f.rfind("keep=", 0) == 0) {
        kept.push_back(dir / f.substr(5));
        write_text(kept.back(), keep_bytes);
      }
    bool on_stdout = false;
    for (const std::string& f : row.flags) on_stdout = on_stdout || f == "stdout";
    std::string command = "poolgrad";
    for (const std::string& a : args) command += " " + a;
    SCOPED_TRACE("table line " + std::to_string(row.line) + ": " + command);
    const Result r = run(exe, row, args, dir);
    EXPECT_FALSE(r.timed_out) << "killed after 20 s";
    EXPECT_LT(r.seconds, 2.0) << "took " << r.seconds << " s";
    EXPECT_EQ(r.exit_code, row.exit_code) << "stderr: " << r.err << "stdout: " << r.out;
    const std::string& where = on_stdout ? r.out : r.err;
    EXPECT_NE(where.find(fragment), std::string::npos)
        << "wanted '" << fragment << "' on " << (on_stdout ? "stdout" : "stderr") << "; stderr: " << r.err << "stdout: " << r.out;
    if (row.exit_code != 0 && !on_stdout) {
      EXPECT_TRUE(r.err.rfind("poolgrad ", 0) == 0 || r.err.rfind("poolgrad: ", 0) == 0)
          << "the error line starts 'poolgrad CMD: ' (or 'poolgrad: ' before any command): " << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
    }
    for (const fs::path& k : kept) EXPECT_EQ(slurp(k), keep_bytes) << k << " was changed by a failed run";
    for (const auto& entry : fs::directory_iterator(dir))
      EXPECT_EQ(entry.path().filename().string().find(".poolgrad-"), std::string::npos)
          << "a temporary was left behind: " << entry.path();
  }
  fs::remove_all(base);
}

}  // namespace
}  // namespace pg
