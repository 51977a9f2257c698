// The property that a plan the planner emits is a plan the executor runs,
// and runs right: for 2, 4 and 8 ranks and two small models (gpt2-mini's 4
// layers, and 8 layers so that interleaved stages appear), `axo plan --top
// 400` on a preset machine; one plan per distinct combination of grid and
// options (everything but the microbatch), the best-ranked of each; every
// chosen plan trains 2 steps under mpirun and gives the losses of the
// single-rank run within 1e-5 relative. Plans with zero 1 and 2 are among
// them (zero is part of what makes a plan distinct).
//
// By default a seeded sample of kPlansPerCase plans per (model, ranks) runs
// (CTest: 6 cases, 48 plans, at least the 30 issue 17 asks of CI), each case's
// first interleaved and first sharded plan first;
// AXO_PROPERTY_PLANS=N samples N per case instead, the first N of the same
// shuffle (scripts/sanitize.sh runs 2: 12 plans took 141 s there under load,
// 48 took 845 s before); AXO_PROPERTY_ALL=1 runs every distinct plan
// (scripts/property_test.sh).
// axo-test-long
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/encoded_text_fixture.h"

namespace {

using axo::testing::CommandResult;

constexpr size_t kPlansPerCase = 8;
constexpr double kRelative = 1e-5;
const char* const kMachine = "perlmutter";
const char* const kTrain = "--steps 2 --seq 32";

CommandResult mpirun(int ranks, const std::string& arguments) {
  return axo::testing::run_command("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
                                   std::string(AXO_MPIEXEC) + " --oversubscribe -np " + std::to_string(ranks) + " " +
                                   AXO_BINARY + " " + arguments + " 2>&1");
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string field; std::getline(in, field, ',');) fields.push_back(field);
  return fields;
}

struct PlanRow {
  int rank = 0;         // in the ranked table
  std::string summary;  // its grid and options
};

// The best-ranked plan of each distinct combination of grid and options in a plan CSV.
std::vector<PlanRow> distinct_plans(const std::string& csv) {
  static const std::vector<std::string> kKey = {"pipeline", "data",    "context",    "x",     "y",     "z",
                                                "recompute", "offload", "overlap",    "interleave",
                                                "order",     "sequence_parallel", "zero"};
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split(line);
  std::map<std::string, PlanRow> seen;
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = split(line);
    std::string key;
    for (const std::string& name : kKey) {
      const size_t column = size_t(std::find(header.begin(), header.end(), name) - header.begin());
      key += name + "=" + (column < fields.size() ? fields[column] : "?") + " ";
    }
    const int rank = std::stoi(fields.at(0));
    if (!seen.count(key) || seen[key].rank > rank) seen[key] = {rank, key};
  }
  std::vector<PlanRow> plans;
  for (const auto& [key, row] : seen) plans.push_back(row);
  std::sort(plans.begin(), plans.end(), [](const PlanRow& a, const PlanRow& b) { return a.rank < b.rank; });
  return plans;
}

bool interleaved(const PlanRow& row) { return row.summary.find("interleave=1 ") == std::string::npos; }
bool sharded(const PlanRow& row) { return row.summary.find("zero=0 ") == std::string::npos; }

// A case's first interleaved plan and first plan with a sharded optimizer go to the front of its
// shuffled plans, so that every sample, 2 a case too, trains both kinds where the case has them
// (which plans a seeded shuffle draws changes with the ranking).
void put_kinds_first(std::vector<PlanRow>& plans) {
  auto front = plans.begin();
  for (bool (*kind)(const PlanRow&) : {interleaved, sharded}) {
    if (std::any_of(plans.begin(), front, kind)) continue;
    const auto found = std::find_if(front, plans.end(), kind);
    if (found != plans.end()) std::iter_swap(front++, found);
  }
}

// Plans sampled per (model, ranks): AXO_PROPERTY_PLANS if set (a positive count), else kPlansPerCase.
size_t plans_per_case() {
  const char* text = std::getenv("AXO_PROPERTY_PLANS");
  if (text == nullptr) return kPlansPerCase;
  const int count = std::atoi(text);
  if (count < 1) ADD_FAILURE() << "AXO_PROPERTY_PLANS=" << text << ": expected a positive count of plans per case";
  return size_t(std::max(count, 1));
}

std::vector<double> losses(const std::string& run_json) {
  std::ifstream in(run_json);
  std::vector<double> out;
  if (!in) return out;
  const nlohmann::json run = nlohmann::json::parse(in);
  for (const auto& step : run.at("steps")) out.push_back(step.at("loss").get<double>());
  return out;
}

class PlanProperty : public axo::testing::EncodedTextTest {
 protected:
  PlanProperty() : EncodedTextTest("axo_plan_property") {}
  std::string data() const { return "--data '" + path("lit_train_*.bin") + "' "; }

  // The single-rank run's losses for `model` (its global batch).
  std::vector<double> serial(const std::string& model, const std::string& name) {
    const CommandResult r = mpirun(1, "train --model " + model + " " + data() + kTrain + " --run " + path(name));
    EXPECT_EQ(r.code, 0) << r.output;
    return losses(path(name));
  }

  // Trains the plan ranked `row.rank` on `ranks` ranks; true when it matched.
  bool train(const std::string& model, int ranks, const PlanRow& row, const std::vector<double>& expected) {
    const std::string plan = path("plan.yaml"), run = path("run.json");
    std::filesystem::remove(run);
    const std::string plan_args = "plan --model " + model + " --gpus " + std::to_string(ranks) + " --machine " +
                                  kMachine + " --top 400";
    CommandResult r = axo::testing::run_axo(plan_args + " --rank " + std::to_string(row.rank) + " --out " + plan);
    if (r.code != 0) return ADD_FAILURE() << r.output, false;
    r = mpirun(ranks, "train --plan " + plan + " " + data() + kTrain + " --run " + run);
    const std::vector<double> measured = losses(run);
    bool same = r.code == 0 && measured.size() == expected.size();
    for (size_t i = 0; same && i < expected.size(); ++i) {
      same = std::abs(measured[i] - expected[i]) <= kRelative * std::abs(expected[i]);
    }
    EXPECT_TRUE(same) << model << " on " << ranks << " ranks, plan " << row.rank << " (" << row.summary
                      << "): exit " << r.code << ", losses " << ::testing::PrintToString(measured) << " against "
                      << ::testing::PrintToString(expected) << "\n"
                      << r.output;
    return same;
  }
};

TEST_F(PlanProperty, EveryDistinctPlanTrainsTheSerialModel) {
  const bool all = std::getenv("AXO_PROPERTY_ALL") != nullptr;
  const size_t per_case = plans_per_case();
  const std::string models[] = {"gpt2-mini", std::string(AXO_SOURCE_DIR) + "/tests/executor/parallel/gpt2-8-layers.yaml"};
  std::mt19937 rng(17);
  int ran = 0, interleaved_count = 0, sharded_count = 0;
  for (const std::string& model : models) {
    const std::vector<double> expected = serial(model, "serial.json");
    ASSERT_EQ(expected.size(), 2u);
    for (int ranks : {2, 4, 8}) {
      const std::string csv = path("plans.csv");
      const CommandResult r = axo::testing::run_axo("plan --model " + model + " --gpus " + std::to_string(ranks) +
                                                    " --machine " + kMachine + " --top 400 --csv " + csv);
      ASSERT_EQ(r.code, 0) << r.output;
      std::vector<PlanRow> plans = distinct_plans(csv);
      ASSERT_FALSE(plans.empty()) << model << " on " << ranks << " ranks";
      if (!all) {
        std::shuffle(plans.begin(), plans.end(), rng);
        put_kinds_first(plans);
        plans.resize(std::min(plans.size(), per_case));
      }
      for (const PlanRow& row : plans) {
        const bool same = train(model, ranks, row, expected);
        std::printf("%s %s, %d ranks, plan %d: %s\n", same ? "ok  " : "FAIL", model.c_str(), ranks, row.rank,
                    row.summary.c_str());
        std::fflush(stdout);
        ++ran;
        interleaved_count += interleaved(row);
        sharded_count += sharded(row);
      }
    }
  }
  std::printf("%d plans trained, %d of them interleaved, %d with the optimizer sharded (zero 1 or 2)\n", ran,
              interleaved_count, sharded_count);
  EXPECT_GE(ran, std::min(30, 6 * int(per_case)));  // 30 at the default sample (issue 17)
  EXPECT_GT(interleaved_count, 0);
  EXPECT_GT(sharded_count, 0);
}

}  // namespace
