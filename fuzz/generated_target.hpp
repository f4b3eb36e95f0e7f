// The part of a campaign Target that does not depend on the op: one registry variant on one kind
// of backend, cases drawn from one RapidCheck generator, discarded where the variant's supports()
// says no, shrunk greedily with RapidCheck's own shrinks, and a verified case turned into a Trial
// (with its case file on failure). fuzz/pool_target.cpp and fuzz/conv_target.cpp derive from it
// and say only how one case of their op is verified and tagged.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/case_file.hpp"
#include "fuzz/rapidcheck_lock.hpp"
#include "fuzz/target.hpp"
#include "src/harness/case_phases.hpp"
#include "src/harness/verify.hpp"

namespace pg::fuzz {

// The Trial of one case: `run` verifies it (the op's run_and_verify, which must not write a
// failure file); pass: `tags()` are its coverage tags; fail: the report and `file` (its
// backend, signature, report and replay filled in here) as the case file. An exception from
// `run` (data the dtype cannot hold, a GPU out of memory while preparing) fails the case and
// the campaign goes on.
Trial verified_trial(const Backend& b, CaseFile file, const std::string& replay, const std::function<Outcome()>& run,
                     const std::function<std::vector<std::string>()>& tags);

// A case outside what the variant supports, and why.
Trial discarded_trial(const std::string& why);

// V: the registry record (Variant, ConvVariant); Case: {problem, data}, what `gen` draws.
// `v` must outlive the target (registry variants live for the whole process).
template <class V, class Case>
class GeneratedTarget : public Target {
 public:
  GeneratedTarget(const V& v, BackendKind kind, rc::Gen<Case> gen) : v_(v), kind_(kind), gen_(std::move(gen)) {}

  std::string variant() const final { return v_.name; }
  BackendKind backend_kind() const final { return kind_; }

  std::unique_ptr<DrawnCase> draw(const rc::Random& random) const final {
    const PhaseScope phase(Phase::draw);
    auto d = std::make_unique<Drawn>();
    const auto lock = lock_rapidcheck();
    d->c = gen_(random).value();
    return d;
  }

  Trial run(const DrawnCase& c, Backend& b) const final { return check(static_cast<const Drawn&>(c).c, b); }

  Trial shrink(const rc::Random& random, Backend& b, const std::string& signature, int max_runs,
               const std::atomic<bool>& stop) const final {
    std::optional<rc::Shrinkable<Case>> current;
    Case c;
    {
      const auto lock = lock_rapidcheck();
      current = gen_(random);
      c = current->value();
    }
    Trial best = check(c, b);
    if (best.verdict != Trial::Verdict::fail || best.signature != signature) return best;
    // Greedy: take the first shrink that still fails the same way, then shrink that, until no
    // shrink does or the budget is spent.
    int runs = 1;
    for (bool smaller = true; smaller && runs < max_runs && !stop;) {
      smaller = false;
      rc::Seq<rc::Shrinkable<Case>> shrinks;
      {
        const auto lock = lock_rapidcheck();
        shrinks = current->shrinks();
      }
      while (runs < max_runs && !stop) {
        rc::Maybe<rc::Shrinkable<Case>> next;
        {
          const auto lock = lock_rapidcheck();
          next = shrinks.next();
          if (!next) break;
          c = next->value();
        }
        ++runs;
        Trial t = check(c, b);
        if (t.verdict == Trial::Verdict::fail && t.signature == signature) {
          best = std::move(t);
          current = std::move(*next);
          smaller = true;
          break;
        }
      }
    }
    return best;
  }

 protected:
  // Verifies a case the variant supports on `b` (with `quiet`: no failure file, the campaign
  // writes one case file per distinct failure), through verified_trial.
  virtual Trial verify(const Case& c, Backend& b, const VerifyOptions& quiet) const = 0;

  const V& v_;

 private:
  struct Drawn final : DrawnCase {
    Case c;
  };

  Trial check(const Case& c, Backend& b) const {
    const Support s = v_.supports(c.problem, b.kind());
    if (!s.ok) return discarded_trial(s.why);
    VerifyOptions quiet;
    quiet.write_failure_file = false;
    return verify(c, b, quiet);
  }

  BackendKind kind_;
  rc::Gen<Case> gen_;
};

}  // namespace pg::fuzz
