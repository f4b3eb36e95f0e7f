#include "fuzz/conv_target.hpp"

#include "fuzz/conv_coverage.hpp"
#include "fuzz/conv_problem_gen.hpp"
#include "fuzz/generated_target.hpp"
#include "fuzz/simplify.hpp"
#include "src/harness/conv_verify.hpp"

namespace pg::fuzz {
namespace {

struct ConvCase {
  ConvProblem problem;
  DataSpec data;
};

class ConvTarget final : public GeneratedTarget<ConvVariant, ConvCase, ConvExpected> {
 public:
  ConvTarget(const ConvVariant& v, BackendKind kind)
      : GeneratedTarget(v, kind, rc::gen::exec([vp = &v] { return ConvCase{*conv_problem(vp->domain), *conv_data_spec()}; })) {}

  std::vector<std::string> admitted_tags() const override { return conv_admitted_tags(v_); }

 private:
  bool same_kind(const ConvVariant&) const override { return true; }
  bool reaches(const ConvCase& c) const override { return conv_generator_reaches(v_.domain, c.problem); }
  FinishVerify start_verify(const ConvCase& c, std::shared_ptr<const ConvExpected>* oracle, Backend& b,
                            const VerifyOptions& quiet) const override {
    return start_conv_run_and_verify(b, v_, c.problem, c.data, oracle, quiet);
  }
  std::vector<std::string> tags(const ConvCase& c, const ConvExpected*) const override {
    return conv_observed_tags(c.problem);
  }
  std::vector<ConvProblem> simpler(const ConvProblem& p) const override { return simpler_conv_problems(p); }
  CaseFile case_file(const ConvCase& c) const override {
    return {"conv", v_.name, "", conv_to_string(c.problem), c.data, ""};
  }
  std::string replay(const ConvCase& c, const Backend& b) const override {
    return conv_replay_command(c.problem, v_, b, c.data);
  }
};

}  // namespace

std::shared_ptr<const Target> conv_target(const ConvVariant& v, BackendKind kind) {
  return std::make_shared<ConvTarget>(v, kind);
}

}  // namespace pg::fuzz
