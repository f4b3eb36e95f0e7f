#include "fuzz/generated_target.hpp"

#include <exception>

namespace pg::fuzz {
namespace {

// A case whose preparation or run threw: its failure, without a run's report.
Outcome threw(const Backend& b, const CaseFile& file, const std::string& replay, const std::exception& e) {
  Outcome o;
  o.status = Status::fail;
  o.signature = "threw while preparing the case";
  o.replay = replay;
  o.message = "FAIL " + file.variant + " on " + b.name() + ": " + e.what() + "\n  problem: " + file.problem +
              "\n  replay: " + replay;
  return o;
}

Trial trial_of(const Backend& b, CaseFile file, const Outcome& o, const std::function<std::vector<std::string>()>& tags) {
  Trial t;
  if (o.status == Status::pass) {
    t.tags = tags();
    return t;
  }
  t.verdict = Trial::Verdict::fail;
  t.backend_lost = b.kind() == BackendKind::gpu && o.signature == "the run failed";
  t.signature = o.signature;
  t.message = o.message;
  file.backend = b.name();
  t.case_file = case_json(file, o.signature, o.message, o.replay);
  return t;
}

}  // namespace

Trial discarded_trial(const std::string& why) {
  Trial t;
  t.verdict = Trial::Verdict::discard;
  t.why = why;
  return t;
}

StartedTrial started_trial(const Backend& b, CaseFile file, const std::string& replay,
                           const std::function<FinishVerify()>& start,
                           std::function<std::vector<std::string>()> tags) {
  FinishVerify finish;
  try {
    finish = start();
  } catch (const std::exception& e) {
    return [t = trial_of(b, file, threw(b, file, replay, e), tags)] { return t; };
  }
  return [&b, file = std::move(file), replay, finish = std::move(finish), tags = std::move(tags)] {
    Outcome o;
    try {
      o = finish();
    } catch (const std::exception& e) {
      o = threw(b, file, replay, e);
    }
    return trial_of(b, file, o, tags);
  };
}

}  // namespace pg::fuzz
