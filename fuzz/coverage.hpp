// What a fuzz case exercised, as tags, and which tags a variant's domain admits. A property
// counts the tags of the cases it ran and prints them per variant; a long run fails when a tag
// the domain admits never occurred, so a generator that stops reaching an edge is noticed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "src/harness/datagen.hpp"
#include "src/model/problem.hpp"
#include "src/harness/registry.hpp"

namespace pg::fuzz {

// The tags of one case: dims, layout, dtype, divisor or index format, tie and NaN rules, and the
// edges (ceil overhang, windows with no tap, kernel-1 padded axes, ties and NaN in a window...).
// `x`: the case's forward input when already made (the oracle's), else made here from `spec`.
std::vector<std::string> observed_tags(const Problem& p, const DataSpec& spec, Inputs inputs,
                                       const std::vector<double>* x = nullptr);

// The tags every long run of a property over `v`'s domain must show at least once.
std::vector<std::string> admitted_tags(const Variant& v);

class Coverage {
 public:
  void add(const std::vector<std::string>& tags);
  int64_t cases() const { return cases_; }
  // "tag: count (percent)" lines, most frequent first.
  std::string table() const;
  std::vector<std::string> missing(const std::vector<std::string>& expected) const;

 private:
  int64_t cases_ = 0;
  std::map<std::string, int64_t> counts_;
};

}  // namespace pg::fuzz
