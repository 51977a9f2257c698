// The watchdog (see deadline.h).
#include "calibrate/deadline.h"

#include <cstdio>
#include <cstdlib>

namespace axo::calibration {

Watchdog::Watchdog(int world_rank, std::function<void(const std::string&)> on_timeout)
    : rank_(world_rank), on_timeout_(std::move(on_timeout)), thread_([this] { run(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void Watchdog::arm(double timeout_s, std::string what) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    armed_ = true;
    timeout_s_ = timeout_s;
    deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
    what_ = std::move(what);
  }
  changed_.notify_all();
}

void Watchdog::disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  armed_ = false;
}

void Watchdog::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (!armed_) {
      changed_.wait(lock);
      continue;
    }
    if (changed_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ &&
        Clock::now() >= deadline_) {
      char within[32];
      std::snprintf(within, sizeof within, "%g", timeout_s_);
      const std::string message = "rank " + std::to_string(rank_) + ": " + what_ + " did not complete within " +
                                  within + " s (a rank of its group is dead or hung)";
      std::fprintf(stderr, "\naxo calibrate: %s\n", message.c_str());
      std::fflush(stderr);
      if (on_timeout_) on_timeout_(message);
      std::_Exit(1);
    }
  }
}

}  // namespace axo::calibration
