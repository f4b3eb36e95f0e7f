// A fuzz campaign: every target (variant x backend kind) on every selected device, cases drawn
// deterministically, verified on `jobs` threads, until a time or case limit or a stop request.
//
// Lanes. A CPU target is one lane; a GPU target is one lane per selected device. Case k of a
// lane is drawn by its target from a random source seeded by (seed, lane name, k * shard_count +
// shard): the same seed and shard give the same cases, and the shards of a campaign split one
// case sequence per lane without overlap (shards 0..N-1 with --cases C each run what one shard
// with C * N runs).
//
// Groups. Lanes whose targets share cases (Target::shares_cases_with: the same op and inputs,
// e.g. every max variant that reads stored indices, or every conv variant) form a group per GPU,
// the CPU lanes joining the first GPU's groups (groups of their own when no GPU lane runs). A case
// a lane draws also runs on each other lane of its group that could have drawn it (Target::
// could_draw: its own sizes, so a lane never takes on a far-reaching lane's large cases) and that
// supports it, with its oracle answer and tags computed once for all of them ("by others" in the
// report); a lane stops taking others' cases while they have had more than `share` of its time
// (half by default), so the rest goes to the sizes its own generator draws.
//
// Threads. Each job thread owns a CPU backend and, when GPU lanes run, a GPU backend for device
// (job mod device count), made on that thread. Jobs pick the lane that has had the least thread
// time so far (its own cases and others' together): slow variants get the same time as fast
// ones. A job takes a batch of the lane's cases (up to `batch`), starts each on the lane and its
// group's takers (prepared, launched, read backs queued), then finishes them in order: on a GPU
// the first finish waits for the whole batch once. The oracle runs on the host, once per case.
// A job gives the CPU executor (kernels/common/exec.hpp) cores / jobs threads, but at least 2:
// the atomic variants must still race on the CPU (a planted plain add instead of an atomic one
// goes unseen on one thread), so with jobs = cores a case of 2048 work items or more (the
// executor's split point) briefly runs two threads on one core.
//
// Failures. Each run of a batch is its own trial. A failing case is de-duplicated by (lane,
// signature); a new one is shrunk alone (RapidCheck's shrinks, greedily, keeping the signature)
// and written to the corpus directory as a case file (fuzz/case_file.hpp) named
// variant-backend-signature hash, which replays alone; the campaign goes on. A failure that broke
// its backend (a GPU runtime error) ends that device's lanes; the batch shared one wait, so every
// case of it that saw the error is saved unshrunk (named with its case index), and replaying each
// alone shows which one broke the device.
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
  // Cases of a group a job starts before it finishes them: on a GPU one wait for all of them
  // instead of one per case. 1: each case alone.
  int batch = 8;
  // The most of a lane's time that goes to cases other lanes of its group drew (0 to 0.9): more
  // runs on shared oracle answers, fewer of the lane's own sizes. 0: each lane runs only its own.
  double share = 0.5;
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
