// Polling with a deadline (see deadline.h).
#include "calibrate/deadline.h"

#include <thread>

namespace axo::calibration {

void wait_or_fail(Request& request, double timeout_s, int world_rank, const std::string& what) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  int polls = 0;
  while (!request.test()) {
    if (Clock::now() > deadline) {
      throw CalibrationError("rank " + std::to_string(world_rank) + ": " + what +
                             " did not complete within " + std::to_string(int(timeout_s)) +
                             " s (a rank of its group is dead or hung)");
    }
    // Spin briefly for latency measurements, then yield the core.
    if (++polls > 1000) std::this_thread::yield();
  }
}

}  // namespace axo::calibration
