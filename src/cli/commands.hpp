// The subcommands beyond devices/variants/check/replay. `poolgrad forward` and `poolgrad backward`:
// one pooling or convolution problem on .npy files. --op picks which; the options both share
// (--stride, --padding, --pads, --dilation, --layout, --input, --output, --grad-output, --variant)
// are registered once, in pool_commands.cpp. `poolgrad bench` and `poolgrad select` (pooling).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "src/harness/conv_plan.hpp"
#include "src/harness/pool_plan.hpp"

namespace pg {

// The options only convolution takes, as given (parsed strictly by conv_commands.cpp).
struct ConvCommandOptions {
  std::string weight;
  std::string groups = "1";
  std::string input_size;  // backward: dx's shape, in the layout's axis order
};

struct PoolCommandOptions {
  CLI::App* forward = nullptr;
  CLI::App* backward = nullptr;
  PoolArgs args;
  // Numbers and lists as given, parsed strictly (src/cli/parse_options.hpp) into args by
  // parse_pool_numbers; --padding also takes conv's 'same' or 'valid' (parse_padding).
  std::string kernel_size, stride, padding, pads, dilation, divisor_override;
  std::string count_include_pad;  // "true" or "false"; unset: the profile's default
  std::string input, grad_output, indices, output, indices_output;
  ConvCommandOptions conv;
  std::string selection;  // --selection: asked by --variant auto after the perf-db
  std::string perfdb;     // --perfdb: the perf-db --variant auto asks first ("" the default path)
  bool tune = false;      // backward --tune: with --variant auto, tune the problem first unless the perf-db has it
  std::string backend = "cpu";  // backward --backend: where a --variant runs
};

// The problem options forward and backward share (--op required, --kernel-size, ... --layout);
// declared with the number parsing in pool_options.cpp, which the CLI fuzzer runs.
void add_problem_options(CLI::App* cmd, PoolCommandOptions& opts);
// Fills opts.args from the number and list options `cmd` was given, strictly (--padding aside:
// take_pooling_padding or parse_padding); throws InvalidInput naming the option.
void parse_pool_numbers(const CLI::App& cmd, PoolCommandOptions& opts);
// Pooling's --padding: integers only, into opts.args.padding; 'same'/'valid' are refused by name.
void take_pooling_padding(PoolCommandOptions& opts);

// forward and backward with every option of both ops (conv's: --weight, --groups, --input-size).
void add_pool_commands(CLI::App& app, PoolCommandOptions& opts);

// Runs whichever of forward/backward was parsed, for pooling or (by --op) convolution; the exit
// code (src/cli/exit_codes.hpp), with one line on stderr for any failure.
int run_pool_command(PoolCommandOptions& opts);

// --padding as given: integers, or one 'same' or 'valid' (mode same/valid, values empty).
// Anything else is an InvalidInput naming --padding.
struct PaddingOption {
  ConvPadMode mode = ConvPadMode::explicit_pads;
  std::vector<int64_t> values;
};
PaddingOption parse_padding(const std::string& text);

// Whether the command line gave `name` (which not every subcommand has).
bool option_given(const CLI::App& cmd, const char* name);
// Conv's ConvArgs from the parsed options (after parse_pool_numbers): --padding as integers or
// same/valid, --groups strictly; the rest as parse_pool_numbers left them.
ConvArgs parse_conv_args(const CLI::App& cmd, const PoolCommandOptions& opts);

// Convolution's part of forward/backward (conv_commands.cpp).
bool is_conv_op(const std::string& op);
// On a pooling command: refuses --weight, --groups and --input-size, naming the option.
void refuse_conv_options(const CLI::App& cmd, const std::string& op);
// Runs the parsed forward or backward for a conv op (refusing pooling-only options); throws
// InvalidInput on bad input. Outputs are written as pooling's are (src/harness/output_file.hpp).
int run_conv_command(const CLI::App& cmd, PoolCommandOptions& opts);

// A problem without files, as `poolgrad bench` and `poolgrad select --explain` take it: the
// problem options plus --input-size N,C,spatial... and --dtype. Not required: bench runs a suite
// when --op is absent.
struct SizedProblemOptions {
  PoolCommandOptions pool;
  std::string input_size;  // N,C,spatial... as given
  std::string dtype = "float32";
};
void add_sized_problem_options(CLI::App* cmd, SizedProblemOptions& opts);
bool sized_problem_given(const CLI::App* cmd);
// Throws InvalidInput naming the parameter.
Problem sized_problem(const CLI::App* cmd, SizedProblemOptions& opts);

struct BenchCommandOptions {
  CLI::App* cmd = nullptr;
  SizedProblemOptions problem;
  std::string backend = "gpu", suite, rows_file, variants_regex, variant, selection, perfdb, out, label = "custom";
  std::string timing = "replay";  // bench/timing.hpp
  std::string contenders;  // REPORT.json: per row only the variants within `within` of its fastest there, and auto's pick
  double within = 1.25;
  double min_time = 0.2;
  double max_seconds = 0;
  int64_t batch = 0, channels = 0;
  int repetitions = 1;
  bool list = false, json = false, tune = false;
};
void add_bench_command(CLI::App& app, BenchCommandOptions& opts);
int run_bench_command(BenchCommandOptions& opts, int argc, char** argv);

struct SelectCommandOptions {
  CLI::App* cmd = nullptr;
  SizedProblemOptions problem;
  std::vector<std::string> reports, holdout;
  std::string out, selection, perfdb, backend, holdout_json;  // backend empty: the GPU when one is found, else the CPU
  bool explain = false;
};
void add_select_command(CLI::App& app, SelectCommandOptions& opts);
int run_select_command(SelectCommandOptions& opts);

// `poolgrad tune PROBLEM`: the find step (bench/tune.hpp) into the user perf-db.
struct TuneCommandOptions {
  CLI::App* cmd = nullptr;
  SizedProblemOptions problem;
  std::string backend, perfdb, variants_regex;  // backend empty: gpu0 when one is found, else cpu
  double min_time = 0.1;
  int repetitions = 5;
  bool dry_run = false;
};
void add_tune_command(CLI::App& app, TuneCommandOptions& opts);
int run_tune_command(TuneCommandOptions& opts);

// `poolgrad compare OLD.json NEW.json`: benchmark history (bench/compare.hpp).
struct CompareCommandOptions {
  CLI::App* cmd = nullptr;
  std::string old_report, new_report;
  double threshold = 5.0, alpha = 0.05;
  bool all = false;
};
void add_compare_command(CLI::App& app, CompareCommandOptions& opts);
int run_compare_command(CompareCommandOptions& opts);

}  // namespace pg
