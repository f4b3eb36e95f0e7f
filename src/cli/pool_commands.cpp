#include <cstdio>

#include "src/invalid_input.hpp"
#include "src/cli/commands.hpp"

namespace pg {
namespace {

void add_problem_options(CLI::App* cmd, PoolCommandOptions& o) {
  PoolArgs& a = o.args;
  cmd->add_option("--op", a.op, "max_pool1d..3d|avg_pool1d..3d|conv1d..3d")->required();
  cmd->add_option("--kernel-size", a.kernel_size, "K or K,K[,K] (pooling, required): one value applies to every axis")
      ->delimiter(',');
  cmd->add_option("--stride", a.stride, "S[,S..] (default: pooling the kernel size, conv 1)")->delimiter(',');
  cmd->add_option("--padding", o.padding, "P[,P..]: symmetric padding; conv also same|valid")->delimiter(',');
  cmd->add_option("--pads", a.pads, "B..,E..: every begin, then every end (ONNX)")->delimiter(',');
  cmd->add_option("--auto-pad", a.auto_pad, "SAME_UPPER|SAME_LOWER|VALID (ONNX)");
  cmd->add_option("--dilation", a.dilation, "D[,D..]")->delimiter(',');
  cmd->add_flag("--ceil-mode", a.ceil_mode, "ceil output size; the last window starts inside input or left pad");
  cmd->add_option("--count-include-pad", o.count_include_pad, "true|false (default: the profile's)")
      ->check(CLI::IsMember({"true", "false"}));
  cmd->add_option("--divisor-override", o.divisor_override, "N: divide every average window by N");
  cmd->add_option("--profile", a.profile, "pytorch (default), onnx, cudnn, miopen, onednn, ck");
  cmd->add_option("--layout", a.layout, "NCHW (default) or NHWC: channels first or last, any dims");
  cmd->add_option("--input", o.input, "x.npy: (N, C, spatial...) or (C, spatial...); required but in conv backward");
  cmd->add_option("--output", o.output, "where the result .npy goes")->required();
}

int forward(const PoolCommandOptions& o) {
  if (o.args.variant != "oracle")
    throw InvalidInput("--variant = " + o.args.variant + ": forward runs the oracle only (variants are backward kernels)");
  const PoolPlan plan = plan_pool(o.args, read_npy_header(o.input));
  if (!o.indices_output.empty() && plan.problem.op != Op::max)
    throw InvalidInput("--indices-output applies to max_pool only");
  const ForwardResult r = pool_forward(plan, read_npy(o.input));
  write_npy(o.output, r.output);
  if (!o.indices_output.empty()) write_npy(o.indices_output, r.indices);
  return 0;
}

int backward(const PoolCommandOptions& o) {
  const PoolPlan plan = plan_pool(o.args, read_npy_header(o.input));
  check_grad_output(plan, read_npy_header(o.grad_output));
  if (!o.indices.empty()) check_indices(plan, read_npy_header(o.indices));
  const NpyArray x = read_npy(o.input), dy = read_npy(o.grad_output);
  NpyArray indices;
  if (!o.indices.empty()) indices = read_npy(o.indices);
  write_npy(o.output, pool_backward(plan, o.args.variant, x, dy, o.indices.empty() ? nullptr : &indices));
  return 0;
}

}  // namespace

void add_pool_commands(CLI::App& app, PoolCommandOptions& opts) {
  opts.forward = app.add_subcommand("forward", "output of one pooling (and max indices) or conv problem, by the oracle");
  opts.backward = app.add_subcommand("backward", "input gradient of one pooling problem (oracle or a variant) or conv problem (oracle)");
  add_problem_options(opts.forward, opts);
  add_problem_options(opts.backward, opts);
  opts.forward->add_option("--indices-output", opts.indices_output, "idx.npy: max indices in the profile's format");
  opts.backward->add_option("--grad-output", opts.grad_output, "dy.npy, shaped like the output")->required();
  opts.backward->add_option("--indices", opts.indices, "idx.npy: route dy through these instead of recomputing");
  opts.backward->add_option("--variant", opts.args.variant, "oracle (default), auto, or a registered variant's name");
  opts.forward->add_option("--variant", opts.args.variant, "oracle (the only forward)");
  add_conv_options(opts);
}

int run_pool_command(CLI::App&, PoolCommandOptions& opts) {
  if (!opts.count_include_pad.empty()) opts.args.count_include_pad = opts.count_include_pad == "true";
  const CLI::App* cmd = opts.forward->parsed() ? opts.forward : opts.backward;
  if (cmd->count("--divisor-override")) opts.args.divisor_override = opts.divisor_override;
  const std::string name = cmd == opts.forward ? "forward" : "backward";
  try {
    if (is_conv_op(opts.args.op)) return run_conv_command(*cmd, opts);
    refuse_conv_options(*cmd, opts.args.op);
    const PaddingOption padding = parse_padding(opts.padding);
    if (padding.mode != ConvPadMode::explicit_pads)
      throw InvalidInput("--padding = " + opts.padding[0] + " applies to conv only; pooling takes integers (or --auto-pad)");
    opts.args.padding = padding.values;
    if (opts.input.empty()) throw InvalidInput("--input is required");
    return cmd == opts.forward ? forward(opts) : backward(opts);
  } catch (const InvalidInput& e) {
    std::fprintf(stderr, "poolgrad %s: %s\n", name.c_str(), e.what());
    return 2;
  }
}

}  // namespace pg
