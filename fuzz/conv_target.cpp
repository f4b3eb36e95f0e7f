#include "fuzz/conv_target.hpp"

#include "fuzz/conv_coverage.hpp"
#include "fuzz/conv_problem_gen.hpp"
#include "fuzz/generated_target.hpp"
#include "src/harness/conv_verify.hpp"

namespace pg::fuzz {
namespace {

struct ConvCase {
  ConvProblem problem;
  DataSpec data;
};

class ConvTarget final : public GeneratedTarget<ConvVariant, ConvCase> {
 public:
  ConvTarget(const ConvVariant& v, BackendKind kind)
      : GeneratedTarget(v, kind, rc::gen::exec([vp = &v] { return ConvCase{*conv_problem(vp->domain), *conv_data_spec()}; })) {}

  std::vector<std::string> admitted_tags() const override { return conv_admitted_tags(v_); }

 private:
  Trial verify(const ConvCase& c, Backend& b, const VerifyOptions& quiet) const override {
    return verified_trial(
        b, {"conv", v_.name, "", conv_to_string(c.problem), c.data, ""}, conv_replay_command(c.problem, v_, b, c.data),
        [&] { return conv_run_and_verify(b, v_, c.problem, c.data, nullptr, quiet); },
        [&] { return conv_observed_tags(c.problem); });
  }
};

}  // namespace

std::shared_ptr<const Target> conv_target(const ConvVariant& v, BackendKind kind) {
  return std::make_shared<ConvTarget>(v, kind);
}

}  // namespace pg::fuzz
