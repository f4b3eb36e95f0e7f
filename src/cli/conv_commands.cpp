// The conv side of `poolgrad forward` and `poolgrad backward`: the oracle on .npy files, checks
// first and the output written as pooling's is (src/harness/output_file.hpp).
#include "src/harness/conv_run.hpp"
#include "src/model/invalid_input.hpp"
#include "src/harness/output_file.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/exit_codes.hpp"
#include "src/cli/parse_options.hpp"

namespace pg {
namespace {

// Options of the shared forward/backward commands that only pooling reads.
constexpr const char* kPoolingOnly[] = {"--kernel-size", "--auto-pad", "--ceil-mode", "--count-include-pad",
                                        "--divisor-override", "--profile", "--indices", "--indices-output"};
constexpr const char* kConvOnly[] = {"--weight", "--groups", "--input-size"};

void require(const std::string& value, const char* option, const std::string& op) {
  if (value.empty()) throw InvalidInput(std::string(option) + " is required for " + op);
}

int forward(const CLI::App& cmd, const PoolCommandOptions& o) {
  require(o.input, "--input", o.args.op);
  require(o.conv.weight, "--weight", o.args.op);
  check_paths({{"--input", o.input}, {"--weight", o.conv.weight}}, {{"--output", o.output}});
  const NpyHeader x = read_npy_header(o.input);
  if (!npy_type_is_float(x.type))
    throw InvalidInput(std::string("--input dtype ") + npy_type_name(x.type) +
                       " must be float16, bfloat16, float32 or float64");
  const ConvPlan plan = plan_conv(parse_conv_args(cmd, o), x.shape, "--input shape", read_npy_header(o.conv.weight));
  check_conv_input(plan, x);
  write_file_atomically({"--output", o.output}, format_npy(conv_forward_npy(plan, read_npy(o.input), read_npy(o.conv.weight))));
  return kExitOk;
}

int backward(const CLI::App& cmd, const PoolCommandOptions& o) {
  require(o.conv.weight, "--weight", o.args.op);
  if (!option_given(cmd, "--input-size")) throw InvalidInput("--input-size is required for " + o.args.op + " backward");
  if (!o.input.empty())
    throw InvalidInput("--input: " + o.args.op + " backward-data reads no x; give its shape as --input-size");
  check_paths({{"--weight", o.conv.weight}, {"--grad-output", o.grad_output}}, {{"--output", o.output}});
  const std::vector<int64_t> input_size = parse_int_list(o.conv.input_size, "--input-size");
  const ConvPlan plan = plan_conv(parse_conv_args(cmd, o), input_size, "--input-size", read_npy_header(o.conv.weight));
  check_conv_grad_output(plan, read_npy_header(o.grad_output));
  write_file_atomically({"--output", o.output},
                        format_npy(conv_backward_npy(plan, read_npy(o.conv.weight), read_npy(o.grad_output),
                                                   o.args.variant, o.backend)));
  return kExitOk;
}

}  // namespace

void refuse_conv_options(const CLI::App& cmd, const std::string& op) {
  for (const char* name : kConvOnly)
    if (option_given(cmd, name)) throw InvalidInput(std::string(name) + " applies to conv1d..conv3d only, not " + op);
}

int run_conv_command(const CLI::App& cmd, PoolCommandOptions& o) {
  for (const char* name : kPoolingOnly)
    if (option_given(cmd, name)) throw InvalidInput(std::string(name) + " applies to pooling only, not " + o.args.op);
  if (&cmd == o.forward && o.args.variant != "oracle")
    throw InvalidInput("--variant = " + o.args.variant + ": forward runs the oracle only (variants are backward kernels)");
  return &cmd == o.forward ? forward(cmd, o) : backward(cmd, o);
}

}  // namespace pg
