// The benchmark engine behind both `pool_bench` and `poolgrad bench`: Google Benchmark over
// rows x registered variants on one backend.
//
// Each (variant, row) is first verified through run_and_verify on the row's full problem, and
// the run it verified is the one timed; a wrong variant is skipped with the failure as its
// error: only correct variants get a time. The data and the oracle's answer are computed once
// per row, on one sample, and repeated over the batch; the run is
// prepared and verified once per benchmark, not on each of Google Benchmark's calls.
// Timing: GPU events around a batch of back-to-back launches (UseManualTime), per launch, the
// batch replayed from a GPU graph or issued per batch (bench/timing.hpp; the report's context
// says which, its `graph` counter which benchmarks were replayed).
// Counters: GB/s on the variant's minimal bytes (every input read once, dx written once) and
// that as % of a device-to-device copy measured at the start of the same run. Each run's label
// is its problem line (to_string), so `poolgrad select` can class it without knowing the suite.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/rows.hpp"
#include "src/model/backend.hpp"
#include "src/harness/registry.hpp"
#include "src/harness/verify.hpp"

namespace pg::bench {

// The inputs and the oracle's answer of a full-size problem, computed on one sample (the batch cut
// to 1) and repeated over the batch: the batch is the outermost dimension in both layouts, every
// (n, c) plane is computed alone and per-plane indices do not depend on n, so the repeated tensors
// are a valid case of the full problem and the oracle's answer (dx, bound terms) for it. Problems
// whose indices depend on n (ONNX's global formats) get the whole oracle (sample_repeats: false).
bool sample_repeats(const Problem& p);
std::shared_ptr<const Expected> sample_expected(const Problem& p, const DataSpec& spec);

// Opens the first GPU (or the CPU backend), measures the copy ceiling and adds the report's
// context: device, date, commit, copy ceiling, suite and command. Call after
// benchmark::Initialize. Returns false, with *why set, when the GPU asked for is not there.
bool open_backend(BackendKind kind, const std::string& suite, const std::string& command, std::string* why);
Backend& backend();
double copy_ceiling_gbps();

// The two copies every report carries: through the runtime (the ceiling) and poolgrad's own
// 16-byte copy kernel.
void register_copy_benchmarks();

// Every variant that supports the row on the backend and that `wanted` admits (all when empty),
// for every row; stored-index rows must use per-plane indices (the timed batch repeats one
// sample). Returns how many benchmarks were registered.
int register_rows(const std::vector<Row>& rows, const std::function<bool(const Variant&, const Row&)>& wanted);

// After this many seconds from now, benchmarks not yet started are skipped with that reason (so
// the report stays whole when a device call has a time limit). 0: no limit.
void set_time_budget(double seconds);

// Runs what was registered. With `progress`, one line per finished benchmark goes to stderr
// ("[k/n] name: ms, % of copy; wall seconds and where they went") instead of Google Benchmark's
// console table, and after each row's last benchmark a "row done" line with the row's wall time.
void run_registered(bool progress, int total);

// The git commit the binary was built from (`git describe --always --dirty` at build time).
const char* build_commit();

}  // namespace pg::bench
