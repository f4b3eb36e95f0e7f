// `poolgrad bench`: the benchmark engine (bench/engine.hpp, the one pool_bench runs) on a suite,
// a rows file or one problem given by options, with a progress line per benchmark and the
// report as Google Benchmark JSON.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "bench/engine.hpp"
#include "bench/timing.hpp"
#include "bench/report_runs.hpp"
#include "bench/tune.hpp"
#include "src/harness/auto_variant.hpp"
#include "src/cli/commands.hpp"
#include "src/model/invalid_input.hpp"

namespace pg {
namespace {

using bench::Row;

std::string suite_list() {
  std::string s;
  for (const std::string& n : bench::suite_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// A rows file: one row per line, "label: problem options" (the options of this command), blank
// lines and lines starting with '#' skipped.
std::vector<Row> read_rows_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidInput("--rows = " + path + " cannot be read");
  std::vector<Row> rows;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos || line[line.find_first_not_of(" \t")] == '#') continue;
    const auto colon = line.find(": ");
    const std::string where = "--rows " + path + " line " + std::to_string(number);
    if (colon == std::string::npos) throw InvalidInput(where + ": expected 'label: --op ... options'");
    CLI::App parser;
    SizedProblemOptions opts;
    add_sized_problem_options(&parser, opts);
    try {
      parser.parse(line.substr(colon + 2), false);
    } catch (const CLI::ParseError& e) {
      throw InvalidInput(where + ": " + e.what());
    }
    if (!sized_problem_given(&parser)) throw InvalidInput(where + ": --op is required");
    try {
      rows.push_back(bench::make_row(line.substr(0, colon), sized_problem(&parser, opts)));
    } catch (const InvalidInput& e) {
      throw InvalidInput(where + ": " + e.what());
    }
  }
  if (rows.empty()) throw InvalidInput("--rows = " + path + " has no rows");
  return rows;
}

// --contenders: per problem line, the own variants within `within` of the fastest own one in the
// report (its vendor variants too, as comparators within the same factor).
std::map<std::string, std::set<std::string>> read_contenders(const std::string& path, double within) {
  std::map<std::string, std::set<std::string>> out;
  if (path.empty()) return out;
  for (const Example& e : examples_from_runs(bench::report_runs(bench::read_report_file(path), path).runs)) {
    std::set<std::string>& s = out[to_string(e.problem)];
    for (const VariantTime& t : e.times)
      if (t.ms <= within * e.best_ms()) s.insert(t.variant);
  }
  return out;
}

std::vector<Row> chosen_rows(BenchCommandOptions& o) {
  const int sources = !o.suite.empty() + !o.rows_file.empty() + sized_problem_given(o.cmd);
  if (sources > 1) throw InvalidInput("--suite, --rows and --op exclude each other; give one");
  std::vector<Row> rows;
  if (sized_problem_given(o.cmd)) {
    rows.push_back(bench::make_row(o.label, sized_problem(o.cmd, o.problem)));
  } else if (!o.rows_file.empty()) {
    rows = read_rows_file(o.rows_file);
  } else {
    const std::string suite = o.suite.empty() ? "baseline" : o.suite;
    rows = bench::suite_rows(suite);
    if (rows.empty()) throw InvalidInput("--suite = " + suite + " is unknown (" + suite_list() + ")");
  }
  if (o.batch < 0) throw InvalidInput("--batch = " + std::to_string(o.batch) + " must be >= 1");
  if (o.channels < 0) throw InvalidInput("--channels = " + std::to_string(o.channels) + " must be >= 1");
  if (o.batch || o.channels) rows = bench::resized(rows, o.batch, o.channels);
  for (const Row& r : rows) {
    const std::string invalid = validate(r.problem);
    if (!invalid.empty()) throw InvalidInput("row '" + r.name + "': " + invalid);
  }
  return rows;
}

// The rows as bench/pytorch_baseline.py reads them: PyTorch's own parameter names.
void print_rows_json(const std::vector<Row>& rows) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Row& r : rows) {
    const Problem& p = r.problem;
    std::vector<int64_t> shape{p.n, p.c}, kernel, stride, pad_begin, pad_end, dilation;
    for (int a = kAxes - p.dims; a < kAxes; ++a) {
      shape.push_back(p.in[a]);
      kernel.push_back(p.kernel[a]);
      stride.push_back(p.stride[a]);
      pad_begin.push_back(p.pad_begin[a]);
      pad_end.push_back(p.pad_end[a]);
      dilation.push_back(p.dilation[a]);
    }
    nlohmann::ordered_json j = {{"name", r.name}, {"op", op_name(p.op)}, {"dims", p.dims}, {"shape", shape},
                                {"kernel_size", kernel}, {"stride", stride}, {"padding", pad_begin},
                                {"pad_end", pad_end}, {"dilation", dilation}, {"ceil_mode", p.ceil_mode},
                                {"layout", p.layout == Layout::channels_first ? "NCHW" : "NHWC"},
                                {"dtype", bench::torch_dtype_name(p.dtype)}};
    if (p.op == Op::avg) {
      j["divisor"] = divisor_name(p.divisor);
      j["count_include_pad"] = p.divisor == Divisor::include_pad;
      if (p.has_divisor_override) j["divisor_override"] = p.divisor_override;
    } else {
      j["indices"] = std::string(index_format_name(p.index_format)) + "/" + index_type_name(p.index_type);
    }
    j["problem"] = to_string(p);
    list.push_back(j);
  }
  std::printf("%s\n", list.dump(1).c_str());
}

int run(BenchCommandOptions& o, int argc, char** argv) {
  const std::vector<Row> rows = chosen_rows(o);
  if (o.list) {
    if (o.json) print_rows_json(rows);
    else
      for (const Row& r : rows) std::printf("%s\n", r.name.c_str());
    return 0;
  }
  if (o.json) throw InvalidInput("--json applies to --list (the report is JSON: --out FILE)");
  if (o.max_seconds < 0) throw InvalidInput("--max-seconds = " + std::to_string(o.max_seconds) + " must be >= 0");
  if (!(o.min_time > 0)) throw InvalidInput("--min-time = " + std::to_string(o.min_time) + " must be > 0 seconds");
  std::regex filter;
  try {
    filter = std::regex(o.variants_regex.empty() ? "." : o.variants_regex);
  } catch (const std::regex_error& e) {
    throw InvalidInput("--variants = " + o.variants_regex + " is not a regular expression: " + e.what());
  }
  if (!o.variant.empty() && o.variant != "auto" && !find_variant(o.variant))
    throw InvalidInput("--variant = " + o.variant + " is not registered (see poolgrad variants)");
  if (o.repetitions < 1) throw InvalidInput("--repetitions = " + std::to_string(o.repetitions) + " must be >= 1");
  if (o.tune && o.variant != "auto") throw InvalidInput("--tune goes with --variant auto");
  if (!o.contenders.empty() && !o.variant.empty())
    throw InvalidInput("--contenders times auto's pick and the report's contenders; it takes no --variant");
  if (!(o.within >= 1)) throw InvalidInput("--within = " + std::to_string(o.within) + " must be >= 1");
  const std::map<std::string, std::set<std::string>> contenders = read_contenders(o.contenders, o.within);
  if (!o.out.empty()) {
    std::ofstream probe(o.out);
    if (!probe) throw InvalidInput("--out = " + o.out + " cannot be written");
  }
  set_selection_file(o.selection);
  set_perfdb_file(o.perfdb);
  if (o.tune) check_perfdb_writable(current_perfdb_path());
  const BackendKind kind = o.backend == "gpu" ? BackendKind::gpu : BackendKind::cpu;
  bench::timing_mode() = o.timing == "batch" ? bench::Timing::batch : bench::Timing::replay;

  std::string command;
  for (int i = 0; i < argc; ++i) {
    if (i) command += ' ';
    command += argv[i];
  }
  std::vector<std::string> flags{"poolgrad-bench", "--benchmark_min_time=" + std::to_string(o.min_time),
                                 "--benchmark_repetitions=" + std::to_string(o.repetitions)};
  if (!o.out.empty()) {
    flags.push_back("--benchmark_out=" + o.out);
    flags.push_back("--benchmark_out_format=json");
  }
  std::vector<char*> bench_argv;
  for (std::string& f : flags) bench_argv.push_back(f.data());
  int bench_argc = static_cast<int>(bench_argv.size());
  benchmark::Initialize(&bench_argc, bench_argv.data());

  // A rows file's suite is its name without folder and extension (bench/suites/unseen.rows: unseen).
  std::string stem = o.rows_file.substr(o.rows_file.rfind('/') + 1);
  stem = stem.substr(0, stem.rfind('.'));
  const std::string suite = sized_problem_given(o.cmd) ? "custom" : !o.rows_file.empty() ? stem
                            : o.suite.empty() ? "baseline" : o.suite;
  std::string why;
  if (!bench::open_backend(kind, suite, command, &why)) throw InvalidInput("--backend = gpu: no GPU (" + why + ")");
  bench::register_copy_benchmarks();
  Backend& backend = bench::backend();
  const DeviceInfo device = backend.info();
  if (o.tune) {  // the find step on each row the perf-db has no entry for, before auto picks
    bench::TuneOptions t;
    t.wanted = [&](const Variant& v) { return std::regex_search(v.name, filter); };
    for (const Row& row : rows) {
      const AutoChoice c = choose_auto_variant(row.problem, kind, device);
      if (c.tuned) continue;
      bench::tune_and_record(backend, row.problem, t, current_perfdb_path());
    }
  }
  const int timed = bench::register_rows(rows, [&](const Variant& v, const Row& row) {
    if (!std::regex_search(v.name, filter)) return false;
    if (!o.contenders.empty()) {
      const auto it = contenders.find(to_string(row.problem));
      if (it == contenders.end() || it->second.count(v.name)) return true;  // a row the report lacks: every variant
      return choose_auto_variant(row.problem, kind, device).variant == &v;
    }
    if (o.variant == "auto") {
      const AutoChoice c = choose_auto_variant(row.problem, kind, device);
      if (c.variant == &v) std::fprintf(stderr, "auto: %s for %s (%s)\n", v.name.c_str(), row.name.c_str(), c.layer.c_str());
      return c.variant == &v;
    }
    return o.variant.empty() || v.name == o.variant;
  });
  if (timed == 0)
    throw InvalidInput("no variant that --variants/--variant admit supports any of the " + std::to_string(rows.size()) +
                       " rows on the " + o.backend + " backend");
  std::fprintf(stderr, "%zu rows, %d variant x row benchmarks, min time %g s each%s\n", rows.size(), timed, o.min_time,
               o.out.empty() ? "" : (", report: " + o.out).c_str());
  bench::set_time_budget(o.max_seconds);
  bench::run_registered(true, timed + 2);
  benchmark::Shutdown();
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, BenchCommandOptions& o) {
  o.cmd = app.add_subcommand("bench", "time every verified variant on a suite, a rows file or one problem");
  o.cmd->add_option("--backend", o.backend, "gpu (default: the first GPU) or cpu")->check(CLI::IsMember({"cpu", "gpu"}));
  o.cmd->add_option("--suite", o.suite, "baseline (default) or networks");
  o.cmd->add_option("--rows", o.rows_file, "FILE: one row per line, 'label: --op ... options'");
  add_sized_problem_options(o.cmd, o.problem);
  o.cmd->add_option("--label", o.label, "the name of the row given by --op (default: custom)");
  o.cmd->add_option("--batch", o.batch, "N: every row with this batch (a small run)");
  o.cmd->add_option("--channels", o.channels, "C: every row with this channel count (a small run)");
  o.cmd->add_option("--variants", o.variants_regex, "REGEX: only variants whose names match");
  o.cmd->add_option("--variant", o.variant, "auto (the variant --variant auto picks for each row) or one name");
  o.cmd->add_option("--selection", o.selection, "selection.json that --variant auto reads after the perf-db");
  o.cmd->add_option("--perfdb", o.perfdb, "FILE: the perf-db --variant auto reads first and --tune writes");
  o.cmd->add_flag("--tune", o.tune, "with --variant auto: tune each row the perf-db lacks first (poolgrad tune)");
  o.cmd->add_option("--contenders", o.contenders, "REPORT.json: per row, only the variants within --within of its fastest there, and auto's pick");
  o.cmd->add_option("--within", o.within, "with --contenders: the factor (default 1.25)");
  o.cmd->add_option("--repetitions", o.repetitions, "N: time each benchmark N times (poolgrad compare tests the change)");
  o.cmd->add_option("--timing", o.timing, "replay (default: each batch of launches captured once as a GPU graph) or batch (launches issued again per batch, which includes the host's cost of issuing them)")
      ->check(CLI::IsMember({"replay", "batch"}));
  o.cmd->add_option("--min-time", o.min_time, "seconds each benchmark runs at least (default 0.2)");
  o.cmd->add_option("--max-seconds", o.max_seconds, "S: benchmarks not started S seconds after the copy are skipped, named in the report");
  o.cmd->add_option("--out", o.out, "FILE.json: the report, Google Benchmark's JSON with the run's context");
  o.cmd->add_flag("--list", o.list, "print the rows instead of timing them");
  o.cmd->add_flag("--json", o.json, "with --list: the rows as JSON (bench/pytorch_baseline.py reads it)");
}

int run_bench_command(BenchCommandOptions& o, int argc, char** argv) {
  try {
    return run(o, argc, argv);
  } catch (const InvalidInput& e) {
    std::fprintf(stderr, "poolgrad bench: %s\n", e.what());
    return 2;
  }
}

}  // namespace pg
