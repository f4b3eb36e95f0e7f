#include "fuzz/pool_target.hpp"

#include "fuzz/coverage.hpp"
#include "fuzz/generated_target.hpp"
#include "fuzz/problem_gen.hpp"

namespace pg::fuzz {
namespace {

struct PoolCase {
  Problem problem;
  DataSpec data;
};

class PoolTarget final : public GeneratedTarget<Variant, PoolCase> {
 public:
  PoolTarget(const Variant& v, BackendKind kind)
      : GeneratedTarget(v, kind, rc::gen::exec([vp = &v] {
          return PoolCase{*problem(vp->op, vp->domain), *data_spec(vp->inputs)};
        })) {}

  std::vector<std::string> admitted_tags() const override { return fuzz::admitted_tags(v_); }

 private:
  Trial verify(const PoolCase& c, Backend& b, const VerifyOptions& quiet) const override {
    return verified_trial(
        b, {"pool", v_.name, "", to_string(c.problem), c.data, v_.plugin}, replay_command(c.problem, v_, b, c.data),
        [&] { return run_and_verify(b, v_, c.problem, c.data, quiet); },
        [&] { return observed_tags(c.problem, c.data, v_.inputs); });
  }
};

}  // namespace

std::shared_ptr<const Target> pool_target(const Variant& v, BackendKind kind) {
  return std::make_shared<PoolTarget>(v, kind);
}

}  // namespace pg::fuzz
