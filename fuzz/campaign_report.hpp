// What a campaign did, per variant and backend (a lane): cases, discards, time, coverage tags and
// distinct failures. Written as JSON by `poolgrad fuzz --report`, merged over shards by
// `poolgrad fuzz-merge`, printed as the end-of-campaign table.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pg::fuzz {

struct FailureRecord {
  std::string signature;
  std::string case_file;  // where the shrunk case was written
  std::string problem;    // the shrunk case's problem line
  int64_t count = 0;      // cases that failed this way (the first one shrunk)
  double first_s = 0;     // seconds into the campaign when the first one failed
};

struct LaneReport {
  std::string variant, backend;
  int64_t cases = 0;      // run and verified (passed or failed)
  int64_t discarded = 0;  // drawn by its generator but outside what the variant supports
  // of `cases`, those another variant's generator of its group drew (fuzz/campaign.hpp)
  int64_t from_group = 0;
  // oracle answers this lane computed; its other cases reused the answer another lane of its
  // group computed for the same case
  int64_t oracles = 0;
  double busy_s = 0;      // thread time spent on the lane's cases
  std::map<std::string, int64_t> tags;  // coverage tags of the passing cases
  std::vector<std::string> admitted;    // the tags the variant's domain admits
  std::vector<FailureRecord> failures;  // one per distinct signature
  // busy_s split by where it went (src/harness/case_phases.hpp): phase name -> seconds
  std::map<std::string, double> phase_s;

  int64_t admitted_reached() const;
};

struct CampaignReport {
  uint64_t seed = 0;
  int shard_count = 1;
  std::vector<int> shards;  // the shard indices this report covers
  int jobs = 0;
  double elapsed_s = 0;     // wall time; a merge keeps the longest shard's
  bool interrupted = false; // stopped by Ctrl-C (a merge: any shard was)
  std::vector<LaneReport> lanes;

  int64_t cases() const;
  int64_t distinct_failures() const;
};

nlohmann::json to_json(const CampaignReport& r);
// Throws std::runtime_error naming the field when `j` is not a campaign report.
CampaignReport report_from_json(const nlohmann::json& j);

// Shard reports of one campaign (same seed and shard count, no shard twice) as one: counts,
// times and tags add up, failures join by (variant, backend, signature). Throws
// std::runtime_error saying which report does not fit.
CampaignReport merge_reports(const std::vector<CampaignReport>& parts);

// Where the lanes' time went, per backend: cases, then per phase the microseconds per case and
// the share of the backend's busy time (`poolgrad fuzz --phases`).
std::string phase_table(const CampaignReport& r);

// The end-of-campaign table: per lane cases, cases/s, discards, tags reached of admitted, distinct failures
// (each with its case file), then the totals.
std::string report_table(const CampaignReport& r);

}  // namespace pg::fuzz
