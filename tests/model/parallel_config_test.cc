// Rank order arithmetic, --fix parsing and YAML round trips.
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
  EXPECT_EQ(c.order_string(), "pdzyx");
}

TEST(ParallelConfig, ParseFix) {
  const FixedFields f = parse_fix("pipeline=8,data=4,x=1,y=8,z=1,microbatch=2,recompute=full,offload=off,overlap=on,interleave=3,order=yxzdp");
  EXPECT_TRUE(f.all_grid_fixed());
  EXPECT_EQ(f.values.gpus(), 256);
  EXPECT_EQ(f.values.recompute, Recompute::full);
  EXPECT_FALSE(f.values.offload);
  EXPECT_EQ(f.values.order_string(), "yxzdp");
  ParallelConfig other = f.values;
  EXPECT_TRUE(f.allows(other));
  other.microbatch = 1;
  EXPECT_FALSE(f.allows(other));
  EXPECT_FALSE(parse_fix("y=8").all_grid_fixed());
}

TEST(ParallelConfig, ParseFixErrors) {
  EXPECT_THROW(parse_fix("pipeline=0"), InputError);
  EXPECT_THROW(parse_fix("pipeline"), InputError);
  EXPECT_THROW(parse_fix("colour=red"), InputError);
  EXPECT_THROW(parse_fix("offload=maybe"), InputError);
  EXPECT_THROW(parse_fix("recompute=some"), InputError);
  EXPECT_THROW(parse_fix("order=xxyzd"), InputError);
  EXPECT_THROW(parse_fix("order=xyz"), InputError);
}

TEST(ParallelConfig, YamlRoundTrip) {
  ParallelConfig c;
  c.pipeline = 4, c.data = 2, c.x = 2, c.y = 2, c.z = 2, c.microbatch = 4;
  c.recompute = Recompute::selective, c.offload = true, c.overlap = false, c.interleave = 2;
  c.order = parse_order("zyxpd", "test");
  EXPECT_EQ(parallel_config_from_yaml(to_yaml(c), "rt"), c);
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
