// The output path check (tools/output_path.h): the validator alone, and every
// command's output options refused before any work when their folder is
// missing, as a usage error (exit 2) naming the option and the folder.
#include "tools/output_path.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/run_command.h"

namespace {

namespace fs = std::filesystem;

class OutputPath : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // What the validator says of `text` (empty: accepted).
  static std::string check(std::string text) { return axo::tools::output_path()(text); }
  fs::path dir_ = fs::temp_directory_path() / ("axo_output_path_" + std::to_string(::getpid()));
};

TEST_F(OutputPath, AcceptsAPathInAnExistingFolderOrTheWorkingOne) {
  EXPECT_EQ(check(path("plan.yaml")), "");
  EXPECT_EQ(check(path("t")), "") << "a shard prefix: its folder is there, no file t needs to be";
  EXPECT_EQ(check("plan.yaml"), "");
}

TEST_F(OutputPath, AMissingFolderOrAFileInItsPlaceIsRefusedNamingIt) {
  EXPECT_EQ(check(path("missing/plan.yaml")),
            "cannot write " + path("missing/plan.yaml") + ": the folder " + path("missing") + " does not exist");
  std::ofstream(path("file")) << "x";
  EXPECT_EQ(check(path("file/plan.yaml")),
            "cannot write " + path("file/plan.yaml") + ": the folder " + path("file") + " is not a folder");
  // A file's path that is a folder; a shard prefix may be one (its files go beside it).
  fs::create_directories(path("runs"));
  EXPECT_EQ(check(path("runs")), "cannot write " + path("runs") + ": it is a folder");
  std::string prefix = path("runs");
  EXPECT_EQ(axo::tools::output_prefix()(prefix), "");
  std::string missing = path("missing/t");
  EXPECT_NE(axo::tools::output_prefix()(missing).find("does not exist"), std::string::npos);
}

// A folder that takes no files is found before the work (a calibration measured everything, then
// could not write): a folder without write permission refuses them to all but root. The probe
// leaves nothing behind, and what is written in place (/dev/stdout, a pipe) is not probed: nothing
// is made beside it, and /dev takes no files from most users.
TEST_F(OutputPath, AFolderThatTakesNoFilesIsRefused) {
  fs::create_directories(path("locked"));
  fs::permissions(path("locked"), fs::perms::owner_read | fs::perms::owner_exec);
  if (::geteuid() != 0) {
    EXPECT_NE(check(path("locked/plan.yaml")).find("the folder " + path("locked") + " cannot be written in"),
              std::string::npos);
  }
  fs::permissions(path("locked"), fs::perms::owner_all);
  EXPECT_EQ(check(path("plan.yaml")), "");
  for (const auto& entry : fs::directory_iterator(dir_)) EXPECT_EQ(entry.path().filename(), "locked");
  EXPECT_EQ(check("/dev/stdout"), "");
  EXPECT_EQ(check("/dev/fd/1"), "");  // a shell's >(...): /dev/fd takes no files, even from root
  ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);
  EXPECT_EQ(check(path("pipe")), "");
}

// A link is written through to its target: a target in a missing folder is refused before any work.
TEST_F(OutputPath, ALinkToAFileInAMissingFolderIsRefused) {
  fs::create_symlink(path("nowhere/real.csv"), path("link.csv"));
  EXPECT_EQ(check(path("link.csv")), "cannot write " + path("link.csv") + ": it links to " + path("nowhere/real.csv") +
                                         ", and the folder " + path("nowhere") + " does not exist");
  fs::create_symlink(path("link.csv"), path("chain.csv"));  // followed to the end, as the writer does
  EXPECT_NE(check(path("chain.csv")).find("it links to " + path("nowhere/real.csv")), std::string::npos);
  fs::create_symlink(path("loop_b"), path("loop_a"));
  fs::create_symlink(path("loop_a"), path("loop_b"));
  EXPECT_NE(check(path("loop_a")).find(path("loop_a") + ": cannot write: "), std::string::npos) << check(path("loop_a"));
  fs::create_directories(path("somewhere"));
  fs::create_symlink("somewhere/real.csv", path("relative.csv"));  // relative to the link's folder
  EXPECT_EQ(check(path("relative.csv")), "");
}

TEST_F(OutputPath, AnEmptyPathIsRefused) {
  EXPECT_EQ(check(""), "an empty path names no file to write");
  std::string empty;
  EXPECT_EQ(axo::tools::output_prefix()(empty), "an empty path names no file to write");
  const auto r = axo::testing::run_command(std::string(AXO_BINARY) +
                                           " plan --model gpt2-mini --gpus 2 --machine selene --csv '' 2>&1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--csv: an empty path names no file to write"), std::string::npos) << r.output;
}

// Two paths name one file: the same text, a link to it, or the same path through "." or "..",
// whether or not the file exists yet.
TEST_F(OutputPath, SameFileSeesThroughLinksAndDots) {
  std::ofstream(path("a.csv")) << "x";
  fs::create_symlink(path("a.csv"), path("link.csv"));
  EXPECT_TRUE(axo::tools::same_file(path("a.csv"), path("link.csv")));
  EXPECT_TRUE(axo::tools::same_file(path("new.csv"), dir_.string() + "/./sub/../new.csv"));
  EXPECT_TRUE(axo::tools::same_file("x", "x"));
  EXPECT_FALSE(axo::tools::same_file(path("a.csv"), path("b.csv")));
}

TEST_F(OutputPath, RepeatedFileFindsTheFirstPairNamingOneFile) {
  std::ofstream(path("a.json")) << "x";
  fs::create_symlink(path("a.json"), path("link.json"));
  using Pair = std::optional<std::pair<size_t, size_t>>;
  EXPECT_EQ(axo::tools::repeated_file({path("a.json"), path("b.json"), path("link.json")}), Pair({0, 2}));
  EXPECT_EQ(axo::tools::repeated_file({path("a.json"), path("b.json")}), std::nullopt);
  EXPECT_EQ(axo::tools::repeated_file({}), std::nullopt);
}

// Each command line writes to `option` in a missing folder: exit 2 at parse
// time (nothing planned, trained, encoded or measured), naming both.
TEST_F(OutputPath, EveryCommandChecksItsOutputsBeforeAnyWork) {
  const std::string target = path("missing/out"), folder = path("missing");
  const std::string plan = "plan --model gpt2-tiny --gpus 1 --machine selene ";
  const std::string train = "train --model gpt2-tiny --data '" + path("none_*.bin") + "' --steps 1 ";
  const std::string report = "report --plan " + path("p.yaml") + " --run " + path("r.json") + " ";
  const std::pair<std::string, std::string> cases[] = {
      {plan, "--csv"},        {plan, "--json"},   {plan, "--out"},
      {plan, "--svg"},        {plan + "--emit slurm ", "--emit-out"},
      {train, "--save-model"}, {train, "--run"},
      {report, "--csv"},      {report, "--svg"},
      {"data encode --in /usr/share/games/fortunes/art ", "--out"},
      {"calibrate ", "--out"},
      {"validate ", "--csv"},
  };
  for (const auto& [command, option] : cases) {
    const axo::testing::CommandResult r = axo::testing::run_axo(command + option + " " + target);
    EXPECT_EQ(r.code, 2) << command << option << "\n" << r.output;
    EXPECT_NE(r.output.find(option + ": cannot write " + target + ": the folder " + folder + " does not exist"),
              std::string::npos)
        << command << option << "\n" << r.output;
    for (const char* work : {"configurations over", "step ", "wrote", "Wrote", "Compared"}) {
      EXPECT_EQ(r.output.find(work), std::string::npos) << command << option << "\n" << r.output;
    }
  }
}

}  // namespace
