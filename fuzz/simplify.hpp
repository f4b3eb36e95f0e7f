// One-step simplifications of a failing problem, which a campaign tries after RapidCheck's own
// shrinks stop (fuzz/generated_target.hpp). RapidCheck shrinks a case the way its generator drew
// it: the sizes are drawn after the rank and the window, so a shrink of the rank or of a window
// parameter redraws them and rarely still fails the same way. From some first failures its greedy
// walk therefore stops at a local minimum (a 2D problem of height 1, a 9-tap window over 9
// elements, two groups of one channel), and which failure a campaign shrinks depends on which of
// its jobs saw one first. These steps change the problem itself, one parameter toward its simplest
// value with the rest kept: an axis dropped, a batch, channel or group count, a length, window,
// stride, dilation or padding lowered, channels-first for channels-last, f32 for another dtype.
// Every candidate is finalized and valid, and strictly simpler than p (the sum of its counts,
// lengths and window parameters, less on every step), so a greedy walk over them ends.
#pragma once

#include <vector>

#include "src/model/conv_problem.hpp"
#include "src/model/problem.hpp"

namespace pg::fuzz {

// Candidates in order: an axis dropped, then per parameter its simplest value, halfway to it, one
// step toward it.
std::vector<Problem> simpler_problems(const Problem& p);
std::vector<ConvProblem> simpler_conv_problems(const ConvProblem& p);

}  // namespace pg::fuzz
