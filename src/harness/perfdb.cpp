#include "src/harness/perfdb.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "src/model/invalid_input.hpp"

#ifndef POOLGRAD_VERSION
#define POOLGRAD_VERSION "unknown"
#endif

namespace pg {
namespace {

constexpr const char* kFormat = "poolgrad-perfdb/1";

std::string errno_text() { return std::strerror(errno); }

bool same_key(const PerfDbEntry& a, const PerfDbEntry& b) {
  return a.device == b.device && a.arch == b.arch && a.version == b.version && a.problem == b.problem;
}

PerfDbEntry entry_from_json(const nlohmann::json& j) {
  PerfDbEntry e;
  e.device = j.at("device").get<std::string>();
  e.arch = j.at("arch").get<std::string>();
  e.version = j.at("poolgrad").get<std::string>();
  e.problem = j.at("problem").get<std::string>();
  e.class_key = j.at("class").get<std::string>();
  e.variant = j.at("variant").get<std::string>();
  e.ms = j.at("ms").get<double>();
  for (const auto& t : j.at("timed")) e.timed.push_back({t.at("variant").get<std::string>(), t.at("ms").get<double>()});
  e.date = j.value("date", "");
  if (e.problem.empty() || e.variant.empty() || !(e.ms > 0)) throw std::runtime_error("an entry without problem, variant or time");
  return e;
}

nlohmann::ordered_json entry_to_json(const PerfDbEntry& e) {
  nlohmann::ordered_json timed = nlohmann::ordered_json::array();
  for (const TunedTime& t : e.timed) timed.push_back({{"variant", t.variant}, {"ms", t.ms}});
  return {{"device", e.device}, {"arch", e.arch}, {"poolgrad", e.version}, {"problem", e.problem},
          {"class", e.class_key}, {"variant", e.variant}, {"ms", e.ms}, {"timed", timed}, {"date", e.date}};
}

// The entries of `text`, or a reason it is not a perf-db.
bool parse_perfdb(const std::string& text, std::vector<PerfDbEntry>* entries, std::string* why) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) return *why = "not JSON", false;
  if (!doc.is_object() || doc.value("format", "") != kFormat || !doc.contains("entries") || !doc["entries"].is_array())
    return *why = std::string("not a ") + kFormat + " file", false;
  try {
    for (const auto& j : doc["entries"]) entries->push_back(entry_from_json(j));
  } catch (const std::exception& e) {
    entries->clear();
    return *why = std::string("a malformed entry: ") + e.what(), false;
  }
  return true;
}

std::string read_all(int fd) {
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

void make_parent_dirs(const std::string& path) {
  for (size_t at = path.find('/', 1); at != std::string::npos; at = path.find('/', at + 1)) {
    const std::string dir = path.substr(0, at);
    if (mkdir(dir.c_str(), 0755) == 0) continue;
    if (errno != EEXIST) throw InvalidInput("perf-db " + path + ": cannot create " + dir + ": " + errno_text());
    struct stat st;
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      throw InvalidInput("perf-db " + path + ": " + dir + " is not a directory");
  }
}

// The lock file beside the perf-db: its flock serializes the read-modify-replace of every writer.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw InvalidInput("perf-db lock " + path + " cannot be opened: " + errno_text());
    while (flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) {
        close(fd_);
        throw Error("perf-db lock " + path + " cannot be taken: " + errno_text());
      }
  }
  ~FileLock() { close(fd_); }  // closing the descriptor releases the lock
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

std::string utc_stamp() {
  char buf[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", std::gmtime(&now));
  return buf;
}

void write_fully(int fd, const std::string& text, const std::string& what) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(what + ": write failed: " + errno_text());
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) throw Error(what + ": fsync failed: " + errno_text());
}

}  // namespace

const char* poolgrad_version() { return POOLGRAD_VERSION; }

std::string perfdb_path(const std::string& option) {
  if (!option.empty()) return option;
  if (const char* env = std::getenv("POOLGRAD_PERFDB"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/poolgrad/perfdb.json";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/poolgrad/perfdb.json";
  return "";
}

PerfDb load_perfdb(const std::string& path) {
  PerfDb db;
  db.path = path;
  if (path.empty()) return db;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) db.warning = "perf-db " + path + " cannot be read (" + errno_text() + "): ignored";
    return db;
  }
  const std::string text = read_all(fd);
  close(fd);
  std::string why;
  if (!parse_perfdb(text, &db.entries, &why))
    db.warning = "perf-db " + path + " is damaged (" + why + "): ignored; the next tune keeps it as " + path +
                 ".damaged-TIME and starts a new one";
  return db;
}

std::string record_perfdb(const std::string& path, const std::vector<PerfDbEntry>& add) {
  if (path.empty()) throw InvalidInput("no perf-db path: give --perfdb FILE or set POOLGRAD_PERFDB, XDG_CACHE_HOME or HOME");
  make_parent_dirs(path);
  FileLock lock(path + ".lock");
  std::vector<PerfDbEntry> entries;
  std::string warning;
  if (const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    const std::string text = read_all(fd);
    close(fd);
    std::string why;
    if (!parse_perfdb(text, &entries, &why)) {
      const std::string aside = path + ".damaged-" + utc_stamp();
      if (rename(path.c_str(), aside.c_str()) != 0)
        throw InvalidInput("perf-db " + path + " is damaged (" + why + ") and cannot be moved aside: " + errno_text());
      warning = "perf-db " + path + " was damaged (" + why + "): kept as " + aside + ", a new one started";
    }
  } else if (errno != ENOENT) {
    throw InvalidInput("perf-db " + path + " cannot be read: " + errno_text());
  }
  for (const PerfDbEntry& e : add) {
    bool replaced = false;
    for (PerfDbEntry& old : entries)
      if (same_key(old, e)) old = e, replaced = true;
    if (!replaced) entries.push_back(e);
  }
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const PerfDbEntry& e : entries) list.push_back(entry_to_json(e));
  const nlohmann::ordered_json doc = {{"format", kFormat}, {"entries", list}};

  const std::string tmp = path + ".tmp-" + std::to_string(getpid());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw InvalidInput("perf-db " + path + ": cannot write " + tmp + ": " + errno_text());
  try {
    write_fully(fd, doc.dump(1) + "\n", "perf-db " + tmp);
  } catch (...) {
    close(fd);
    unlink(tmp.c_str());
    throw;
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    unlink(tmp.c_str());
    throw InvalidInput("perf-db " + path + ": cannot replace it: " + why);
  }
  return warning;
}

void check_perfdb_writable(const std::string& path) {
  if (path.empty()) throw InvalidInput("no perf-db path: give --perfdb FILE or set POOLGRAD_PERFDB, XDG_CACHE_HOME or HOME");
  make_parent_dirs(path);
  const int fd = open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw InvalidInput("perf-db lock " + path + ".lock cannot be opened: " + errno_text());
  close(fd);
  if (access(path.c_str(), F_OK) == 0 && access(path.c_str(), R_OK | W_OK) != 0)
    throw InvalidInput("perf-db " + path + " cannot be read and written: " + errno_text());
}

const PerfDbEntry* find_tuned(const PerfDb& db, const std::string& device, const std::string& arch,
                              const std::string& problem) {
  for (const PerfDbEntry& e : db.entries)
    if (e.device == device && e.arch == arch && e.version == poolgrad_version() && e.problem == problem) return &e;
  return nullptr;
}

std::vector<const PerfDbEntry*> find_tuned_class(const PerfDb& db, const std::string& device, const std::string& arch,
                                                 const std::string& class_key) {
  std::vector<const PerfDbEntry*> found;
  for (const PerfDbEntry& e : db.entries)
    if (e.device == device && e.arch == arch && e.version == poolgrad_version() && e.class_key == class_key)
      found.push_back(&e);
  return found;
}

}  // namespace pg
