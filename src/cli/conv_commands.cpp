#include <charconv>

#include "src/conv_run.hpp"
#include "src/invalid_input.hpp"
#include "src/cli/commands.hpp"

namespace pg {
namespace {

// Options of the shared forward/backward commands that only pooling reads.
constexpr const char* kPoolingOnly[] = {"--kernel-size", "--auto-pad", "--ceil-mode", "--count-include-pad",
                                        "--divisor-override", "--profile", "--indices", "--indices-output"};
constexpr const char* kConvOnly[] = {"--weight", "--groups", "--input-size"};

// Whether the command line gave `name` (which not every subcommand has).
bool given(const CLI::App& cmd, const char* name) {
  const CLI::Option* option = cmd.get_option_no_throw(name);
  return option && option->count() > 0;
}

ConvArgs conv_args(const PoolCommandOptions& o) {
  ConvArgs a;
  a.op = o.args.op;
  a.stride = o.args.stride;
  const PaddingOption padding = parse_padding(o.padding);
  a.padding = padding.values;
  a.pad_mode = padding.mode;
  a.pads = o.args.pads;
  a.dilation = o.args.dilation;
  a.groups = o.conv.groups;
  a.layout = o.args.layout;
  return a;
}

void require(const std::string& value, const char* option, const std::string& op) {
  if (value.empty()) throw InvalidInput(std::string(option) + " is required for " + op);
}

int forward(const PoolCommandOptions& o) {
  require(o.input, "--input", o.args.op);
  require(o.conv.weight, "--weight", o.args.op);
  const NpyHeader x = read_npy_header(o.input);
  if (!npy_type_is_float(x.type))
    throw InvalidInput(std::string("--input dtype ") + npy_type_name(x.type) +
                       " must be float16, bfloat16, float32 or float64");
  const ConvPlan plan = plan_conv(conv_args(o), x.shape, "--input shape", read_npy_header(o.conv.weight));
  check_conv_input(plan, x);
  write_npy(o.output, conv_forward_npy(plan, read_npy(o.input), read_npy(o.conv.weight)));
  return 0;
}

int backward(const PoolCommandOptions& o) {
  require(o.conv.weight, "--weight", o.args.op);
  if (o.conv.input_size.empty()) throw InvalidInput("--input-size is required for " + o.args.op + " backward");
  if (!o.input.empty())
    throw InvalidInput("--input: " + o.args.op + " backward-data reads no x; give its shape as --input-size");
  const ConvPlan plan = plan_conv(conv_args(o), o.conv.input_size, "--input-size", read_npy_header(o.conv.weight));
  check_conv_grad_output(plan, read_npy_header(o.grad_output));
  write_npy(o.output, conv_backward_npy(plan, read_npy(o.conv.weight), read_npy(o.grad_output)));
  return 0;
}

}  // namespace

bool is_conv_op(const std::string& op) { return op.rfind("conv", 0) == 0; }

PaddingOption parse_padding(const std::vector<std::string>& text) {
  PaddingOption p;
  if (text.size() == 1 && (text[0] == "same" || text[0] == "valid")) {
    p.mode = text[0] == "same" ? ConvPadMode::same : ConvPadMode::valid;
    return p;
  }
  for (const std::string& t : text) {
    int64_t v;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size() || t.empty())
      throw InvalidInput("--padding = " + t + " must be integers (one, or one per axis), 'same' or 'valid'");
    p.values.push_back(v);
  }
  return p;
}

void add_conv_options(PoolCommandOptions& opts) {
  for (CLI::App* cmd : {opts.forward, opts.backward}) {
    cmd->add_option("--weight", opts.conv.weight, "w.npy (conv): (K, C/groups, kernel...), NHWC (K, kernel..., C/groups)");
    cmd->add_option("--groups", opts.conv.groups, "G (conv): input and output channels split into G groups");
  }
  opts.backward->add_option("--input-size", opts.conv.input_size,
                            "N,C,spatial.. (conv): dx's shape, in the layout's axis order")->delimiter(',');
}

void refuse_conv_options(const CLI::App& cmd, const std::string& op) {
  for (const char* name : kConvOnly)
    if (given(cmd, name)) throw InvalidInput(std::string(name) + " applies to conv1d..conv3d only, not " + op);
}

int run_conv_command(const CLI::App& cmd, const PoolCommandOptions& o) {
  for (const char* name : kPoolingOnly)
    if (given(cmd, name)) throw InvalidInput(std::string(name) + " applies to pooling only, not " + o.args.op);
  if (o.args.variant != "oracle")
    throw InvalidInput("--variant = " + o.args.variant + ": " + o.args.op +
                       " runs the oracle only (no convolution variant is registered)");
  return &cmd == o.forward ? forward(o) : backward(o);
}

}  // namespace pg
