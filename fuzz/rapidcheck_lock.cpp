#include "fuzz/rapidcheck_lock.hpp"

namespace pg::fuzz {

std::unique_lock<std::mutex> lock_rapidcheck() {
  static std::mutex m;
  return std::unique_lock<std::mutex>(m);
}

}  // namespace pg::fuzz
