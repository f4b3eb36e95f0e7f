// The user perf-db: what `poolgrad tune` measured on this machine, asked first by --variant auto
// (MIOpen's user perf-db over its system one; cuDNN's benchmark-mode cache, kept on disk).
//
// One JSON file ({"format": "poolgrad-perfdb/1", "entries": [...]}), one entry per (device, arch,
// poolgrad version, problem line): the variant that was fastest among those verified, and every
// variant's time. Where it lives: --perfdb FILE, else $POOLGRAD_PERFDB, else
// $XDG_CACHE_HOME/poolgrad/perfdb.json, else $HOME/.cache/poolgrad/perfdb.json.
//
// Writers never lose each other's entries: each takes an exclusive lock on FILE.lock, reads the
// file again under it, adds its entries and replaces the file by renaming a fully written
// temporary one over it, so a reader sees the old file or the new one, never half of one. A
// damaged file (not JSON, not a perf-db, a malformed entry) is reported and read as empty; the
// next write keeps it aside as FILE.damaged-TIME rather than destroy what it held.
#pragma once

#include <string>
#include <vector>

namespace pg {

struct TunedTime {
  std::string variant;
  double ms = 0;
};

struct PerfDbEntry {
  std::string device;     // DeviceInfo::name, e.g. "NVIDIA H100 80GB HBM3"
  std::string arch;       // "sm_90", "gfx90a", "cpu"
  std::string version;    // poolgrad's version (POOLGRAD_VERSION): another version's kernels differ
  std::string problem;    // to_string(problem): the exact key
  std::string class_key;  // problem_class(problem): the fallback key
  std::string variant;    // the fastest verified variant
  double ms = 0;          // its time
  std::vector<TunedTime> timed;  // every verified variant, fastest first
  std::string date;       // when it was tuned (UTC)
};

struct PerfDb {
  std::string path;
  std::vector<PerfDbEntry> entries;
  std::string warning;  // one line when the file was damaged or unreadable (then entries is empty)
};

// This build's version string, the perf-db's version key.
const char* poolgrad_version();

// The perf-db path: `option` (--perfdb) when not empty, else the environment's (above). Empty when
// no option, no POOLGRAD_PERFDB, no XDG_CACHE_HOME and no HOME are set.
std::string perfdb_path(const std::string& option);

// Reads the file. A missing file is an empty perf-db without a warning.
PerfDb load_perfdb(const std::string& path);

// Adds `add` (an entry with the key of an existing one replaces it) under the lock, creating the
// directory when needed. Returns a warning line when the old file was damaged and kept aside, else
// "". Throws InvalidInput naming the path when it cannot be written there (the path is the user's),
// Error when a write fails midway; the old file is untouched either way.
std::string record_perfdb(const std::string& path, const std::vector<PerfDbEntry>& add);

// Throws InvalidInput naming the path when the perf-db could not be written there (its directory
// cannot be made, its lock file cannot be opened): checked before a tune spends time measuring.
void check_perfdb_writable(const std::string& path);

// The entry for exactly this problem on this device and version; nullptr when none.
const PerfDbEntry* find_tuned(const PerfDb& db, const std::string& device, const std::string& arch,
                              const std::string& problem);
// The entries of the class on this device and version.
std::vector<const PerfDbEntry*> find_tuned_class(const PerfDb& db, const std::string& device, const std::string& arch,
                                                 const std::string& class_key);

}  // namespace pg
