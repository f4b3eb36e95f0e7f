// Ctrl-C during a campaign: the first SIGINT asks the campaign to stop (cases in flight finish,
// the table and report are written); a second one ends the process the usual way.
#pragma once

#include <atomic>

namespace pg::fuzz {

class StopOnInterrupt {
 public:
  StopOnInterrupt();  // installs the handler and clears the flag
  ~StopOnInterrupt();  // puts the previous SIGINT action back
  StopOnInterrupt(const StopOnInterrupt&) = delete;
  StopOnInterrupt& operator=(const StopOnInterrupt&) = delete;

  // Set by the first SIGINT while this object lives.
  static const std::atomic<bool>& requested();
};

}  // namespace pg::fuzz
