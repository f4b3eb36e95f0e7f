// Runs a RapidCheck property the way every poolgrad property runs: its own seed (the configured
// seed mixed with the property's id, so no two properties draw the same problem sequence), the
// configured case count, discards counted and limited to 5% of the generated cases, coverage
// tags counted and printed, and the first failure printed in full, replay line included, the
// moment it happens (a racy failure that does not reproduce while shrinking still leaves it).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fuzz/coverage.hpp"

namespace pg::fuzz {

class Property {
 public:
  explicit Property(std::string id) : id_(std::move(id)) {}

  // Called by the property body, in this order: discard() (counted, with its reason) or ran()
  // then fail() when the case is wrong.
  [[noreturn]] void discard(const std::string& why);
  void ran(const std::vector<std::string>& tags);
  [[noreturn]] void fail(const std::string& message);

  // Runs `body` as the property. `must_cover` tags are required only in long runs (at least
  // kLongRun cases). Returns true when it passed; `report` gets the coverage table and, on
  // failure, why.
  bool check(const std::function<void()>& body, const std::vector<std::string>& must_cover, std::string* report);

  // False when RC_PARAMS asks to reproduce some other property: this one has nothing to run.
  bool selected() const;

  static constexpr int kLongRun = 5000;

 private:
  std::string id_;
  bool failed_ = false;
  int64_t generated_ = 0, discarded_ = 0;
  std::map<std::string, int64_t> discard_reasons_;
  std::string first_failure_;
  Coverage coverage_;
};

}  // namespace pg::fuzz
