// Planner speed: configurations costed per second and the wall time of a
// whole search, for a few model sizes and GPU counts (one core).
//
// Usage: plan_bench [REPEATS] [--no-full] [--only MODEL]
//   REPEATS     runs of each search; the fastest is reported (default 3)
//   --no-full   skip the exhaustive search (the slowest by far)
//   --only      run only the case of that model (e.g. axonn-80b)
//
// Each case runs the search in the same process, every field searched
// (context and zero included):
//   full_s    exhaustively (every configuration costed: the evaluation rate)
//   old_s     with the compute bound alone (the search before the rank-order bound)
//   before_s  with the compute and rank-order bounds, checked per setting and
//             per rank order (the search before the setting bounds)
//   pruned_s  as `axo plan` does: also the setting bounds (search.h), the
//             wall time a user waits
// vs_old, vs_before and vs_full are those times over pruned_s: each speed-up
// measured against the older search in the same run, on the same machine
// load. Every search must give the same ranked rows (configurations and
// iteration times; the same closest configuration where nothing fits, as in
// the last case), else the bench fails. A last run holds context=1 (the
// space before context parallelism): vs_ctx1 is pruned_s over its time.
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "model/presets.h"
#include "planner/search.h"

namespace {

struct Case {
  const char* model;
  int64_t gpus;
  const char* machine;
};

double best_of(int repeats, const std::function<void()>& run) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// Whether two searches ranked the same configurations with the same iteration times; where
// nothing fits, whether they found the same closest configuration.
bool same_rows(const axo::SearchResult& a, const axo::SearchResult& b) {
  if (a.best.empty() && b.best.empty() && a.closest && b.closest) {
    return a.closest->config == b.closest->config &&
           a.closest->breakdown.memory.total() == b.closest->breakdown.memory.total();
  }
  if (a.best.empty() || a.best.size() != b.best.size()) return false;
  for (size_t i = 0; i < a.best.size(); ++i) {
    if (!(a.best[i].config == b.best[i].config) || a.best[i].breakdown.iter_time != b.best[i].breakdown.iter_time) {
      return false;
    }
  }
  return true;
}

// The searches of one case, their times and the rows they agree on.
struct Timings {
  double full_s = 0, old_s = 0, before_s = 0, pruned_s = 0, context_one_s = 0;
  axo::SearchResult exhaustive, old, before, pruned;
};

Timings time_searches(const Case& c, int repeats, bool full) {
  const axo::CostModel model(axo::load_model(c.model), axo::load_machine(c.machine));
  axo::SearchOptions options;
  options.gpus = c.gpus;
  options.top = 10;
  Timings t;
  options.prune = false;
  if (full) t.full_s = best_of(repeats, [&] { t.exhaustive = axo::search(model, options); });
  options.prune = true;
  options.paced_bound = false;
  options.setting_bounds = false;
  t.old_s = best_of(repeats, [&] { t.old = axo::search(model, options); });
  options.paced_bound = true;
  t.before_s = best_of(repeats, [&] { t.before = axo::search(model, options); });
  options.setting_bounds = true;
  t.pruned_s = best_of(repeats, [&] { t.pruned = axo::search(model, options); });
  axo::SearchOptions context_one = options;
  context_one.fixed.hold(axo::config_field("context"), 1);
  t.context_one_s = best_of(repeats, [&] { axo::search(model, context_one); });
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Case> cases = {{"gpt3-13b", 256, "selene"},
                             {"llama3-70b", 1024, "dgx-h100"},
                             {"gpt3-175b", 4096, "selene"},
                             {"axonn-80b", 16384, "perlmutter"},
                             {"llama3-405b", 16384, "dgx-h100"},
                             {"megatron-1t", 16384, "selene"},
                             {"megatron-1t", 64, "perlmutter"}};  // nothing fits: the closest configuration
  int repeats = 3;
  bool full = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--no-full") {
      full = false;
    } else if (arg == "--only" && i + 1 < argc) {
      const std::string only = argv[++i];
      std::erase_if(cases, [&](const Case& c) { return only != c.model; });
    } else {
      repeats = std::stoi(arg);
    }
  }
  std::printf("%-12s %6s %-11s %12s %9s %12s %9s %9s %9s %10s %8s %9s %8s %8s %8s\n", "model", "gpus", "machine",
              "configs", "full_s", "configs/s", "old_s", "before_s", "pruned_s", "evaluated", "vs_old", "vs_before",
              "vs_full", "ctx1_s", "vs_ctx1");
  for (const Case& c : cases) {
    const Timings t = time_searches(c, repeats, full);
    for (const axo::SearchResult* other : {&t.old, &t.before, full ? &t.exhaustive : &t.old}) {
      if (!same_rows(t.pruned, *other)) {
        std::fprintf(stderr, "%s: the searches disagree on the ranked configurations\n", c.model);
        return 1;
      }
    }
    std::printf("%-12s %6lld %-11s %12lld %9.3f %12.0f %9.3f %9.3f %9.3f %10lld %7.2fx %8.2fx %7.1fx %8.3f %7.2fx\n",
                c.model, (long long)c.gpus, c.machine, (long long)(t.pruned.evaluated + t.pruned.pruned), t.full_s,
                full ? double(t.exhaustive.evaluated) / t.full_s : 0.0, t.old_s, t.before_s, t.pruned_s,
                (long long)t.pruned.evaluated, t.old_s / t.pruned_s, t.before_s / t.pruned_s,
                full ? t.full_s / t.pruned_s : 0.0, t.context_one_s, t.pruned_s / t.context_one_s);
  }
  return 0;
}
