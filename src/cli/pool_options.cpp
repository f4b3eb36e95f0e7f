// The options of `poolgrad forward` and `poolgrad backward` (pooling and convolution), declared
// for CLI11 and parsed strictly into PoolArgs: apart from the commands, so that the CLI fuzzer
// (fuzz/parsers/cli_fuzz.cpp) runs this exact code without the kernels.
#include "src/model/invalid_input.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/parse_options.hpp"

namespace pg {
namespace {

void add_file_options(CLI::App* cmd, PoolCommandOptions& o) {
  cmd->add_option("--input", o.input, "x.npy: (N, C, spatial...) or (C, spatial...); required but in conv backward");
  cmd->add_option("--output", o.output, "where the result .npy goes")->required();
}

void add_conv_options(PoolCommandOptions& o) {
  for (CLI::App* cmd : {o.forward, o.backward}) {
    cmd->add_option("--weight", o.conv.weight, "w.npy (conv): (K, C/groups, kernel...), NHWC (K, kernel..., C/groups)");
    cmd->add_option("--groups", o.conv.groups, "G (conv): input and output channels split into G groups");
  }
  o.backward->add_option("--input-size", o.conv.input_size, "N,C,spatial.. (conv): dx's shape, in the layout's axis order");
}

}  // namespace

bool is_conv_op(const std::string& op) { return op.rfind("conv", 0) == 0; }

void add_problem_options(CLI::App* cmd, PoolCommandOptions& o) {
  PoolArgs& a = o.args;
  cmd->add_option("--op", a.op, "max_pool1d..3d|avg_pool1d..3d|conv1d..3d")->required();
  cmd->add_option("--kernel-size", o.kernel_size, "K or K,K[,K] (pooling, required): one value applies to every axis");
  cmd->add_option("--stride", o.stride, "S[,S..] (default: pooling the kernel size, conv 1)");
  cmd->add_option("--padding", o.padding, "P[,P..]: symmetric padding; conv also same|valid");
  cmd->add_option("--pads", o.pads, "B..,E..: every begin, then every end (ONNX)");
  cmd->add_option("--auto-pad", a.auto_pad, "SAME_UPPER|SAME_LOWER|VALID (ONNX)");
  cmd->add_option("--dilation", o.dilation, "D[,D..]");
  cmd->add_flag("--ceil-mode", a.ceil_mode, "ceil output size; the last window starts inside input or left pad");
  cmd->add_option("--count-include-pad", o.count_include_pad, "true|false (default: the profile's)");
  cmd->add_option("--divisor-override", o.divisor_override, "N: divide every average window by N");
  cmd->add_option("--profile", a.profile, "pytorch (default), onnx, cudnn, miopen, onednn, ck");
  cmd->add_option("--layout", a.layout, "NCHW (default) or NHWC: channels first or last, any dims (also NCW/NWC 1D, NCDHW/NDHWC 3D)");
}

void parse_pool_numbers(const CLI::App& cmd, PoolCommandOptions& o) {
  PoolArgs& a = o.args;
  const bool conv = is_conv_op(a.op);
  if (cmd.count("--kernel-size")) a.kernel_size = parse_int_list(o.kernel_size, "--kernel-size");
  else if (!conv) throw InvalidInput("--kernel-size is required for " + a.op);
  if (cmd.count("--stride")) a.stride = parse_int_list(o.stride, "--stride");
  if (cmd.count("--pads")) a.pads = parse_int_list(o.pads, "--pads");
  if (cmd.count("--dilation")) a.dilation = parse_int_list(o.dilation, "--dilation");
  if (cmd.count("--divisor-override")) a.divisor_override = parse_int_option(o.divisor_override, "--divisor-override");
  if (cmd.count("--count-include-pad")) {
    if (o.count_include_pad != "true" && o.count_include_pad != "false")
      throw InvalidInput("--count-include-pad = '" + o.count_include_pad + "' must be true or false");
    a.count_include_pad = o.count_include_pad == "true";
  }
  if (!conv && cmd.count("--padding")) take_pooling_padding(o);
}

PaddingOption parse_padding(const std::string& text) {
  PaddingOption p;
  if (text == "same" || text == "valid") p.mode = text == "same" ? ConvPadMode::same : ConvPadMode::valid;
  else p.values = parse_int_list(text, "--padding");
  return p;
}

void take_pooling_padding(PoolCommandOptions& o) {
  const PaddingOption padding = parse_padding(o.padding);
  if (padding.mode != ConvPadMode::explicit_pads)
    throw InvalidInput("--padding = " + o.padding + " applies to conv only; pooling takes integers (or --auto-pad)");
  o.args.padding = padding.values;
}

// Whether the command line gave `name` (which not every subcommand has).
bool option_given(const CLI::App& cmd, const char* name) {
  const CLI::Option* option = cmd.get_option_no_throw(name);
  return option && option->count() > 0;
}

ConvArgs parse_conv_args(const CLI::App& cmd, const PoolCommandOptions& o) {
  ConvArgs a;
  a.op = o.args.op;
  a.stride = o.args.stride;
  if (option_given(cmd, "--padding")) {
    const PaddingOption padding = parse_padding(o.padding);
    a.padding = padding.values;
    a.pad_mode = padding.mode;
  }
  a.pads = o.args.pads;
  a.dilation = o.args.dilation;
  a.groups = parse_int_option(o.conv.groups, "--groups");
  a.layout = o.args.layout;
  return a;
}

void add_pool_commands(CLI::App& app, PoolCommandOptions& opts) {
  opts.forward = app.add_subcommand("forward", "output of one pooling (and max indices) or conv problem, by the oracle");
  opts.backward = app.add_subcommand("backward", "input gradient of one pooling or conv problem: the oracle's, or a variant's verified against it");
  for (CLI::App* cmd : {opts.forward, opts.backward}) {
    add_problem_options(cmd, opts);
    add_file_options(cmd, opts);
  }
  opts.forward->add_option("--indices-output", opts.indices_output, "idx.npy: max indices in the profile's format");
  opts.backward->add_option("--grad-output", opts.grad_output, "dy.npy, shaped like the output")->required();
  opts.backward->add_option("--indices", opts.indices, "idx.npy: route dy through these instead of recomputing");
  opts.backward->add_option("--variant", opts.args.variant, "oracle (default), auto, or a registered variant's name (pooling or conv: poolgrad variants)");
  opts.backward->add_option("--selection", opts.selection, "selection.json (poolgrad select) that --variant auto reads after the perf-db");
  opts.backward->add_option("--perfdb", opts.perfdb, "FILE: the perf-db --variant auto reads first and --tune writes");
  opts.backward->add_flag("--tune", opts.tune, "with --variant auto: verify and time every variant on this problem first (poolgrad tune) unless the perf-db has it");
  opts.backward->add_option("--backend", opts.backend, "cpu (default) or gpuN: where a --variant runs, verified against the oracle");
  opts.forward->add_option("--variant", opts.args.variant, "oracle (the only forward)");
  add_conv_options(opts);
}

}  // namespace pg
