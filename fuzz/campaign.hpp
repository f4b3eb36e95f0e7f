// A fuzz campaign: every target (variant x backend kind) on every selected device, cases drawn
// deterministically, verified on `jobs` threads, until a time or case limit or a stop request.
//
// Lanes. A CPU target is one lane; a GPU target is one lane per selected device. Case k of a
// lane is drawn from a random source seeded by (seed, lane name, k * shard_count + shard): the
// same seed and shard give the same cases, and the shards of a campaign split one case sequence
// per lane without overlap (shards 0..N-1 with --cases C each run what one shard with C * N runs).
//
// Threads. Each job thread owns a CPU backend and, when GPU lanes run, a GPU backend for device
// (job mod device count), made on that thread; it runs the oracle on the host and the case on
// whichever of its backends the lane names. A job gives the CPU executor (kernels/common/exec.hpp)
// cores / jobs threads, but at least 2: the atomic variants must still race on the CPU (a planted
// plain add instead of an atomic one goes unseen on one thread), so with jobs = cores a case of
// 2048 work items or more (the executor's split point) briefly runs two threads on one core.
// Jobs pick the lane that has had the least thread time so far: slow variants get the same time
// as fast ones.
//
// Failures. A failing case is de-duplicated by (lane, signature); a new one is shrunk (RapidCheck's
// shrinks, greedily, keeping the signature) and written to the corpus directory as a case file
// (fuzz/case_file.hpp) named variant-backend-signature hash; the campaign goes on. A failure
// that broke its backend (a GPU runtime error) is saved unshrunk and ends that device's lanes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fuzz/campaign_report.hpp"
#include "fuzz/target.hpp"

namespace pg::fuzz {

struct CampaignOptions {
  Targets targets;
  std::vector<int> gpu_devices;  // a GPU target runs on each of these (none listed: it does not run)
  uint64_t seed = 1;
  int shard = 0, shard_count = 1;
  double seconds = 60;  // 0: no time limit
  int64_t cases = 0;    // cases drawn per lane (a discarded one counts); 0: no case limit (set one of the two)
  int jobs = 1;
  std::string corpus_dir = "poolgrad-cases";
  // Verifications spent shrinking one failure (about a millisecond each for fuzz-sized cases).
  // Shrinking also ends where no single step keeps the failure: the data is drawn from the shape
  // and a seed, so a failure that needs a NaN or a tie in one place can stay large (a planted
  // tie-rule bug: 2,000 reruns left its NaN cases as large as 400 did).
  int max_shrink_runs = 400;
  // Called about every `status_every_s` with a one-line summary (elapsed, cases, cases/s,
  // failures, busiest and slowest lane), and with each new failure's shrunk report and case file
  // path (several lines); one call at a time. Empty: nothing is said.
  std::function<void(const std::string&)> status;
  double status_every_s = 1;
  const std::atomic<bool>* stop = nullptr;  // set from outside (Ctrl-C): finish the cases in flight and return
};

// Throws pg::Error when a backend cannot be made (a device that is not there).
CampaignReport run_campaign(const CampaignOptions& o);

}  // namespace pg::fuzz
