// The options of `poolgrad forward` and `poolgrad backward`, declared for CLI11 and parsed
// strictly into PoolArgs: apart from the commands, so that the CLI fuzzer
// (fuzz/parsers/cli_fuzz.cpp) runs this exact code without the kernels.
#include "src/invalid_input.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/parse_options.hpp"

namespace pg {
namespace {

void add_problem_options(CLI::App* cmd, PoolCommandOptions& o) {
  PoolArgs& a = o.args;
  cmd->add_option("--op", a.op, "max_pool1d|max_pool2d|max_pool3d|avg_pool1d|avg_pool2d|avg_pool3d")->required();
  cmd->add_option("--kernel-size", o.kernel_size, "K or K,K[,K]: one value applies to every axis")->required();
  cmd->add_option("--stride", o.stride, "S[,S..] (default: kernel size)");
  cmd->add_option("--padding", o.padding, "P[,P..]: symmetric padding");
  cmd->add_option("--pads", o.pads, "B..,E..: every begin, then every end (ONNX)");
  cmd->add_option("--auto-pad", a.auto_pad, "SAME_UPPER|SAME_LOWER|VALID (ONNX)");
  cmd->add_option("--dilation", o.dilation, "D[,D..]");
  cmd->add_flag("--ceil-mode", a.ceil_mode, "ceil output size; the last window starts inside input or left pad");
  cmd->add_option("--count-include-pad", o.count_include_pad, "true|false (default: the profile's)");
  cmd->add_option("--divisor-override", o.divisor_override, "N: divide every average window by N");
  cmd->add_option("--profile", a.profile, "pytorch (default), onnx, cudnn, miopen, onednn, ck");
  cmd->add_option("--layout", a.layout, "NCHW (default) or NHWC: channels first or last, any dims");
  cmd->add_option("--input", o.input, "x.npy: (N, C, spatial...) or (C, spatial...)")->required();
  cmd->add_option("--output", o.output, "where the result .npy goes")->required();
}

}  // namespace

void parse_pool_numbers(const CLI::App& cmd, PoolCommandOptions& o) {
  PoolArgs& a = o.args;
  a.kernel_size = parse_int_list(o.kernel_size, "--kernel-size");
  if (cmd.count("--stride")) a.stride = parse_int_list(o.stride, "--stride");
  if (cmd.count("--padding")) a.padding = parse_int_list(o.padding, "--padding");
  if (cmd.count("--pads")) a.pads = parse_int_list(o.pads, "--pads");
  if (cmd.count("--dilation")) a.dilation = parse_int_list(o.dilation, "--dilation");
  if (cmd.count("--divisor-override")) a.divisor_override = parse_int_option(o.divisor_override, "--divisor-override");
  if (cmd.count("--count-include-pad")) {
    if (o.count_include_pad != "true" && o.count_include_pad != "false")
      throw InvalidInput("--count-include-pad = '" + o.count_include_pad + "' must be true or false");
    a.count_include_pad = o.count_include_pad == "true";
  }
}

void add_pool_commands(CLI::App& app, PoolCommandOptions& opts) {
  opts.forward = app.add_subcommand("forward", "pooled output (and max indices) of one problem, by the oracle");
  opts.backward = app.add_subcommand("backward", "input gradient of one problem, by the oracle or a variant");
  add_problem_options(opts.forward, opts);
  add_problem_options(opts.backward, opts);
  opts.forward->add_option("--indices-output", opts.indices_output, "idx.npy: max indices in the profile's format");
  opts.backward->add_option("--grad-output", opts.grad_output, "dy.npy, shaped like the output")->required();
  opts.backward->add_option("--indices", opts.indices, "idx.npy: route dy through these instead of recomputing");
  opts.backward->add_option("--variant", opts.args.variant, "oracle (default), auto, or a registered variant's name");
  opts.forward->add_option("--variant", opts.args.variant, "oracle (the only forward)");
}

}  // namespace pg
