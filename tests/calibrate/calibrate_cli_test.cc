// `axo calibrate` under mpirun: faults are caught with a message naming the
// rank and operation, a partial profile is written, bad launches exit 2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <tuple>
#include <vector>

#include "model/machine_profile.h"
#include "model/yaml_fields.h"
#include "tests/run_command.h"

namespace {

namespace fs = std::filesystem;

using Result = axo::testing::CommandResult;

Result mpirun(int ranks, const std::string& arguments) {
  return axo::testing::run_command(std::string("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ") +
                                   AXO_MPIEXEC + " --oversubscribe -np " + std::to_string(ranks) + " " +
                                   AXO_BINARY + " calibrate " + arguments + " 2>&1");
}

std::string temp(const std::string& name) {
  return (fs::temp_directory_path() / ("axo_calcli_" + std::to_string(::getpid()) + "_" + name)).string();
}

TEST(CalibrateCli, CorruptedResultIsCaught) {
  const std::string out = temp("corrupt.yaml");
  const Result r = mpirun(2, "--quick --ops all_reduce --min-bytes 1024 --max-bytes 4096 --inject-fault corrupt --out " + out);
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("rank 1: all_reduce of 1024 bytes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the collective is wrong"), std::string::npos) << r.output;
  ASSERT_TRUE(fs::exists(out)) << "the partial profile";
  const YAML::Node root = axo::load_yaml_file(out);
  EXPECT_FALSE(root["metadata"]["complete"].as<bool>());
  EXPECT_NO_THROW(axo::load_machine_profile(out));  // partial, but a valid profile
  EXPECT_NE(axo::load_machine_profile(out).incomplete.find("rank 1: all_reduce of 1024 bytes"), std::string::npos);
  const Result plan = axo::testing::run_command(std::string(AXO_BINARY) + " plan --model gpt2-mini --gpus 2 --top 1 --machine " +
                                                out + " 2>&1");
  EXPECT_NE(plan.output.find("Note: " + out + " is a partial calibration (rank 1: all_reduce"), std::string::npos)
      << plan.output;
  fs::remove(out);
}

TEST(CalibrateCli, HungRankEndsWithAMessage) {
  const std::string out = temp("hang.yaml");
  const Result r = mpirun(2, "--quick --ops all_reduce --max-bytes 4096 --timeout 3 --inject-fault hang:1 --out " + out);
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("rank 0: all_reduce"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("did not complete within 3 s"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(out));
  fs::remove(out);
}

TEST(CalibrateCli, BadLaunchesExitTwo) {
  Result r = mpirun(1, "--quick --out " + temp("one.yaml"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("needs at least 2 ranks"), std::string::npos) << r.output;
  r = mpirun(4, "--quick --ranks-per-node 3 --out " + temp("three.yaml"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("--ranks-per-node 3 does not divide the 4 ranks"), std::string::npos) << r.output;
  r = mpirun(2, "--quick --ops all_reduce,teleport --out " + temp("ops.yaml"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("unknown collective 'teleport'"), std::string::npos) << r.output;
}

// Launches that would measure nothing, and names that would become shell lines in a Slurm script,
// are refused before any measurement, writing nothing.
TEST(CalibrateCli, LaunchesThatMeasureNoCollectiveAreRefused) {
  const std::vector<std::tuple<int, std::string, std::string>> launches = {
      {3, "", "none tiles 3 ranks: launch an even number"},
      {2, "--min-bytes 1e6 --max-bytes 1e3", "--min-bytes 1000000 is more than the largest message, 1000 bytes"},
      {2, "--ops all_reduce --min-bytes 0.5 --max-bytes 1", "leave one message size over groups of 2 (8 bytes"},
      {2, "--ops all_reduce --min-bytes 1000 --max-bytes 1500", "leave one message size over groups of 2 (1000 bytes"},
      {2, "--min-bytes 1e14 --max-bytes 1e15", "--max-bytes 1000000000000000: its collectives need about 4 x that"},
      {2, "--inject-fault hang:5", "hang:5: this launch has ranks 0 to 1"},
      {2, "--name \"$(printf 'lab\\ntouch x')\"", "--name: control characters"},
      // An empty value was taken for the option left out: the default name, every collective.
      {2, "--name ''", "--name: an empty value names no profile"},
      {2, "--ops ''", "--ops: an empty value names no collective"},
      {2, "--ops all_reduce,", "--ops: 'all_reduce,': an empty item"}};
  for (const auto& [ranks, options, message] : launches) {
    const std::string out = temp("refused.yaml");
    const Result r = mpirun(ranks, "--quick " + options + " --out " + out);
    EXPECT_NE(r.code, 0) << options;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(out)) << options;
  }
}

}  // namespace
