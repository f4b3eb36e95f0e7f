// A block of conv_gemm_schedule() (kernels/conv/conv_gemm.hpp) on the host: each step runs for
// all 256 threads in turn. multiply() waits for the barrier, so every thread's stage() into the
// next buffer runs before any thread's multiply() of the current one: the most adversarial order
// a GPU may choose, so a stage that overwrote the buffer being read would show. conv.gemm.tc's
// CPU launch runs its blocks this way (its copies land at once), and tests/conv_gemm_host_test.cpp
// conv.gemm's.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>


namespace pg {

template <class Thread>
struct ConvGemmHostBlock {
  static constexpr int kThreads = 256;
  std::vector<Thread>& threads;
  typename Thread::Smem& smem;
  const typename Thread::Args& args;
  int x, y, z;
  int pending_multiply = -1;
  std::deque<int> async_multiplies{};  // conv.gemm.wgmma's, oldest first, run at retire()

  template <class Step>
  void every(Step step) {
    for (Thread& t : threads) step(t);
  }
  bool begin() {
    bool active = false;
    for (int t = 0; t < kThreads; ++t) active = threads[t].begin(args, smem, t, x, y, z);
    return active;
  }
  int iterations() const { return threads[0].iterations(); }
  void fetch() { every([](Thread& t) { t.fetch(); }); }
  void fetch(int slot) { every([&](Thread& t) { t.fetch(smem, slot); }); }  // conv.gemm.tc's ring
  void commit() { every([](Thread& t) { t.commit(); }); }
  void wait() { every([](Thread& t) { t.wait(); }); }
  void stage(int buf) { every([&](Thread& t) { t.stage(smem, buf); }); }
  void advance() { every([&](Thread& t) { t.advance(smem); }); }
  void multiply(int buf) { pending_multiply = buf; }
  // An asynchronous multiply reads its slot until the schedule retires it: it runs then, as
  // late as a GPU may read, so a copy into a slot still being read shows.
  void multiply_async(int buf) { async_multiplies.push_back(buf); }
  void retire(int pending) {
    while (static_cast<int>(async_multiplies.size()) > pending) {
      const int buf = async_multiplies.front();
      async_multiplies.pop_front();
      every([&](Thread& t) { t.multiply(smem, buf); });
    }
  }
  void barrier() {
    if (pending_multiply >= 0) every([&](Thread& t) { t.multiply(smem, pending_multiply); });
    pending_multiply = -1;
  }
  void finish() {
    barrier();  // a multiply the schedule left without a barrier still runs before the results go out
    retire(0);
    every([&](Thread& t) { t.finish(smem); });
  }
  void write_out() { every([&](Thread& t) { t.write_out(smem); }); }  // conv.gemm.wgmma's
};

// Runs block `index` of a grid (x fastest, then y, then z) with its own threads and shared memory:
// schedule(block), conv_gemm_schedule or conv_gemm_tc_schedule.
template <class Thread, class Schedule>
void run_conv_gemm_block_on_host(const typename Thread::Args& args, const int64_t* grid, int64_t index, Schedule&& schedule) {
  auto smem = std::make_unique<typename Thread::Smem>();
  std::vector<Thread> threads(ConvGemmHostBlock<Thread>::kThreads);
  const int x = static_cast<int>(index % grid[0]), y = static_cast<int>(index / grid[0] % grid[1]),
            z = static_cast<int>(index / grid[0] / grid[1]);
  ConvGemmHostBlock<Thread> block{threads, *smem, args, x, y, z};
  schedule(block);
}

// Every block of a grid on the host executor `ex`, the blocks spread over its threads.
template <class Thread, class Exec, class Schedule>
void run_conv_gemm_grid_on_host(const Exec& ex, const typename Thread::Args& args, const int64_t* grid, Schedule schedule) {
  ex.template for_each<int64_t>(grid[0] * grid[1] * grid[2],
                                [&](int64_t i) { run_conv_gemm_block_on_host<Thread>(args, grid, i, schedule); });
}

}  // namespace pg
