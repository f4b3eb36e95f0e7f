#include "fuzz/pool_target.hpp"

#include "fuzz/coverage.hpp"
#include "fuzz/generated_target.hpp"
#include "fuzz/simplify.hpp"
#include "fuzz/problem_gen.hpp"

namespace pg::fuzz {
namespace {

struct PoolCase {
  Problem problem;
  DataSpec data;
};

class PoolTarget final : public GeneratedTarget<Variant, PoolCase, Expected> {
 public:
  PoolTarget(const Variant& v, BackendKind kind)
      : GeneratedTarget(v, kind, rc::gen::exec([vp = &v] {
          return PoolCase{*problem(vp->op, vp->domain), *data_spec(vp->inputs)};
        })) {}

  std::vector<std::string> admitted_tags() const override { return fuzz::admitted_tags(v_); }

 private:
  bool same_kind(const Variant& o) const override { return o.op == v_.op && o.inputs == v_.inputs; }
  bool reaches(const PoolCase& c) const override { return generator_reaches(v_.domain, c.problem); }
  FinishVerify start_verify(const PoolCase& c, std::shared_ptr<const Expected>* oracle, Backend& b,
                            const VerifyOptions& quiet) const override {
    return start_run_and_verify(b, v_, c.problem, c.data, oracle, quiet);
  }
  std::vector<std::string> tags(const PoolCase& c, const Expected* oracle) const override {
    return observed_tags(c.problem, c.data, v_.inputs, oracle ? &oracle->data.x : nullptr);
  }
  std::vector<Problem> simpler(const Problem& p) const override { return simpler_problems(p); }
  CaseFile case_file(const PoolCase& c) const override {
    return {"pool", v_.name, "", to_string(c.problem), c.data, v_.plugin};
  }
  std::string replay(const PoolCase& c, const Backend& b) const override {
    return replay_command(c.problem, v_, b, c.data);
  }
};

}  // namespace

std::shared_ptr<const Target> pool_target(const Variant& v, BackendKind kind) {
  return std::make_shared<PoolTarget>(v, kind);
}

}  // namespace pg::fuzz
