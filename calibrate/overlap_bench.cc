// Measuring how much a collective overlaps compute (see overlap_bench.h).
#include "calibrate/overlap_bench.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "executor/cpu/gemm.h"

namespace axo::calibration {

namespace {

// The slowest rank's seconds per run of `runs` runs of `work`, which holds a
// collective: every rank runs it the same number of times.
double slowest_of_runs(Communicator& world, double timeout_s, Watchdog* watchdog, const std::string& what, int runs,
                       const std::function<void()>& work) {
  const Deadline deadline(watchdog, timeout_s, what);
  work();  // warm-up
  float seconds[1] = {0};
  world.all_reduce(seconds, 1);  // start together
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) work();
  const double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / runs;
  std::vector<float> all(size_t(world.size()), 0.0f);
  all[size_t(world.rank())] = float(mine);
  world.all_reduce(all.data(), all.size());
  return double(*std::max_element(all.begin(), all.end()));
}

}  // namespace

OverlapMeasurement measure_overlap(Communicator& world, double timeout_s, Watchdog* watchdog) {
  const int64_t n = 384;  // a GEMM of a few milliseconds on a CPU core
  const int runs = 20;
  std::vector<float> a(size_t(n * n), 0.5f), b(size_t(n * n), 0.25f), c(size_t(n * n));
  auto gemm = [&] { cpu::gemm(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n); };
  OverlapMeasurement r;
  r.gemm_s = slowest_of_runs(world, timeout_s, watchdog, "overlap: GEMM", runs, gemm);
  // Grow the all-gather until it takes about as long as the GEMM (every rank
  // sees the same slowest times, so all take the same sizes).
  std::vector<float> send, receive;
  auto gather = [&] { world.start_all_gather(send.data(), receive.data(), send.size())->wait(); };
  for (size_t count = 1024;; count *= 2) {
    send.assign(count, 1.0f);
    receive.assign(count * size_t(world.size()), 0.0f);
    r.collective_s = slowest_of_runs(world, timeout_s, watchdog, "overlap: all_gather", runs, gather);
    if (r.collective_s >= r.gemm_s || count >= (size_t(1) << 22)) break;
  }
  r.overlapped_s = slowest_of_runs(world, timeout_s, watchdog, "overlap: all_gather under GEMM", runs, [&] {
    RequestPtr request = world.start_all_gather(send.data(), receive.data(), send.size());
    gemm();
    request->wait();
  });
  const double hidden = r.gemm_s + r.collective_s - r.overlapped_s;
  r.efficiency = std::clamp(hidden / std::min(r.gemm_s, r.collective_s), 0.0, 1.0);
  return r;
}

}  // namespace axo::calibration
