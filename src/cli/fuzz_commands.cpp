#include "src/cli/fuzz_commands.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "fuzz/campaign.hpp"
#include "fuzz/interrupt.hpp"
#include "fuzz/registered_targets.hpp"
#include "src/model/invalid_input.hpp"

namespace pg {
namespace {

// "I/N" with 0 <= I < N.
void parse_shard(const std::string& s, int* index, int* count) {
  std::istringstream in(s);
  char slash = 0;
  if (!(in >> *index >> slash >> *count) || slash != '/' || !in.eof() || *count < 1 || *index < 0 || *index >= *count)
    throw InvalidInput("--shard must be I/N with 0 <= I < N, got '" + s + "'");
}

std::vector<int> parse_devices(const std::string& s, int found) {
  std::vector<int> out;
  if (s == "all") {
    for (int d = 0; d < found; ++d) out.push_back(d);
    return out;
  }
  std::istringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    size_t used = 0;
    int d = -1;
    try {
      d = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || d < 0) throw InvalidInput("--devices must be all or a list like 0,1, got '" + s + "'");
    if (d >= found)
      throw InvalidInput("--devices names GPU " + std::to_string(d) + " but " + std::to_string(found) + " found");
    out.push_back(d);
  }
  return out;
}

fuzz::Targets select_targets(const FuzzCommandOptions& o, bool cpu, bool gpu) {
  std::regex pattern;
  try {
    pattern = std::regex(o.variants);
  } catch (const std::regex_error& e) {
    throw InvalidInput("--variants '" + o.variants + "' is not a regular expression (" + e.what() + ")");
  }
  // As `poolgrad check`: a vendor library's variants only when --variants is given (and matches).
  const bool named = o.fuzz->count("--variants") > 0;
  fuzz::Targets targets = fuzz::registered_targets(pattern, cpu, gpu, named);
  if (!named) {
    std::string left;
    for (const std::string& n : fuzz::vendor_variants_matching(pattern)) left += (left.empty() ? "" : ", ") + n;
    if (!left.empty()) std::printf("vendor variants not in this campaign (name them with --variants): %s\n", left.c_str());
  }
  if (targets.empty())
    throw InvalidInput("--variants '" + o.variants + "' selects no variant that runs on the chosen backends (see poolgrad variants)");
  return targets;
}

void write_report(const std::string& path, const fuzz::CampaignReport& r) {
  std::ofstream out(path);
  out << fuzz::to_json(r).dump(2) << "\n";
  if (!out) throw InvalidInput("--report: cannot write '" + path + "'");
}

int run_campaign_command(const FuzzCommandOptions& o) {
  fuzz::CampaignOptions c;
  if (o.fuzz->count("--minutes") && o.fuzz->count("--cases")) throw InvalidInput("--minutes and --cases: give one");
  if (o.fuzz->count("--cases")) {
    if (o.cases < 1) throw InvalidInput("--cases must be at least 1");
    c.seconds = 0;
    c.cases = o.cases;
  } else {
    if (!(o.minutes > 0)) throw InvalidInput("--minutes must be more than 0");
    c.seconds = o.minutes * 60;
  }
  if (o.backend != "cpu" && o.backend != "gpu" && o.backend != "all")
    throw InvalidInput("--backend must be cpu, gpu or all, got '" + o.backend + "'");
  std::string why_no_gpu;
  const int found = o.backend == "cpu" ? 0 : gpu_count(&why_no_gpu);
  if (o.backend == "gpu" && found == 0) throw InvalidInput("--backend gpu: " + why_no_gpu);
  c.gpu_devices = parse_devices(o.devices, found);
  const bool gpu = !c.gpu_devices.empty();
  c.targets = select_targets(o, o.backend != "gpu", gpu);
  parse_shard(o.shard, &c.shard, &c.shard_count);
  if (o.fuzz->count("--jobs") && o.jobs < 1) throw InvalidInput("--jobs must be at least 1");
  if (o.batch < 1 || o.batch > 256) throw InvalidInput("--batch must be 1 to 256, got " + std::to_string(o.batch));
  c.batch = o.batch;
  if (!(o.share >= 0 && o.share <= 0.9)) throw InvalidInput("--share must be 0 to 0.9, got " + std::to_string(o.share));
  c.share = o.share;
  if (o.backend == "all" && !gpu) std::fprintf(stderr, "note: GPU backend not fuzzed: %s\n", why_no_gpu.c_str());
  c.jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  c.seed = o.fuzz->count("--seed") ? o.seed : std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
  c.corpus_dir = o.corpus;

  // A terminal gets one line rewritten in place each second; a log gets a plain line every 10 s.
  const bool tty = isatty(STDERR_FILENO);
  c.status_every_s = tty ? 1 : 10;
  c.status = [tty](const std::string& line) {
    if (line.find('\n') != std::string::npos) std::cerr << (tty ? "\r\033[K" : "") << line << "\n";
    else if (tty) std::cerr << "\r\033[K" << line << std::flush;
    else std::cerr << line << "\n";
  };
  const fuzz::StopOnInterrupt interrupt;
  c.stop = &fuzz::StopOnInterrupt::requested();
  std::fprintf(stderr, "poolgrad fuzz: seed %llu, shard %d/%d, %zu targets, %d jobs, batches of %d, cases into %s/\n",
               static_cast<unsigned long long>(c.seed), c.shard, c.shard_count, c.targets.size(), c.jobs, c.batch,
               c.corpus_dir.c_str());
  const fuzz::CampaignReport r = fuzz::run_campaign(c);
  if (tty) std::cerr << "\n";
  std::cout << fuzz::report_table(r);
  if (o.phases) std::cout << fuzz::phase_table(r);
  if (!o.report.empty()) write_report(o.report, r);
  return r.distinct_failures() ? 1 : 0;
}

int merge_command(const FuzzCommandOptions& o) {
  std::vector<fuzz::CampaignReport> parts;
  for (const std::string& path : o.reports) {
    std::ifstream in(path);
    if (!in) throw InvalidInput(path + ": cannot open");
    try {
      parts.push_back(fuzz::report_from_json(nlohmann::json::parse(in)));
    } catch (const std::exception& e) {
      throw InvalidInput(path + ": " + e.what());
    }
  }
  fuzz::CampaignReport r;
  try {
    r = fuzz::merge_reports(parts);
  } catch (const std::runtime_error& e) {
    throw InvalidInput(e.what());
  }
  std::cout << fuzz::report_table(r);
  if (!o.merged.empty()) write_report(o.merged, r);
  return r.distinct_failures() ? 1 : 0;
}

}  // namespace

void add_fuzz_commands(CLI::App& app, FuzzCommandOptions& o) {
  o.fuzz = app.add_subcommand("fuzz", "a fuzz campaign: random cases over every variant and device, failures shrunk into case files");
  o.fuzz->add_option("--minutes", o.minutes, "run this long (default 1)");
  o.fuzz->add_option("--cases", o.cases, "instead of a time: this many cases per variant and backend");
  o.fuzz->add_option("--seed", o.seed, "campaign seed (default: random, printed); same seed and shard, same cases");
  o.fuzz->add_option("--variants", o.variants,
                     "regular expression on variant names (default: all but a vendor library's, cudnn.*)");
  o.fuzz->add_option("--backend", o.backend, "cpu, gpu or all (default)");
  o.fuzz->add_option("--devices", o.devices, "GPUs: all (default) or a list like 0,1");
  o.fuzz->add_option("--jobs", o.jobs, "host threads running oracle and cases (default: all cores)");
  o.fuzz->add_option("--batch", o.batch,
                     "cases a job starts before it collects them, one device wait for all (default 8; 1: one at a time)");
  o.fuzz->add_option("--share", o.share,
                     "most of a variant's time spent on cases other variants of its kind drew, sharing their oracle "
                     "answer (default 0.5; 0: only its own cases)");
  o.fuzz->add_option("--shard", o.shard, "I/N: this run's share of the campaign (default 0/1)");
  o.fuzz->add_option("--corpus", o.corpus, "where case files of failures go (default poolgrad-cases)");
  o.fuzz->add_option("--report", o.report, "write the campaign report here (JSON)");
  o.fuzz->add_flag("--phases", o.phases, "print where each backend's case time went (draw, oracle, kernel...)");
  o.merge = app.add_subcommand("fuzz-merge", "merge the reports of a campaign's shards into one");
  o.merge->add_option("reports", o.reports, "shard reports (JSON)")->required();
  o.merge->add_option("--out", o.merged, "write the merged report here (JSON)");
}

int run_fuzz_command(FuzzCommandOptions& o) {
  const bool is_fuzz = o.fuzz->parsed();
  try {
    return is_fuzz ? run_campaign_command(o) : merge_command(o);
  } catch (const InvalidInput& e) {
    std::fprintf(stderr, "poolgrad %s: %s\n", is_fuzz ? "fuzz" : "fuzz-merge", e.what());
    return 2;
  }
}

}  // namespace pg
