// Deadlines, so that a rank that dies or hangs cannot hang the others.
//
// A Watchdog thread is armed around each measurement (the timed collectives
// are blocking, as MPI's blocking collectives are the fast ones). If the
// measurement is not done in time, the watchdog prints which rank waited on
// what, runs the handler (which writes the partial profile), and ends the
// process; mpirun then stops every other rank.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace axo::calibration {

using Clock = std::chrono::steady_clock;

// A measurement whose result was wrong.
class CalibrationError : public std::runtime_error {
 public:
  explicit CalibrationError(const std::string& message) : std::runtime_error(message) {}
};

class Watchdog {
 public:
  // `on_timeout` gets the message; it runs on the watchdog's thread.
  Watchdog(int world_rank, std::function<void(const std::string&)> on_timeout);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(double timeout_s, std::string what);
  void disarm();

 private:
  void run();
  const int rank_;
  std::function<void(const std::string&)> on_timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool armed_ = false, stopping_ = false;
  Clock::time_point deadline_;
  double timeout_s_ = 0;
  std::string what_;
  std::thread thread_;
};

// Arms `watchdog` (when given) for one scope.
class Deadline {
 public:
  Deadline(Watchdog* watchdog, double timeout_s, std::string what) : watchdog_(watchdog) {
    if (watchdog_) watchdog_->arm(timeout_s, std::move(what));
  }
  ~Deadline() {
    if (watchdog_) watchdog_->disarm();
  }

 private:
  Watchdog* watchdog_;
};

}  // namespace axo::calibration
