// `axo validate` end to end: the summary per source and GPU type, the
// unexpressible runs, the memory misses, --csv with every run, --fit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "tests/run_command.h"

namespace {

namespace fs = std::filesystem;

TEST(ValidateCli, SummaryCsvAndFit) {
  const fs::path csv = fs::temp_directory_path() / ("axo_validate_" + std::to_string(::getpid()) + ".csv");
  const auto r = axo::testing::run_axo("validate --fit --csv " + csv.string());
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* expected : {"Korthikanti et al. 2022, Table 5", "Published runs (", "source", "mean |err|",
                               "dgxc ", "mpt ", "torchtitan ", "korthikanti2022_table5", "Not expressible yet",
                               "do not fit", "Fitted per GPU type",
                               "LOSO mean|e|", "band: "}) {
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
  }
  std::ifstream in(csv);
  std::stringstream text;
  text << in.rdbuf();
  fs::remove(csv);
  const std::string content = text.str();
  EXPECT_EQ(content.rfind("name,source,gpu_type,machine,quantity,predicted,measured,measured_from,error_pct,", 0), 0u);
  // A header, 18 comparisons of the two Korthikanti tables, 335 published runs.
  EXPECT_EQ(std::count(content.begin(), content.end(), '\n'), 1 + 18 + 335);
  // fp8 rows are priced (expressed, with an error).
  EXPECT_NE(content.find("dgxc_gpt3_175b_fp8_128xH100_v25.02,dgxc,H100-80,dgx-h100,iteration (s),"), std::string::npos);
  EXPECT_EQ(content.find("fp8 GEMMs"), std::string::npos);
  // GB200 rows run on the NVL72 preset; the Llama 3.1 405B rows take their recompute from the
  // NeMo recipe they ran (public-runs.yaml recipes:).
  EXPECT_NE(content.find("dgxc_nemotron4_340b_bf16_128xGB200_v25.05.05,dgxc,GB200,gb200-nvl72,iteration (s),"),
            std::string::npos);
  EXPECT_EQ(content.find("dgxc_llama31_405b_bf16_128xGB200_v25.05.05,dgxc,GB200,gb200-nvl72,iteration (s),,"),
            std::string::npos);
  EXPECT_NE(content.find("dgxc_llama31_405b_bf16_128xGB200_v25.05.05,dgxc,GB200,gb200-nvl72,iteration (s),"),
            std::string::npos);
}

TEST(ValidateCli, MissingCorpusIsAUsageError) {
  const auto r = axo::testing::run_axo("validate --corpus /nonexistent/corpus.yaml");
  EXPECT_EQ(r.code, 2) << r.output;
}

}  // namespace
