// The poolgrad command: version, devices, variants, check (the main job), replay; forward,
// backward, bench, select, fuzz and fuzz-merge live in their own units (src/cli/commands.hpp,
// src/cli/fuzz_commands.hpp). Exit codes and the error line: src/cli/exit_codes.hpp.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <map>

#include "src/harness/auto_variant.hpp"
#include "src/model/backend.hpp"
#include "src/harness/check_set.hpp"
#include "src/model/invalid_input.hpp"
#include "src/harness/plugin.hpp"
#include "src/harness/conv_check_set.hpp"
#include "src/harness/conv_registry.hpp"
#include "src/harness/conv_verify.hpp"
#include "src/harness/registry.hpp"
#include "src/harness/verify.hpp"
#include "fuzz/case_file.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/exit_codes.hpp"
#include "src/cli/fuzz_commands.hpp"
#include "src/cli/parse_options.hpp"

namespace pg {
namespace {

const char* inputs_name(Inputs i) {
  switch (i) {
    case Inputs::dy_only: return "dy";
    case Inputs::dy_and_indices: return "dy+indices";
    case Inputs::dy_and_x: return "dy+x";
  }
  return "?";
}

int cmd_devices() {
  for (auto& b : all_backends()) {
    const DeviceInfo d = b->info();
    std::printf("%-6s %s  arch=%s  memory=%.1f GiB  wave=%d  units=%d\n", b->name().c_str(),
                d.name.c_str(), d.arch.c_str(), static_cast<double>(d.memory_bytes) / (1 << 30),
                d.wave_size, d.multiprocessors);
  }
  std::string why;
  if (gpu_count(&why) == 0) std::printf("(no GPU: %s)\n", why.c_str());
  return 0;
}

int cmd_variants() {
  if (variants().empty()) std::printf("(no variants registered)\n");
  for (const Variant& v : variants()) {
    std::printf("%-28s op=%s reads=%-10s %s backends=%s%s\n", v.name.c_str(), op_name(v.op),
                inputs_name(v.inputs), v.deterministic ? "deterministic" : "atomic       ",
                v.gpu_only ? "" : "cpu,", v.launch_gpu ? "gpu" : "(no gpu in this build)");
    std::printf("    domain: %s\n", v.domain.describe().c_str());
    if (!v.plugin.empty()) std::printf("    plugin: %s\n", v.plugin.c_str());
  }
  for (const std::string& line : absent_families()) std::printf("absent: %s\n", line.c_str());
  for (const ConvVariant& v : conv_variants()) {
    std::printf("%-28s op=conv reads=%-10s %s backends=%s%s\n", v.name.c_str(), "dy+w",
                v.deterministic ? "deterministic" : "atomic       ", v.gpu_only ? "" : "cpu,",
                v.launch_gpu ? "gpu" : "(no gpu in this build)");
    std::printf("    domain: %s\n", v.domain.describe().c_str());
  }
  return 0;
}

// One variant's row of the check table on one backend; returns its failures (a variant that
// could run here but ran no case counts as one).
template <class V, class Cases, class Run>
int check_rows(const V& v, Backend& b, const Cases& cases, bool verbose, bool require_some, int* passes, int* skips,
               const Run& run) {
  int pass = 0, fail = 0, unsupported = 0;
  std::string messages;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Support s = v.supports(cases[i].problem, b.kind());
    if (!s.ok) {
      ++unsupported;
      if (verbose) messages += "  unsupported: " + cases[i].label + ": " + s.why + "\n";
      continue;
    }
    const Outcome o = run(i);
    if (o.status == Status::pass) ++pass;
    else {
      ++fail;
      messages += "[" + cases[i].label + "] " + o.message + "\n";
    }
  }
  std::printf("%-30s %-6s %6d %6d %11d\n", v.name.c_str(), b.name().c_str(), pass, fail, unsupported);
  // A variant that ran nowhere was not checked: that is a failure, not a quiet pass.
  const bool runs_here = !(b.kind() == BackendKind::cpu && v.gpu_only);
  if (require_some && runs_here && pass == 0 && fail == 0) {
    ++fail;
    messages += "FAIL " + v.name + " on " + b.name() + ": no case of the check set is in its domain\n";
  }
  if (!messages.empty()) std::printf("%s", messages.c_str());
  *passes += pass;
  *skips += unsupported;
  return fail;
}

int cmd_check(const std::string& only_variant, bool verbose) {
  if (!only_variant.empty() && only_variant != "auto" && !find_variant(only_variant) && !find_conv_variant(only_variant))
    throw InvalidInput("--variant '" + only_variant + "' is not registered (see poolgrad variants)");
  int failures = 0, passes = 0, skips = 0;
  auto backends = all_backends();
  std::string why;
  if (gpu_count(&why) == 0) std::printf("note: GPU backend not checked: %s\n", why.c_str());
  std::printf("%-30s %-6s %6s %6s %11s\n", "variant", "backend", "pass", "fail", "unsupported");
  const std::vector<CheckCase> cases = check_set();
  std::map<size_t, std::shared_ptr<const Expected>> expected;
  const bool auto_pick = only_variant == "auto";
  std::vector<std::string> vendor_left_out;
  for (const Variant& v : variants()) {
    if (!only_variant.empty() && !auto_pick && v.name != only_variant) continue;
    // A vendor library's disagreements are findings about the vendor (docs/plugins.md, "cuDNN as
    // variants"): checked when named, not part of the verdict on poolgrad's own kernels.
    if (v.vendor && only_variant != v.name) {
      vendor_left_out.push_back(v.name);
      continue;
    }
    for (auto& b : backends) {
      const DeviceInfo device = b->info();
      // Under auto, the cases auto gives this variant on this backend (it may get none).
      std::vector<CheckCase> mine;
      std::vector<size_t> index;
      for (size_t i = 0; i < cases.size(); ++i)
        if (cases[i].problem.op == v.op && (!auto_pick || choose_auto_variant(cases[i].problem, b->kind(), device).variant == &v)) {
          mine.push_back(cases[i]);
          index.push_back(i);
        }
      failures += check_rows(v, *b, mine, verbose, !auto_pick, &passes, &skips, [&](size_t i) {
        const CheckCase& cc = mine[i];
        auto& e = expected[index[i]];
        if (!e) e = std::make_shared<const Expected>(compute_expected(cc.problem, cc.data));
        return run_and_verify(*b, v, cc.problem, cc.data, e);
      });
    }
  }
  const std::vector<ConvCheckCase> conv_cases = conv_check_set();
  std::map<size_t, std::shared_ptr<const ConvExpected>> conv_expected;
  for (const ConvVariant& v : conv_variants()) {
    if (!only_variant.empty() && v.name != only_variant) continue;
    for (auto& b : backends)
      failures += check_rows(v, *b, conv_cases, verbose, true, &passes, &skips, [&](size_t i) {
        const ConvCheckCase& cc = conv_cases[i];
        auto& e = conv_expected[i];
        if (!e) e = std::make_shared<const ConvExpected>(compute_conv_expected(cc.problem, cc.data));
        return conv_run_and_verify(*b, v, cc.problem, cc.data, e);
      });
  }
  std::printf("%d passed, %d failed, %d unsupported (%zu pooling cases x %zu variants + %zu conv cases x %zu variants, x %zu backends)\n",
              passes, failures, skips, cases.size(), variants().size(), conv_cases.size(), conv_variants().size(),
              backends.size());
  if (!vendor_left_out.empty()) {
    std::string names;
    for (const std::string& n : vendor_left_out) names += (names.empty() ? "" : ", ") + n;
    std::printf("vendor variants not in this verdict (check each with --variant NAME): %s\n", names.c_str());
  }
  if (variants().empty() && conv_variants().empty()) {
    std::printf("no variants registered: nothing was checked\n");
    return 1;
  }
  return failures ? 1 : 0;
}

int report_replay(const Outcome& o, const std::string& variant, const Backend& b, const std::string& problem) {
  if (o.status == Status::pass) {
    std::printf("PASS %s on %s\n  problem: %s\n", variant.c_str(), b.name().c_str(), problem.c_str());
    return kExitOk;
  }
  std::printf("%s\n", o.message.c_str());
  return kExitMismatch;
}

// A conv problem line (op=conv1d|conv2d|conv3d ...) from a conv failure.
int replay_conv(const std::string& problem_text, const DataSpec& spec, const std::string& variant,
                const std::string& backend_name) {
  ConvProblem p;
  std::string error;
  if (!parse_conv_problem(problem_text, &p, &error)) throw InvalidInput("--problem: " + error);
  error = conv_validate(p);
  if (!error.empty()) throw InvalidInput("--problem: invalid problem: " + error);
  if (!conv_data_kind_ok(spec.kind))
    throw InvalidInput(std::string("--data must be ints or real for a conv problem, got '") + data_kind_name(spec.kind) + "'");
  const ConvVariant* v = find_conv_variant(variant);
  if (!v) throw InvalidInput("--variant '" + variant + "' is not a registered conv variant (see poolgrad variants)");
  const auto b = backend_by_name(backend_name);
  const Support s = v->supports(p, b->kind());
  if (!s.ok) throw CannotRun(v->name + " does not support this problem on " + b->name() + ": " + s.why);
  return report_replay(conv_run_and_verify(*b, *v, p, spec), v->name, *b, conv_to_string(p));
}

int cmd_replay(const std::string& problem_text, const std::string& kind, const std::string& seed_text,
               const std::string& variant, const std::string& backend_name) {
  DataSpec spec{static_cast<uint64_t>(parse_count_option(seed_text, "--seed")), DataKind::ints};
  if (!parse_data_kind(kind, &spec.kind))
    throw InvalidInput("--data must be ints, special, real or foreign, got '" + kind + "'");
  if (problem_text.rfind("op=conv", 0) == 0) return replay_conv(problem_text, spec, variant, backend_name);
  Problem p;
  std::string error;
  if (!parse_problem(problem_text, &p, &error)) throw InvalidInput("--problem: " + error);
  const std::string invalid = validate(p);
  if (!invalid.empty()) throw InvalidInput("--problem: invalid problem: " + invalid);
  const Variant* v = find_variant(variant);
  if (!v) throw InvalidInput("--variant '" + variant + "' is not registered (see poolgrad variants)");
  if (v->op != p.op)
    throw InvalidInput("--variant " + variant + " is a " + op_name(v->op) + " pooling variant and the problem is " +
                       op_name(p.op) + " pooling");
  const auto b = backend_by_name(backend_name);
  const Support s = v->supports(p, b->kind());
  if (!s.ok) throw CannotRun(v->name + " does not support this problem on " + b->name() + ": " + s.why);
  return report_replay(run_and_verify(*b, *v, p, spec), v->name, *b, to_string(p));
}

// The subcommand a parse error belongs to, for its "poolgrad CMD:" prefix.
std::string command_of(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) return sub->get_name();
  return "";
}

}  // namespace
}  // namespace pg

int main(int argc, char** argv) {
  // Every line as it is printed, whichever command: stdout to a file is fully buffered, and a
  // check, fuzz or bench stopped by a time limit (the GPU machine's, say) would otherwise leave an
  // empty log instead of the lines it had printed.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  CLI::App app{"poolgrad: reference-and-fuzz correctness harness for pooling-backward and convolution backward-data kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("poolgrad ") + POOLGRAD_VERSION);

  app.add_subcommand("devices", "the CPU backend and each GPU found");
  app.add_subcommand("variants", "every registered kernel variant");
  auto* check = app.add_subcommand("check", "every variant, pooling and conv, x the built-in problem sets x every backend, against the oracle");
  std::string only;
  bool verbose = false;
  check->add_option("--variant", only, "check only this variant; auto: on each case, the variant --variant auto picks");
  std::string check_selection;
  check->add_option("--selection", check_selection, "selection.json that --variant auto reads first");
  check->add_flag("-v,--verbose", verbose, "say why each unsupported case is skipped");

  auto* replay = app.add_subcommand("replay", "rerun one case from the line a failure printed");
  std::string problem_text, kind = "ints", variant, backend = "cpu", seed = "1";
  std::string case_file;
  auto* file_opt = replay->add_option("file", case_file, "a case file written by poolgrad fuzz (instead of the options)");
  replay->add_option("--problem", problem_text, "the problem line")->excludes(file_opt);
  replay->add_option("--data", kind, "ints, special, real or foreign (conv: ints or real)")->excludes(file_opt);
  replay->add_option("--seed", seed, "data seed")->excludes(file_opt);
  replay->add_option("--variant", variant, "variant name")->excludes(file_opt);
  replay->add_option("--backend", backend, "cpu or gpuN (with a FILE: instead of the file's)");

  pg::PoolCommandOptions pool_opts;
  pg::add_pool_commands(app, pool_opts);
  pg::BenchCommandOptions bench_opts;
  pg::add_bench_command(app, bench_opts);
  pg::SelectCommandOptions select_opts;
  pg::add_select_command(app, select_opts);
  pg::FuzzCommandOptions fuzz_opts;
  pg::add_fuzz_commands(app, fuzz_opts);
  pg::TuneCommandOptions tune_opts;
  pg::add_tune_command(app, tune_opts);
  pg::CompareCommandOptions compare_opts;
  pg::add_compare_command(app, compare_opts);

  // Plugins load before any variant is looked up; on every command that takes variants by name.
  std::vector<std::string> plugins;
  for (const char* name : {"variants", "check", "replay", "fuzz", "bench", "select", "backward", "tune"})
    app.get_subcommand(name)
        ->add_option("--plugin", plugins, "PATH.so: its variants join poolgrad's (include/poolgrad/plugin.h); repeatable")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    const std::string command = pg::command_of(app);
    std::fprintf(stderr, "poolgrad%s%s: %s (see poolgrad%s%s --help)\n", command.empty() ? "" : " ", command.c_str(),
                 e.what(), command.empty() ? "" : " ", command.c_str());
    return pg::kExitBadInput;
  }
  if (!plugins.empty()) {
    const int loaded = pg::run_command(pg::command_of(app).c_str(), [&] {
      pg::load_plugins(plugins);
      return pg::kExitOk;
    });
    if (loaded != pg::kExitOk) return loaded;
  }
  if (app.got_subcommand("devices")) return pg::run_command("devices", [] { return pg::cmd_devices(); });
  if (app.got_subcommand("variants")) return pg::run_command("variants", [] { return pg::cmd_variants(); });
  if (app.got_subcommand("check"))
    return pg::run_command("check", [&] {
      pg::set_selection_file(check_selection);
      return pg::cmd_check(only, verbose);
    });
  if (app.got_subcommand("bench")) return pg::run_command("bench", [&] { return pg::run_bench_command(bench_opts, argc, argv); });
  if (app.got_subcommand("select")) return pg::run_command("select", [&] { return pg::run_select_command(select_opts); });
  if (app.got_subcommand("tune")) return pg::run_command("tune", [&] { return pg::run_tune_command(tune_opts); });
  if (app.got_subcommand("compare"))
    return pg::run_command("compare", [&] { return pg::run_compare_command(compare_opts); });
  if (app.got_subcommand("replay"))
    return pg::run_command("replay", [&] {
      if (!case_file.empty()) {
        pg::fuzz::CaseFile c;
        std::string error;
        if (!pg::fuzz::read_case_file(case_file, &c, &error)) throw pg::InvalidInput(error);
        if (!c.plugin.empty()) pg::load_plugins({c.plugin});
        return pg::cmd_replay(c.problem, pg::data_kind_name(c.data.kind), std::to_string(c.data.seed), c.variant,
                              replay->count("--backend") ? backend : c.backend);
      }
      if (problem_text.empty()) throw pg::InvalidInput("--problem is required (or a case FILE)");
      if (variant.empty()) throw pg::InvalidInput("--variant is required (or a case FILE)");
      return pg::cmd_replay(problem_text, kind, seed, variant, backend);
    });
  if (app.got_subcommand("fuzz")) return pg::run_command("fuzz", [&] { return pg::run_fuzz_command(fuzz_opts); });
  if (app.got_subcommand("fuzz-merge")) return pg::run_command("fuzz-merge", [&] { return pg::run_fuzz_command(fuzz_opts); });
  return pg::run_pool_command(pool_opts);
}
