// `axo calibrate` under mpirun: faults are caught with a message naming the
// rank and operation, a partial profile is written, bad launches exit 2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

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
// are refused before any measurement.
TEST(CalibrateCli, LaunchesThatMeasureNoCollectiveAreRefused) {
  Result r = mpirun(3, "--quick --out " + temp("odd.yaml"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("none tiles 3 ranks: launch an even number"), std::string::npos) << r.output;
  r = mpirun(2, "--quick --min-bytes 1e6 --max-bytes 1e3 --out " + temp("range.yaml"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("--min-bytes 1000000 is more than the largest message, 1000 bytes"), std::string::npos)
      << r.output;
  r = mpirun(2, "--quick --ops all_reduce --min-bytes 0.5 --max-bytes 1 --out " + temp("one.yaml"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("leave one message size (8 bytes, whole floats over the ranks)"), std::string::npos)
      << r.output;
  r = mpirun(2, "--quick --min-bytes 1e14 --max-bytes 1e15 --out " + temp("huge.yaml"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("--max-bytes 1000000000000000: its collectives need about 4 x that"), std::string::npos)
      << r.output;
  r = mpirun(2, "--quick --inject-fault hang:5 --out " + temp("hang5.yaml"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("hang:5: this launch has ranks 0 to 1"), std::string::npos) << r.output;
  r = mpirun(2, "--quick --name \"$(printf 'lab\\ntouch x')\" --out " + temp("name.yaml"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("--name: control characters"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(temp("odd.yaml")) || fs::exists(temp("range.yaml")) || fs::exists(temp("name.yaml")));
}

}  // namespace
