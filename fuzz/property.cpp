#include "fuzz/property.hpp"

#include <rapidcheck.h>

#include <cstdint>
#include <iostream>
#include <sstream>

namespace pg::fuzz {
namespace {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

}  // namespace

void Property::discard(const std::string& why) {
  if (!failed_) {
    ++generated_;
    ++discarded_;
    ++discard_reasons_[why];
  }
  RC_DISCARD(why);
  throw;  // unreachable: RC_DISCARD throws
}

void Property::ran(const std::vector<std::string>& tags) {
  if (failed_) return;  // shrinking: the counts describe the run up to the first failure
  ++generated_;
  coverage_.add(tags);
}

void Property::fail(const std::string& message) {
  if (!failed_) {
    ++generated_;
    failed_ = true;
    first_failure_ = message;
    std::cerr << message << std::endl;
  }
  RC_FAIL(message);
  throw;  // unreachable: RC_FAIL throws
}

bool Property::selected() const {
  const auto& reproduce = rc::detail::configuration().reproduce;
  return reproduce.empty() || reproduce.count(id_) != 0;
}

bool Property::check(const std::function<void()>& body, const std::vector<std::string>& must_cover,
                     std::string* report) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.seed ^= fnv1a(id_);
  rc::detail::TestMetadata metadata;
  metadata.id = id_;
  metadata.description = id_;
  const rc::detail::TestResult result =
      rc::detail::checkProperty(rc::detail::toProperty([&] { body(); }), metadata, params);

  std::ostringstream o;
  o.precision(3);
  bool ok = result.is<rc::detail::SuccessResult>();
  o << id_ << ": " << coverage_.cases() << " cases ran, " << discarded_ << " of " << generated_
    << " generated discarded (seed " << params.seed << ")\n";
  if (!ok) {
    std::ostringstream rc_text;
    rc::detail::printResultMessage(result, rc_text);
    o << rc_text.str() << "\n";
    if (!first_failure_.empty()) o << "first failure (replay it with its 'replay:' line):\n" << first_failure_ << "\n";
  }
  if (discarded_ * 20 > generated_) {
    ok = false;
    o << "FAIL: more than 5% of the generated cases were outside what the variant supports; the domain "
         "and supports() disagree:\n";
    for (const auto& [why, n] : discard_reasons_) o << "    " << n << "x " << why << "\n";
  }
  if (coverage_.cases() >= kLongRun) {
    const std::vector<std::string> missing = coverage_.missing(must_cover);
    if (!missing.empty()) {
      ok = false;
      o << "FAIL: a long run never produced these cases the domain admits:";
      for (const std::string& t : missing) o << " [" << t << "]";
      o << "\n";
    }
  }
  o << "  coverage:\n" << coverage_.table();
  *report = o.str();
  return ok;
}

}  // namespace pg::fuzz
