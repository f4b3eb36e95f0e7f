// What a fuzz campaign fuzzes: one kernel variant on one kind of backend. A target draws and
// verifies the case a random source selects, shrinks a failing one, and hands back each failure
// with its case file. The campaign (fuzz/campaign.hpp) schedules targets over threads and devices
// and keeps the counts; it never looks inside a case: pooling variants join it through
// fuzz/pool_target.hpp, conv backward-data variants through fuzz/conv_target.hpp.
#pragma once

#include <rapidcheck.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/model/backend.hpp"

namespace pg::fuzz {

struct Trial {
  enum class Verdict { pass, fail, discard } verdict = Verdict::pass;
  std::vector<std::string> tags;  // pass: the coverage tags the case reached
  std::string why;                // discard: why the variant does not take the case
  std::string signature;          // fail: the kind of failure, without numbers
  std::string message;            // fail: the report, replay line included
  nlohmann::json case_file;       // fail: the case as `poolgrad replay FILE` reads it
  // fail: the backend itself broke (a GPU runtime error, after which every launch on that device
  // fails): the campaign stops using it instead of shrinking and counting its echoes
  bool backend_lost = false;
  // This run computed the case's oracle answer; the other runs of the case reuse it.
  bool answered_oracle = false;
};

// A trial started on a backend and not yet read back: calling it collects and checks.
using StartedTrial = std::function<Trial()>;

// A case as a target drew it, for the same target (or one of the same type) to run.
class DrawnCase {
 public:
  virtual ~DrawnCase() = default;
};

class Target {
 public:
  virtual ~Target() = default;
  virtual std::string variant() const = 0;
  virtual BackendKind backend_kind() const = 0;
  // Every tag a long run over this target's domain must reach (reported as "reached of admitted").
  virtual std::vector<std::string> admitted_tags() const = 0;
  // Whether a case `other` draws is a case of this target's kind (the same op, the same inputs):
  // a campaign then groups them, runs each case of the group on every member that supports it,
  // and computes its oracle answer once for all of them.
  virtual bool shares_cases_with(const Target& other) const = 0;
  // Whether this target's own generator could have drawn `c`, a case a target it shares cases
  // with drew (its sizes within this target's reach): a campaign runs such a case here only then,
  // so the cases a lane runs stay the sizes its own generator draws.
  virtual bool could_draw(const DrawnCase& c) const = 0;
  // The case `random` selects: same random, same case. Takes the RapidCheck lock
  // (fuzz/rapidcheck_lock.hpp), so a campaign draws on a thread of its own ahead of the jobs.
  virtual std::unique_ptr<DrawnCase> draw(const rc::Random& random) const = 0;
  // Starts verifying, on `b`, a case drawn by this target or one it shares cases with: prepares it
  // (its oracle answer computed by the first run of the case, kept in the case for the others),
  // launches and queues the read backs. Several may be started on one backend (a batch) before
  // the first is called, which waits for all of them once. One thread at a time per case; the
  // case must outlive the started trial.
  virtual StartedTrial start(const DrawnCase& c, Backend& b) const = 0;
  // Verifies a case on `b`, alone.
  Trial run(const DrawnCase& c, Backend& b) const { return start(c, b)(); }
  // The smallest case reachable from the case `origin` (this target or one it shares cases with)
  // draws from `random` by shrinking steps (origin's) that keep a failure of the same signature
  // on `b`; returns that case's failing trial. Stops early (keeping the smallest found so far)
  // after `max_runs` verifications or when `stop` is set.
  virtual Trial shrink(const Target& origin, const rc::Random& random, Backend& b, const std::string& signature,
                       int max_runs, const std::atomic<bool>& stop) const = 0;
};

using Targets = std::vector<std::shared_ptr<const Target>>;

}  // namespace pg::fuzz
