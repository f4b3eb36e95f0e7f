// The find step (`poolgrad tune`, `--variant auto --tune`): every variant that supports a problem
// is verified on it and timed, on the user's backend and exact problem, as cuDNN's benchmark mode
// and MIOpen's Find do; the fastest verified one goes into the user perf-db (src/harness/perfdb.hpp),
// where every later --variant auto finds it first.
//
// Each variant is verified through run_and_verify on the problem and the run it verified is the
// one timed (as the benchmark engine does): GPU events around batches of back-to-back launches of
// about 1 ms, each replayed from a GPU graph (bench/timing.hpp), until `min_time` seconds and at
// least `repetitions` batches; the time is the median batch's, per launch. A vendor library's
// variant (cudnn.*) is timed beside the others as a comparator and never recorded as the choice.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "src/model/backend.hpp"
#include "src/harness/perfdb.hpp"
#include "src/model/problem.hpp"
#include "src/harness/registry.hpp"

namespace pg::bench {

struct TuneOptions {
  double min_time = 0.1;   // seconds each variant is timed, at least
  int repetitions = 5;     // timed batches per variant, at least
  std::function<bool(const Variant&)> wanted;  // empty: every variant that supports the problem
};

struct TunedVariant {
  const Variant* variant = nullptr;
  double ms = 0;          // median batch, per launch
  int batches = 0;
  std::string failure;    // not verified: the report's first line (then ms is 0)
};

struct TuneResult {
  std::vector<TunedVariant> timed;   // the verified ones, fastest first
  std::vector<TunedVariant> failed;  // those that disagreed with the oracle
  const Variant* best = nullptr;     // the fastest verified variant that is not a vendor library's
};

// `progress` gets one line per variant. Throws what the oracle throws (host memory).
TuneResult tune(Backend& b, const Problem& p, const TuneOptions& o, const std::function<void(const std::string&)>& progress);

// The perf-db entry the result makes (best must be set).
PerfDbEntry perfdb_entry(const Backend& b, const Problem& p, const TuneResult& r);

// Tunes p and records the choice in the perf-db at `perfdb`; the lines go to stderr. Returns the
// result (its `failed` list names any variant that disagreed with the oracle).
TuneResult tune_and_record(Backend& b, const Problem& p, const TuneOptions& o, const std::string& perfdb);

}  // namespace pg::bench
