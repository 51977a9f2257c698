// Statistics, tables and CSV of `axo validate` (see validation_summary.h).
#include "planner/validation_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace axo {

ErrorStats error_stats(const std::vector<double>& errors_pct) {
  ErrorStats s;
  s.count = int(errors_pct.size());
  if (errors_pct.empty()) return s;
  double sum_abs = 0, sum = 0;
  for (double e : errors_pct) {
    sum_abs += std::fabs(e);
    sum += e;
    if (std::fabs(e) > std::fabs(s.worst_pct)) s.worst_pct = e;
  }
  s.mean_abs_pct = sum_abs / s.count;
  s.bias_pct = sum / s.count;
  return s;
}

std::vector<GroupStats> summarize(const std::vector<ValidationEntry>& entries) {
  std::vector<std::pair<std::string, std::string>> keys;
  std::map<std::pair<std::string, std::string>, std::vector<double>> errors;
  for (const ValidationEntry& e : entries) {
    if (!e.expressed()) continue;
    const auto key = std::make_pair(e.source, e.gpu);
    if (!errors.count(key)) keys.push_back(key);
    errors[key].push_back(e.error_pct);
  }
  std::vector<GroupStats> groups;
  for (const auto& key : keys) groups.push_back({key.first, key.second, error_stats(errors[key])});
  return groups;
}

std::string summary_table(const std::vector<GroupStats>& groups) {
  // The GPU column as wide as its longest entry ("A100-80 on summit" under --machine), 14 at least.
  int gpu_width = 14;
  for (const GroupStats& g : groups) gpu_width = std::max(gpu_width, int(g.gpu.size()));
  std::string out;
  char line[400];
  std::snprintf(line, sizeof line, "%-24s %-*s %6s %11s %9s %9s\n", "source", gpu_width, "GPU", "count",
                "mean |err|", "worst", "bias");
  out += line;
  for (const GroupStats& g : groups) {
    std::snprintf(line, sizeof line, "%-24s %-*s %6d %10.1f%% %+8.1f%% %+8.1f%%\n", g.source.c_str(), gpu_width,
                  g.gpu.c_str(), g.stats.count, g.stats.mean_abs_pct, g.stats.worst_pct, g.stats.bias_pct);
    out += line;
  }
  return out;
}

std::string unexpressed_list(const std::vector<ValidationEntry>& entries) {
  std::vector<std::string> reasons;
  std::map<std::string, std::vector<std::string>> names;
  for (const ValidationEntry& e : entries) {
    if (e.expressed()) continue;
    if (!names.count(e.why_not)) reasons.push_back(e.why_not);
    names[e.why_not].push_back(e.name);
  }
  std::string out;
  for (const std::string& reason : reasons) {
    out += std::to_string(names[reason].size()) + " x " + reason + ":\n   ";
    for (const std::string& name : names[reason]) out += " " + name;
    out += "\n";
  }
  return out;
}

std::string memory_misses(const std::vector<ValidationEntry>& entries) {
  std::string out;
  char line[400];
  for (const ValidationEntry& e : entries) {
    if (!e.expressed() || e.fits || e.quantity != Quantity::iteration_s) continue;
    std::snprintf(line, sizeof line, "%-56s %-14s %7.1f GiB > %5.1f GiB usable%s%s\n", e.name.c_str(),
                  e.gpu.c_str(), e.memory_GiB, e.usable_GiB, e.memory_caveat.empty() ? "" : "  (",
                  e.memory_caveat.empty() ? "" : (e.memory_caveat + ")").c_str());
    out += line;
  }
  return out;
}

}  // namespace axo
