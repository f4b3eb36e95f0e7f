#include "fuzz/pool_target.hpp"

#include <optional>

#include "fuzz/case_file.hpp"
#include "fuzz/coverage.hpp"
#include "fuzz/problem_gen.hpp"
#include "fuzz/rapidcheck_lock.hpp"
#include "src/verify.hpp"

namespace pg::fuzz {
namespace {

struct PoolCase {
  Problem problem;
  DataSpec data;
};

class PoolTarget final : public Target {
 public:
  PoolTarget(const Variant& v, BackendKind kind)
      : v_(v), kind_(kind), gen_(rc::gen::exec([vp = &v] {
          return PoolCase{*problem(vp->op, vp->domain), *data_spec(vp->inputs)};
        })) {}

  std::string variant() const override { return v_.name; }
  BackendKind backend_kind() const override { return kind_; }
  std::vector<std::string> admitted_tags() const override { return fuzz::admitted_tags(v_); }

  Trial run(const rc::Random& random, Backend& b) const override {
    PoolCase c;
    {
      const auto lock = lock_rapidcheck();
      c = gen_(random).value();
    }
    return verify(c, b);
  }

  Trial shrink(const rc::Random& random, Backend& b, const std::string& signature, int max_runs,
               const std::atomic<bool>& stop) const override {
    std::optional<rc::Shrinkable<PoolCase>> current;
    PoolCase c;
    {
      const auto lock = lock_rapidcheck();
      current = gen_(random);
      c = current->value();
    }
    Trial best = verify(c, b);
    if (best.verdict != Trial::Verdict::fail || best.signature != signature) return best;
    // Greedy: take the first shrink that still fails the same way, then shrink that, until no
    // shrink does or the budget is spent.
    int runs = 1;
    for (bool smaller = true; smaller && runs < max_runs && !stop;) {
      smaller = false;
      rc::Seq<rc::Shrinkable<PoolCase>> shrinks;
      {
        const auto lock = lock_rapidcheck();
        shrinks = current->shrinks();
      }
      while (runs < max_runs && !stop) {
        rc::Maybe<rc::Shrinkable<PoolCase>> next;
        {
          const auto lock = lock_rapidcheck();
          next = shrinks.next();
          if (!next) break;
          c = next->value();
        }
        ++runs;
        Trial t = verify(c, b);
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

 private:
  Trial verify(const PoolCase& c, Backend& b) const {
    Trial t;
    const Support s = v_.supports(c.problem, b.kind());
    if (!s.ok) {
      t.verdict = Trial::Verdict::discard;
      t.why = s.why;
      return t;
    }
    VerifyOptions opt;
    opt.write_failure_file = false;  // the campaign writes one case file per distinct failure
    Outcome o;
    try {
      o = run_and_verify(b, v_, c.problem, c.data, opt);
    } catch (const std::exception& e) {
      // Preparing the case failed (data the dtype cannot hold, a GPU out of memory): the case
      // fails and the campaign goes on.
      o.status = Status::fail;
      o.signature = "threw while preparing the case";
      o.replay = replay_command(c.problem, v_, b, c.data);
      o.message = "FAIL " + v_.name + " on " + b.name() + ": " + e.what() + "\n  problem: " + to_string(c.problem) +
                  "\n  replay: " + o.replay;
    }
    if (o.status == Status::pass) {
      t.tags = observed_tags(c.problem, c.data, v_.inputs);
      return t;
    }
    t.verdict = Trial::Verdict::fail;
    t.backend_lost = b.kind() == BackendKind::gpu && o.signature == "the run failed";
    t.signature = o.signature;
    t.message = o.message;
    t.case_file = pool_case_json({v_.name, b.name(), to_string(c.problem), c.data, v_.plugin}, o.signature, o.message, o.replay);
    return t;
  }

  const Variant& v_;
  BackendKind kind_;
  rc::Gen<PoolCase> gen_;
};

}  // namespace

std::shared_ptr<const Target> pool_target(const Variant& v, BackendKind kind) {
  return std::make_shared<PoolTarget>(v, kind);
}

}  // namespace pg::fuzz
