#include "fuzz/generated_target.hpp"

#include <exception>

namespace pg::fuzz {

Trial discarded_trial(const std::string& why) {
  Trial t;
  t.verdict = Trial::Verdict::discard;
  t.why = why;
  return t;
}

Trial verified_trial(const Backend& b, CaseFile file, const std::string& replay, const std::function<Outcome()>& run,
                     const std::function<std::vector<std::string>()>& tags) {
  Outcome o;
  try {
    o = run();
  } catch (const std::exception& e) {
    o.status = Status::fail;
    o.signature = "threw while preparing the case";
    o.replay = replay;
    o.message = "FAIL " + file.variant + " on " + b.name() + ": " + e.what() + "\n  problem: " + file.problem +
                "\n  replay: " + replay;
  }
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

}  // namespace pg::fuzz
