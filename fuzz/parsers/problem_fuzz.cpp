// libFuzzer entry for the problem-string parser (parse_problem, the text `poolgrad replay
// --problem` reads): any text either parses or says why in one line. A parsed problem must
// print and parse back to the same text; a valid small one runs through the oracle, whose
// window loops must stay inside the input whatever the kernel, stride, dilation and padding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "reference/pool_reference.hpp"
#include "src/model/problem.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  pg::Problem p;
  std::string error;
  if (!pg::parse_problem(text, &p, &error)) {
    if (error.empty() || error.find('\n') != std::string::npos) __builtin_trap();
    return 0;
  }
  const std::string printed = pg::to_string(p);
  pg::Problem again;
  if (!pg::parse_problem(printed, &again, &error) || pg::to_string(again) != printed) __builtin_trap();
  if (!pg::validate(p).empty()) return 0;
  // Clipped loops cost at most (outputs x input plane) per plane: keep each run to ~1M steps.
  if (p.in_elems() > 4096 || p.out_elems() > 4096 || p.out_elems() * p.in_plane() > (int64_t{1} << 20)) return 0;
  std::vector<double> x(static_cast<size_t>(p.in_elems())), dy(static_cast<size_t>(p.out_elems()));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 7) - 3;
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<double>(i % 5) + 1;
  const pg::ref::Forward f = pg::ref::forward(p, x);
  if (p.op == pg::Op::max) {
    pg::ref::backward_max_recompute(p, x, dy);
    pg::ref::backward_max_indices(p, dy, f.index);  // its own indices are always taps
  } else {
    pg::ref::backward_avg(p, dy);
  }
  return 0;
}
