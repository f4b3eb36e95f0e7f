// RapidCheck keeps the context of a generation in process-wide stacks (rc::detail::ImplicitParam),
// so generators are not thread-safe: a campaign's jobs draw, evaluate and shrink their cases
// under this one lock. Drawing is cheap next to the oracle and the run it feeds.
#pragma once

#include <mutex>

namespace pg::fuzz {

std::unique_lock<std::mutex> lock_rapidcheck();

}  // namespace pg::fuzz
