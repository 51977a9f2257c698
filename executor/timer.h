// Wall-clock timing of a piece of work into a running total of seconds.
#pragma once

#include <chrono>

namespace axo {

// Adds the seconds `f` takes to `total`.
template <class F>
void timed(double& total, F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace axo
