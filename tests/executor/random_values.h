// Seeded random test inputs shared by the executor's op tests.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace axo::testing {

// n values from a normal distribution with standard deviation `scale`.
inline std::vector<float> random_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> values(n);
  for (float& v : values) v = normal(rng);
  return values;
}

}  // namespace axo::testing
