// conv_run_and_verify: "correct" for a conv backward-data variant, the same definition as
// pooling's (src/harness/verify.hpp) from the same pieces (src/harness/verify_common.hpp): data from the seed,
// the oracle's dx with per-element term counts and sums of |term|, dy and w uploaded into
// sentinel-banded buffers of their own, dx poisoned, the variant run, bands and inputs checked
// untouched, every element compared with the oracle's bound (or, for a variant whose error model
// is Winograd's, reference/conv_winograd_bound.hpp's), deterministic variants run twice
// and compared bitwise, a replay line on failure and a failure file.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/model/backend.hpp"
#include "reference/conv_winograd_bound.hpp"
#include "src/model/conv_problem.hpp"
#include "src/harness/conv_registry.hpp"
#include "src/harness/datagen.hpp"
#include "src/harness/verify.hpp"  // Status, Outcome, VerifyOptions

namespace pg {

std::string conv_replay_command(const ConvProblem& p, const ConvVariant& v, const Backend& b, const DataSpec& spec);

// The bound of a variant whose error model is not the direct sum's (reference/conv_winograd_bound.hpp);
// nothing for a direct one, which the oracle's term counts bound.
std::optional<ref::ConvBound> conv_model_bound(ConvErrorModel model, const ConvProblem& p, const std::vector<double>& dy,
                                               const std::vector<double>& w);

// The oracle's answer for one case, computed once and shared by every variant.
struct ConvExpected {
  ConvHostData data;
  std::vector<double> dx, abs_sum;
  std::vector<int64_t> terms;
};
// Throws pg::Error for a data kind conv has no data for (conv_data_kind_ok).
ConvExpected compute_conv_expected(const ConvProblem& p, const DataSpec& spec);
// The oracle's answer on data made elsewhere (a property that slices or builds its own tensors).
ConvExpected conv_expected_from(const ConvProblem& p, ConvHostData data);

// A case on one backend: buffers allocated, inputs uploaded. launch() runs the variant once
// (for timing); verify() poisons dx, runs, downloads and compares. A run that throws (a GPU
// runtime error) is a failure of the case, not an exception.
class ConvPreparedRun {
 public:
  ConvPreparedRun(Backend& b, const ConvVariant& v, const ConvProblem& p, const DataSpec& spec,
                  std::shared_ptr<const ConvExpected> expected);
  ~ConvPreparedRun();
  void launch();
  Outcome verify(const VerifyOptions& opt = {});
  // verify() in two halves, as PreparedRun's (src/harness/verify.hpp).
  void start_verify(const VerifyOptions& opt = {});
  Outcome finish_verify();
  // dx as the last verify() downloaded it, in the problem's dtype and layout.
  const std::vector<unsigned char>& output() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Prepare + verify in one call. Unsupported variants come back as Status::unsupported with the
// reason; an invalid problem as Status::fail with conv_validate()'s message.
Outcome conv_run_and_verify(Backend& b, const ConvVariant& v, const ConvProblem& p, const DataSpec& spec,
                            std::shared_ptr<const ConvExpected> expected = nullptr, const VerifyOptions& opt = {});
// conv_run_and_verify() started, not finished, as start_run_and_verify (src/harness/verify.hpp).
FinishVerify start_conv_run_and_verify(Backend& b, const ConvVariant& v, const ConvProblem& p, const DataSpec& spec,
                                       std::shared_ptr<const ConvExpected>* expected, const VerifyOptions& opt);

}  // namespace pg
