// `poolgrad forward` and `poolgrad backward`: one pooling or convolution problem on .npy files.
// --op picks which; the options both share (--stride, --padding, --pads, --dilation, --layout,
// --input, --output, --grad-output, --variant) are registered once, in pool_commands.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "src/conv_problem.hpp"
#include "src/pool_run.hpp"

namespace pg {

// The options only convolution takes (conv_commands.cpp).
struct ConvCommandOptions {
  std::string weight;
  int64_t groups = 1;
  std::vector<int64_t> input_size;  // backward: dx's shape, in the layout's axis order
};

struct PoolCommandOptions {
  CLI::App* forward = nullptr;
  CLI::App* backward = nullptr;
  PoolArgs args;
  std::vector<std::string> padding;  // integers, or (conv only) one 'same' or 'valid'
  std::string count_include_pad;  // "true" or "false"; empty: the profile's default
  int64_t divisor_override = 0;
  std::string input, grad_output, indices, output, indices_output;
  ConvCommandOptions conv;
};

void add_pool_commands(CLI::App& app, PoolCommandOptions& opts);

// Runs whichever of forward/backward was parsed, for pooling or (by --op) convolution; 0 on
// success, 2 on invalid input (with one line on stderr).
int run_pool_command(CLI::App& app, PoolCommandOptions& opts);

// --padding as given: integers, or one 'same' or 'valid' (mode same/valid, values empty).
// Anything else is an InvalidInput naming --padding.
struct PaddingOption {
  ConvPadMode mode = ConvPadMode::explicit_pads;
  std::vector<int64_t> values;
};
PaddingOption parse_padding(const std::vector<std::string>& text);

// Convolution's part of forward/backward (conv_commands.cpp).
bool is_conv_op(const std::string& op);
void add_conv_options(PoolCommandOptions& opts);
// On a pooling command: refuses --weight, --groups and --input-size, naming the option.
void refuse_conv_options(const CLI::App& cmd, const std::string& op);
// Runs the parsed forward or backward for a conv op (refusing pooling-only options); throws
// InvalidInput on bad input.
int run_conv_command(const CLI::App& cmd, const PoolCommandOptions& opts);

}  // namespace pg
