#include "fuzz/interrupt.hpp"

#include <signal.h>

namespace pg::fuzz {
namespace {

std::atomic<bool> g_requested{false};
struct sigaction g_previous;

void on_interrupt(int) { g_requested.store(true); }

}  // namespace

StopOnInterrupt::StopOnInterrupt() {
  g_requested.store(false);
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sa.sa_flags = SA_RESETHAND;  // a second Ctrl-C meets the default action and ends the process
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_previous);
}

StopOnInterrupt::~StopOnInterrupt() { sigaction(SIGINT, &g_previous, nullptr); }

const std::atomic<bool>& StopOnInterrupt::requested() { return g_requested; }

}  // namespace pg::fuzz
