// Planner speed: configurations costed per second and the wall time of a
// whole search, for a few model sizes and GPU counts (one core).
//
// Each case runs the search in the same process: exhaustively (every
// configuration costed: the evaluation rate; `--no-full` skips it), with the
// compute bound alone (the search before the rank-order bound: old_s), and as
// `axo plan` does, with the rank-order bound too (pruned_s: the wall time a
// user waits). vs_old is old_s / pruned_s, the rank-order bound's speed-up
// measured against the old search in the same run; the three must agree on
// the best configuration. A last run holds context=1 (the space before
// context parallelism): vs_ctx1 is the pruned search's time over that run's.
// The communication memo (model/cost_model.h) speeds up every run alike;
// its gain shows against an older binary's numbers, not in these ratios.
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

}  // namespace

int main(int argc, char** argv) {
  std::vector<Case> cases = {{"gpt3-13b", 256, "selene"},
                             {"llama3-70b", 1024, "dgx-h100"},
                             {"gpt3-175b", 4096, "selene"},
                             {"axonn-80b", 16384, "perlmutter"},
                             {"llama3-405b", 16384, "dgx-h100"},
                             {"megatron-1t", 16384, "selene"}};
  int repeats = 3;
  bool full = true;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--no-full") full = false;
    else repeats = std::stoi(argv[i]);
  }
  std::printf("%-12s %6s %-11s %12s %10s %14s %10s %12s %10s %8s %9s %10s %9s\n", "model", "gpus", "machine",
              "configs", "full_s", "configs/s", "old_s", "pruned_s", "evaluated", "vs_old", "vs_full", "ctx1_s",
              "vs_ctx1");
  for (const Case& c : cases) {
    const axo::CostModel model(axo::load_model(c.model), axo::load_machine(c.machine));
    axo::SearchOptions options;
    options.gpus = c.gpus;
    options.top = 10;
    axo::SearchResult exhaustive, old, pruned;
    options.prune = false;
    const double full_s = full ? best_of(repeats, [&] { exhaustive = axo::search(model, options); }) : 0;
    options.prune = true;
    options.paced_bound = false;
    const double old_s = best_of(repeats, [&] { old = axo::search(model, options); });
    options.paced_bound = true;
    const double pruned_s = best_of(repeats, [&] { pruned = axo::search(model, options); });
    axo::SearchOptions context_one = options;
    context_one.fixed.hold(axo::config_field("context"), 1);
    const double context_one_s = best_of(repeats, [&] { axo::search(model, context_one); });
    for (const axo::SearchResult* other : {&old, full ? &exhaustive : &old}) {
      if (pruned.best.empty() || other->best.empty() ||
          pruned.best.front().breakdown.iter_time != other->best.front().breakdown.iter_time ||
          !(pruned.best.front().config == other->best.front().config)) {
        std::fprintf(stderr, "%s: the searches disagree on the best configuration\n", c.model);
        return 1;
      }
    }
    std::printf("%-12s %6lld %-11s %12lld %10.3f %14.0f %10.3f %12.3f %10lld %7.2fx %8.1fx %10.3f %8.2fx\n", c.model,
                (long long)c.gpus, c.machine, (long long)(pruned.evaluated + pruned.pruned), full_s,
                full ? double(exhaustive.evaluated) / full_s : 0.0, old_s, pruned_s, (long long)pruned.evaluated,
                old_s / pruned_s, full ? full_s / pruned_s : 0.0, context_one_s, pruned_s / context_one_s);
  }
  return 0;
}
