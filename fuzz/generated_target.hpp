// The part of a campaign Target that does not depend on the op: one registry variant on one kind
// of backend, cases drawn from one RapidCheck generator, discarded where the variant's supports()
// says no, shrunk greedily with RapidCheck's own shrinks and then one problem parameter at a time
// (fuzz/simplify.hpp), a verified case turned into a Trial (with its case file on failure), and a
// case's oracle answer and tags kept in the case for every target of the same kind that runs it.
// fuzz/pool_target.cpp and fuzz/conv_target.cpp derive from it and say only how one case of their
// op is verified, tagged and simplified.
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

// The trial of one case, started: `start` prepares the case and launches its runs (the op's
// start_run_and_verify, which must not write a failure file); calling the result collects and
// checks. pass: `tags()` are its coverage tags; fail: the report and `file` (its backend,
// signature, report and replay filled in here) as the case file. An exception (data the dtype
// cannot hold, a GPU out of memory while preparing) fails the case and the campaign goes on.
StartedTrial started_trial(const Backend& b, CaseFile file, const std::string& replay,
                           const std::function<FinishVerify()>& start,
                           std::function<std::vector<std::string>()> tags);

// A case outside what the variant supports, and why.
Trial discarded_trial(const std::string& why);

// V: the registry record (Variant, ConvVariant); Case: {problem, data}, what `gen` draws; Oracle:
// the oracle's answer for a case (Expected, ConvExpected). `v` must outlive the target (registry
// variants live for the whole process).
template <class V, class Case, class Oracle>
class GeneratedTarget : public Target {
 public:
  GeneratedTarget(const V& v, BackendKind kind, rc::Gen<Case> gen) : v_(v), kind_(kind), gen_(std::move(gen)) {}

  std::string variant() const final { return v_.name; }
  BackendKind backend_kind() const final { return kind_; }

  bool shares_cases_with(const Target& other) const final {
    const auto* o = dynamic_cast<const GeneratedTarget*>(&other);
    return o && same_kind(o->v_);
  }

  std::unique_ptr<DrawnCase> draw(const rc::Random& random) const final {
    const PhaseScope phase(Phase::draw);
    auto d = std::make_unique<Drawn>();
    const auto lock = lock_rapidcheck();
    d->c = gen_(random).value();
    return d;
  }

  bool could_draw(const DrawnCase& c) const final { return reaches(static_cast<const Drawn&>(c).c); }

  StartedTrial start(const DrawnCase& c, Backend& b) const final {
    const Drawn& d = static_cast<const Drawn&>(c);
    return start_case(d.c, b, &d.answers);
  }

  Trial shrink(const Target& origin, const rc::Random& random, Backend& b, const std::string& signature, int max_runs,
               const std::atomic<bool>& stop) const final {
    const auto* from = dynamic_cast<const GeneratedTarget*>(&origin);
    const rc::Gen<Case>& gen = from ? from->gen_ : gen_;
    std::optional<rc::Shrinkable<Case>> current;
    Case c;
    {
      const auto lock = lock_rapidcheck();
      current = gen(random);
      c = current->value();
    }
    Trial best = check(c, b);
    if (best.verdict != Trial::Verdict::fail || best.signature != signature) return best;
    Case best_case = c;
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
          best_case = c;
          current = std::move(*next);
          smaller = true;
          break;
        }
      }
    }
    // Then the problem itself, one parameter at a time (fuzz/simplify.hpp), greedily the same
    // way: where RapidCheck's walk stopped depends on the failure it started from.
    for (bool smaller = true; smaller && runs < max_runs && !stop;) {
      smaller = false;
      for (Case& s : simpler_cases(best_case)) {
        if (runs >= max_runs || stop) break;
        ++runs;
        Trial t = check(s, b);
        if (t.verdict == Trial::Verdict::fail && t.signature == signature) {
          best = std::move(t);
          best_case = std::move(s);
          smaller = true;
          break;
        }
      }
    }
    return best;
  }

 protected:
  // What every run of one case shares: the oracle's answer and the coverage tags, each made by
  // the first run that needs it.
  struct Answers {
    std::shared_ptr<const Oracle> oracle;
    std::optional<std::vector<std::string>> tags;
  };

  // Whether `other`'s cases are of this variant's kind (same op and inputs): its oracle answer
  // and tags are then this variant's too.
  virtual bool same_kind(const V& other) const = 0;
  // Whether this target's generator could have drawn the case's sizes (fuzz/problem_gen.hpp).
  virtual bool reaches(const Case& c) const = 0;
  // Starts verifying a case the variant supports on `b` (with `quiet`: no failure file, the
  // campaign writes one case file per distinct failure); *oracle is the case's answer, computed
  // there when empty.
  virtual FinishVerify start_verify(const Case& c, std::shared_ptr<const Oracle>* oracle, Backend& b,
                                    const VerifyOptions& quiet) const = 0;
  // The case's coverage tags (`oracle`: its answer, whose data the tags may look at).
  virtual std::vector<std::string> tags(const Case& c, const Oracle* oracle) const = 0;
  // Problems one step simpler than p (fuzz/simplify.hpp), in the order to try them.
  virtual std::vector<decltype(Case::problem)> simpler(const decltype(Case::problem)& p) const = 0;
  // The case as a case file holds it (backend, signature and report are filled in later), and
  // its replay line on `b`.
  virtual CaseFile case_file(const Case& c) const = 0;
  virtual std::string replay(const Case& c, const Backend& b) const = 0;

  const V& v_;

 private:
  struct Drawn final : DrawnCase {
    Case c;
    mutable Answers answers;
  };

  StartedTrial start_case(const Case& c, Backend& b, Answers* answers) const {
    const Support s = v_.supports(c.problem, b.kind());
    if (!s.ok) return [t = discarded_trial(s.why)] { return t; };
    VerifyOptions quiet;
    quiet.write_failure_file = false;
    const bool unanswered = !answers->oracle;
    StartedTrial started = started_trial(
        b, case_file(c), replay(c, b), [&] { return start_verify(c, &answers->oracle, b, quiet); },
        [this, &c, answers] {
          if (!answers->tags) answers->tags = tags(c, answers->oracle.get());
          return *answers->tags;
        });
    const bool answered = unanswered && answers->oracle;
    return [started = std::move(started), answered] {
      Trial t = started();
      t.answered_oracle = answered;
      return t;
    };
  }

  // Cases one step simpler than c: its simpler problems on its data, then its problem on small
  // integers (DataKind::ints) where it has other data (special values, reals, foreign indices),
  // which a failure that does not need them is easier to read on.
  std::vector<Case> simpler_cases(const Case& c) const {
    std::vector<Case> out;
    for (auto& p : simpler(c.problem)) out.push_back({std::move(p), c.data});
    if (c.data.kind != DataKind::ints) {
      out.push_back(c);
      out.back().data.kind = DataKind::ints;
    }
    return out;
  }

  // One case alone, as shrinking runs it (a shrink outside the domain is a discard: not taken).
  Trial check(const Case& c, Backend& b) const {
    Answers answers;
    return start_case(c, b, &answers)();
  }

  BackendKind kind_;
  rc::Gen<Case> gen_;
};

}  // namespace pg::fuzz
