// Waiting with a deadline, so that a rank that dies or hangs cannot hang the
// others: every operation of a calibration is started non-blocking and
// polled until it completes or its time is up.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>

#include "executor/comm/communicator.h"

namespace axo::calibration {

using Clock = std::chrono::steady_clock;

// A measurement that did not finish in time, or whose result was wrong.
class CalibrationError : public std::runtime_error {
 public:
  explicit CalibrationError(const std::string& message) : std::runtime_error(message) {}
};

// Polls `request` until done; after `timeout_s` throws a CalibrationError
// naming this rank and `what`.
void wait_or_fail(Request& request, double timeout_s, int world_rank, const std::string& what);

}  // namespace axo::calibration
