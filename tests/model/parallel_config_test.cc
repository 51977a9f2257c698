// Rank order arithmetic and YAML round trips (--fix and the field table:
// config_fields_test.cc).
#include "model/parallel_config.h"

#include <gtest/gtest.h>

#include "model/error.h"
#include "model/yaml_fields.h"

namespace axo {
namespace {

TEST(ParallelConfig, StridesFollowTheOrder) {
  ParallelConfig c;
  c.x = 2, c.y = 4, c.z = 2, c.data = 3, c.pipeline = 5;
  EXPECT_EQ(c.gpus(), 240);
  EXPECT_EQ(c.stride(GridDim::x), 1);
  EXPECT_EQ(c.stride(GridDim::y), 2);
  EXPECT_EQ(c.stride(GridDim::z), 8);
  EXPECT_EQ(c.stride(GridDim::data), 16);
  EXPECT_EQ(c.stride(GridDim::pipeline), 48);
  c.order = parse_order("pdzyx", "test");
  EXPECT_EQ(c.stride(GridDim::pipeline), 1);
  EXPECT_EQ(c.stride(GridDim::x), 5 * 3 * 2 * 4);
  EXPECT_EQ(c.order_string(), "pcdzyx");  // five letters: c goes just inside d
}

TEST(ParallelConfig, ContextIsAGridDimensionWithItsLetter) {
  ParallelConfig c;
  c.x = 2, c.y = 4, c.context = 2, c.data = 3, c.pipeline = 5;
  EXPECT_EQ(c.gpus(), 240);  // pipeline × data × context × z × y × x
  EXPECT_EQ(c.order_string(), "xyzcdp");
  EXPECT_EQ(c.stride(GridDim::context), 8);
  EXPECT_EQ(c.stride(GridDim::data), 16);
  c.order = parse_order("cpdzyx", "test");
  EXPECT_EQ(c.order_string(), "cpdzyx");
  EXPECT_EQ(c.stride(GridDim::context), 1);
  EXPECT_EQ(c.stride(GridDim::pipeline), 2);
  EXPECT_EQ(c.stride(GridDim::x), 2 * 5 * 3 * 4);
  EXPECT_EQ(parse_order("xyzpd", "test"), parse_order("xyzpcd", "test"));
  for (const char* bad : {"xyzcd", "xyzcdpc", "xyzcdq", "xyzdd"}) {
    EXPECT_THROW(parse_order(bad, "test"), InputError) << bad;
  }
}

TEST(ParallelConfig, YamlRoundTrip) {
  ParallelConfig c;
  c.pipeline = 4, c.data = 2, c.x = 2, c.y = 2, c.z = 2, c.microbatch = 4;
  c.recompute = Recompute::selective, c.offload = true, c.overlap = false, c.interleave = 2;
  c.sequence_parallel = true;
  c.order = parse_order("zyxpd", "test");
  EXPECT_EQ(parallel_config_from_yaml(to_yaml(c), "rt"), c);
  c.context = 2;
  c.order = parse_order("dzcyxp", "test");
  EXPECT_EQ(parallel_config_from_yaml(to_yaml(c), "rt"), c);
}

TEST(ParallelConfig, YamlHoldsEveryFieldInTableOrder) {
  ParallelConfig c;
  c.pipeline = 4, c.y = 8, c.recompute = Recompute::full, c.recompute_layers = 3, c.overlap = false;
  YAML::Emitter out;
  out << to_yaml(c);
  EXPECT_EQ(std::string(out.c_str()),
            "pipeline: 4\ndata: 1\ncontext: 1\nx: 1\ny: 8\nz: 1\nmicrobatch: 1\nrecompute: full\nrecompute_layers: 3\n"
            "offload: false\nzero: 0\noverlap: false\nsequence_parallel: false\ninterleave: 1\norder: xyzcdp");
}

TEST(ParallelConfig, YamlErrorsAreLocated) {
  try {
    parallel_config_from_yaml(load_yaml_text("pipeline: 2\ndata: 1\nx: 1\ny: 1\nz: 1\nmicrobatch: 1\norder: abcde\n", "p.yaml"), "p.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("p.yaml:7:8"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace axo
