// Work captured once as a GPU graph and replayed: how the benchmarks time a launch without the
// host's cost of issuing it. A batch of back-to-back launches costs the host 3.0-4.4 us a launch
// (H200 and H100, 2026-11-29: bench/results/2026-11-29_h200_copy_by_size.md), so below about
// 16 MiB of traffic a batch times the host, not the kernel; replayed from a graph, the same
// launches run as fast as the GPU takes them.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "src/model/backend.hpp"

namespace pg {

class GraphReplay {
 public:
  // What `record` enqueues on b's stream, captured (nothing runs). nullptr, with the reason in
  // *why, where it cannot be: the CPU backend, a build without a GPU runtime, or work that leaves
  // the stream (a library enqueuing on the device's default stream) or waits for it. The
  // backend's stream is usable afterwards either way.
  static std::unique_ptr<GraphReplay> capture(Backend& b, const std::function<void()>& record, std::string* why);
  ~GraphReplay();
  GraphReplay(const GraphReplay&) = delete;
  GraphReplay& operator=(const GraphReplay&) = delete;
  void launch();  // enqueues the captured work once more on the stream it was captured from

 private:
  GraphReplay() = default;
  void* stream_ = nullptr;
  void* graph_ = nullptr;
  void* exec_ = nullptr;
};

}  // namespace pg
