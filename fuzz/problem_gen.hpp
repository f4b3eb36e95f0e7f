// RapidCheck generators for random valid pooling problems and their data.
//
// Parameters are dependent (the input must be long enough for the window, u8 indices need
// fewer than 255 taps), so sizes are derived from the window rather than filtered, and no
// case is wasted on an invalid problem.
#pragma once

#include <rapidcheck.h>

#include "src/datagen.hpp"
#include "src/problem.hpp"

namespace pg::fuzz {

struct GenOptions {
  Op op = Op::max;
  bool disjoint = false;  // stride >= effective kernel on every axis (direct-store variants)
};

rc::Gen<Problem> problem(GenOptions opt);
rc::Gen<DataSpec> data_spec();

// RC_TAG/RC_CLASSIFY the edges a case exercises, so a run shows what it covered.
void classify(const Problem& p, const DataSpec& spec);

}  // namespace pg::fuzz
