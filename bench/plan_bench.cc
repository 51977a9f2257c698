// Planner speed: configurations costed per second and the wall time of a
// whole search, for a few model sizes and GPU counts (one core).
//
// Each case runs the search twice in the same process: exhaustively (every
// configuration costed: the evaluation rate) and with branch and bound (what
// `axo plan` does: the wall time a user waits). The ratio of the two wall
// times is the pruning's speed-up, measured against its own baseline. A third
// run holds context=1 (the space before context parallelism): the last
// column is the pruned search's time over that run's, the cost of the context
// dimension measured in the same process.
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
  const int repeats = argc > 1 ? std::stoi(argv[1]) : 3;
  std::printf("%-12s %6s %-11s %12s %10s %14s %12s %10s %9s %10s %9s\n", "model", "gpus", "machine",
              "configs", "full_s", "configs/s", "pruned_s", "evaluated", "speedup", "ctx1_s", "vs_ctx1");
  for (const Case& c : cases) {
    const axo::CostModel model(axo::load_model(c.model), axo::load_machine(c.machine));
    axo::SearchOptions options;
    options.gpus = c.gpus;
    options.top = 10;
    axo::SearchResult exhaustive, pruned;
    options.prune = false;
    const double full_s = best_of(repeats, [&] { exhaustive = axo::search(model, options); });
    options.prune = true;
    const double pruned_s = best_of(repeats, [&] { pruned = axo::search(model, options); });
    axo::SearchOptions context_one = options;
    context_one.fixed.hold(axo::config_field("context"), 1);
    const double context_one_s = best_of(repeats, [&] { axo::search(model, context_one); });
    if (pruned.best.empty() || exhaustive.best.empty() ||
        pruned.best.front().breakdown.iter_time != exhaustive.best.front().breakdown.iter_time) {
      std::fprintf(stderr, "%s: pruned and exhaustive searches disagree\n", c.model);
      return 1;
    }
    std::printf("%-12s %6lld %-11s %12lld %10.3f %14.0f %12.3f %10lld %8.1fx %10.3f %8.2fx\n", c.model,
                (long long)c.gpus, c.machine, (long long)exhaustive.evaluated, full_s,
                double(exhaustive.evaluated) / full_s, pruned_s, (long long)pruned.evaluated,
                full_s / pruned_s, context_one_s, pruned_s / context_one_s);
  }
  return 0;
}
