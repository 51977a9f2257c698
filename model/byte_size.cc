// Byte sizes as text (see byte_size.h).
#include "model/byte_size.h"

#include <cmath>
#include <cstdio>
#include <utility>

#include "model/error.h"

namespace axo {

std::string format_bytes(double bytes) {
  char text[64];
  if (bytes >= double(1ull << 30)) {
    std::snprintf(text, sizeof text, "%.2f GiB", bytes / double(1ull << 30));
  } else if (bytes >= double(1ull << 20)) {
    std::snprintf(text, sizeof text, "%.2f MiB", bytes / double(1ull << 20));
  } else if (bytes >= 1024) {
    std::snprintf(text, sizeof text, "%.1f KiB", bytes / 1024);
  } else {
    std::snprintf(text, sizeof text, "%.0f B", bytes);
  }
  return text;
}

int64_t parse_bytes(const std::string& text, const std::string& option) {
  static const std::pair<const char*, double> kUnits[] = {
      {"KiB", 1024.0}, {"MiB", 1024.0 * 1024}, {"GiB", 1024.0 * 1024 * 1024}, {"TiB", 1024.0 * 1024 * 1024 * 1024},
      {"KB", 1e3},     {"MB", 1e6},            {"GB", 1e9},                   {"TB", 1e12},
      {"B", 1.0},      {"", 1.0}};
  const auto bad = [&] {
    return InputError(option + ": expected a positive size such as 1048576, 512MiB, 80GiB or 2.5GB, got '" + text + "'");
  };
  size_t used = 0;
  double number = 0;
  try {
    number = std::stod(text, &used);
  } catch (const std::exception&) {
    throw bad();
  }
  size_t unit_start = used;
  while (unit_start < text.size() && text[unit_start] == ' ') ++unit_start;
  const std::string unit = text.substr(unit_start);
  for (const auto& [name, scale] : kUnits) {
    if (unit != name) continue;
    const double bytes = std::round(number * scale);
    if (!(bytes >= 1) || bytes > 9e18) throw bad();
    return int64_t(bytes);
  }
  throw bad();
}

}  // namespace axo
