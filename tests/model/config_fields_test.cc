// The field table: every field through --fix text and plan.yaml and back,
// messages that name the field and its allowed values, the --fix matcher,
// and the search candidates the table declares.
#include "model/config_fields.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

#include "model/comm_model.h"
#include "model/cost_collective.h"
#include "model/error.h"
#include "tests/input_error_of.h"
#include "model/presets.h"
#include "model/yaml_fields.h"
#include "tests/model/config_field_samples.h"

namespace axo {
namespace {

const std::vector<GridDims> kPairsOnly = pair_groups();

using testing::other_value;
using testing::sample_values;
using testing::unusual_config;

TEST(ConfigFields, TableIsConsistent) {
  std::set<std::string> keys;
  std::set<int> nestings;
  int grid_fields = 0;
  for (const ConfigField& field : config_fields()) {
    EXPECT_TRUE(keys.insert(field.name).second) << field.name;
    if (field.alias) {
      EXPECT_TRUE(keys.insert(field.alias).second) << field.alias;
    }
    EXPECT_TRUE(nestings.insert(field.search.nesting).second) << field.name;
    EXPECT_EQ(&config_field(field.name), &field);
    EXPECT_GE(field.width, int(std::string(field.header).size())) << field.name;
    EXPECT_EQ(field.kind == FieldKind::choice, !field.choices.empty()) << field.name;
    if (field.search.stage == SearchStage::grid) ++grid_fields;
  }
  EXPECT_EQ(grid_fields, kGridDims);
  // The grid fields' product is the GPU count.
  const ParallelConfig c = unusual_config();
  int64_t product = 1;
  for (const ConfigField& field : config_fields()) {
    if (field.search.stage == SearchStage::grid) product *= field.get(c);
  }
  EXPECT_EQ(product, c.gpus());
  EXPECT_THROW(config_field("colour"), std::logic_error);
  EXPECT_EQ(find_config_field("sp"), &config_field("sequence_parallel"));
}

TEST(ConfigFields, DefaultsAreParallelConfigs) {
  const ParallelConfig defaults;
  for (const ConfigField& field : config_fields()) {
    EXPECT_EQ(field.default_value(), field.get(defaults)) << field.name;
  }
  EXPECT_EQ(config_text(defaults, ","),
            "pipeline=1,data=1,context=1,x=1,y=1,z=1,microbatch=1,recompute=none,recompute_layers=0,offload=off,"
            "zero=0,overlap=on,sequence_parallel=off,interleave=1,order=xyzcdp");
}

TEST(ConfigFields, EveryValueRoundTripsThroughFixText) {
  for (const ConfigField& field : config_fields()) {
    for (FieldValue value : sample_values(field)) {
      ParallelConfig c;
      field.set(c, value);
      EXPECT_EQ(field.get(c), value) << field.name;
      EXPECT_EQ(field.parse(field.name, field.text(value), "test"), value) << field.name;
      const FixedFields one = parse_fix(std::string(field.name) + "=" + field.text(value));
      EXPECT_EQ(field.get(one.values), value) << field.name;
      EXPECT_TRUE(one.holds(field));
      EXPECT_FALSE(one.all_grid_fixed());
    }
  }
  const ParallelConfig c = unusual_config();
  const FixedFields all = parse_fix(config_text(c, ","));
  EXPECT_EQ(all.values, c);
  EXPECT_TRUE(all.all_grid_fixed());
  for (const ConfigField& field : config_fields()) EXPECT_TRUE(all.holds(field)) << field.name;
  // Spaces around keys, values and commas are no part of them ("pipeline=2 ,data=4" was refused
  // while "pipeline= 2" was read).
  const FixedFields spaced = parse_fix(" pipeline = 2 ,data=4 ");
  EXPECT_EQ(spaced.values.pipeline, 2);
  EXPECT_EQ(spaced.values.data, 4);
}

TEST(ConfigFields, EveryValueRoundTripsThroughPlanYaml) {
  for (const ConfigField& field : config_fields()) {
    for (FieldValue value : sample_values(field)) {
      ParallelConfig c;
      field.set(c, value);
      YAML::Emitter out;
      out << to_yaml(c);
      const ParallelConfig back = parallel_config_from_yaml(load_yaml_text(out.c_str(), "p.yaml"), "p.yaml");
      EXPECT_EQ(back, c) << field.name << "=" << field.text(value) << "\n" << out.c_str();
    }
  }
  const ParallelConfig c = unusual_config();
  EXPECT_EQ(parallel_config_from_yaml(to_yaml(c), "p.yaml"), c);
}

TEST(ConfigFields, OptionalFieldsMayBeAbsentFromPlanYaml) {
  YAML::Node node = to_yaml(unusual_config());
  for (const ConfigField& field : config_fields()) {
    if (field.optional) node.remove(field.name);
  }
  const ParallelConfig back = parallel_config_from_yaml(node, "p.yaml");
  for (const ConfigField& field : config_fields()) {
    const FieldValue expected = field.optional ? field.default_value() : other_value(field);
    EXPECT_EQ(field.get(back), expected) << field.name;
  }
  for (const ConfigField& field : config_fields()) {
    if (field.optional) continue;
    YAML::Node missing = to_yaml(unusual_config());
    missing.remove(field.name);
    EXPECT_NE(testing::input_error_of([&] { parallel_config_from_yaml(missing, "p.yaml"); })
                  .find("field '" + std::string(field.name) + "': missing"),
              std::string::npos)
        << field.name;
  }
}

TEST(ConfigFields, BadValuesNameTheFieldAndTheAllowedValues) {
  for (const ConfigField& field : config_fields()) {
    const std::string fix = testing::input_error_of([&] { parse_fix(std::string(field.name) + "=bogus"); });
    EXPECT_NE(fix.find(field.name), std::string::npos) << fix;
    EXPECT_NE(fix.find("bogus"), std::string::npos) << fix;
    EXPECT_NE(fix.find("expected " + field.allowed()), std::string::npos) << fix;

    YAML::Node node = to_yaml(ParallelConfig{});
    node[field.name] = "bogus";
    const std::string yaml = testing::input_error_of([&] { parallel_config_from_yaml(node, "p.yaml"); });
    EXPECT_NE(yaml.find("field '" + std::string(field.name) + "'"), std::string::npos) << yaml;
    EXPECT_NE(yaml.find("bogus"), std::string::npos) << yaml;
  }
  EXPECT_EQ(config_field("recompute").allowed(), "none, selective or full");
  EXPECT_EQ(testing::input_error_of([] { parse_fix("recompute=some"); }),
            "--fix: recompute=some: expected none, selective or full");
  EXPECT_EQ(testing::input_error_of([] { parse_fix("sp=maybe"); }), "--fix: sp=maybe: expected on or off");
  EXPECT_EQ(testing::input_error_of([] { parse_fix("x=0"); }), "--fix: x=0: expected a whole number from 1 to 2^30");
  EXPECT_NE(testing::input_error_of([] { parse_fix("order=xyz"); }).find("the six letters"), std::string::npos);
}

TEST(ConfigFields, ParseFixErrors) {
  EXPECT_EQ(testing::input_error_of([] { parse_fix("colour=red"); }),
            "--fix: unknown key 'colour' (expected " + config_field_names() + ")");
  EXPECT_EQ(config_field_names(),
            "pipeline, data, context, x, y, z, microbatch, recompute, recompute_layers, offload, zero, overlap, "
            "sequence_parallel, interleave, order");
  // A count says its own least value: recompute_layers' 0 means every layer.
  EXPECT_EQ(parse_fix("recompute_layers=0").values.recompute_layers, 0);
  EXPECT_EQ(testing::input_error_of([] { parse_fix("recompute_layers=-1"); }),
            "--fix: recompute_layers=-1: expected a whole number from 0 to 2^30");
  EXPECT_NE(testing::input_error_of([] { parse_fix("pipeline=0"); }).find("a whole number from 1 to 2^30"), std::string::npos);
  EXPECT_THROW(parse_fix("pipeline"), InputError);
  EXPECT_THROW(parse_fix("=3"), InputError);
  EXPECT_THROW(parse_fix("pipeline="), InputError);
  EXPECT_THROW(parse_fix("order=xxyzd"), InputError);
  EXPECT_NE(testing::input_error_of([] { parse_fix("pipeline=65536,data=65536,x=65536"); }).find("larger than 10^12"),
            std::string::npos);
  EXPECT_NO_THROW(parse_fix(""));
  // An empty item is a slip (a value left out of a script's list), not "nothing held".
  for (const char* text : {"y=8,,z=1", "y=8,", ",y=8"}) {
    EXPECT_EQ(testing::input_error_of([&] { parse_fix(text); }),
              "--fix: '" + std::string(text) + "': an empty item (two commas, or one at an end)");
  }
  // A field given twice (by its alias too) is refused: the last would win without a word.
  EXPECT_EQ(testing::input_error_of([] { parse_fix("pipeline=2,pipeline=4"); }),
            "--fix: pipeline given twice (pipeline=2, then pipeline=4): give each field once");
  EXPECT_EQ(testing::input_error_of([] { parse_fix("cp=2,context=2"); }),
            "--fix: context given twice (context=2, then context=2): give each field once");
}

TEST(ConfigFields, FixedFieldsAllowOnlyTheirValues) {
  const FixedFields fixed = parse_fix("pipeline=8,data=4,cp=1,x=1,y=8,z=1,microbatch=2,recompute=full,"
                                      "offload=off,overlap=on,interleave=3,order=yxzdp");
  EXPECT_TRUE(fixed.all_grid_fixed());
  EXPECT_EQ(fixed.values.gpus(), 256);
  EXPECT_FALSE(fixed.holds("sequence_parallel"));
  ParallelConfig other = fixed.values;
  EXPECT_TRUE(fixed.allows(other));
  other.sequence_parallel = true;  // not held
  EXPECT_TRUE(fixed.allows(other));
  for (const ConfigField& field : config_fields()) {
    if (!fixed.holds(field)) continue;
    ParallelConfig changed = fixed.values;
    field.set(changed, field.get(changed) == other_value(field) ? field.default_value() : other_value(field));
    EXPECT_FALSE(fixed.allows(changed)) << field.name;
    EXPECT_FALSE(fixed.allows(field, field.get(changed))) << field.name;
  }
  EXPECT_FALSE(parse_fix("y=8").all_grid_fixed());
  EXPECT_TRUE(parse_fix("y=8").any_grid_fixed());
  EXPECT_FALSE(parse_fix("microbatch=8").any_grid_fixed());
}

TEST(ConfigFields, EqualityComparesEveryField) {
  const ParallelConfig base = unusual_config();
  EXPECT_EQ(base, unusual_config());
  for (const ConfigField& field : config_fields()) {
    ParallelConfig changed = base;
    field.set(changed, field.default_value());
    EXPECT_FALSE(changed == base) << field.name;
  }
}

TEST(ConfigFields, OrderCodesRoundTrip) {
  std::array<GridDim, kGridDims> order = {GridDim::x, GridDim::y, GridDim::z, GridDim::context, GridDim::data,
                                          GridDim::pipeline};
  FieldValue position = 0;  // lexicographic: "xyzcdp" is 0, "pdczyx" 719
  do {
    EXPECT_EQ(order_code(order), position);
    EXPECT_EQ(order_from_code(position), order);
    ++position;
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(position, 720);
  EXPECT_EQ(order_code(parse_order("pdczyx", "test")), 719);
  EXPECT_THROW(order_from_code(720), std::out_of_range);
  // An order with the new letter round-trips through its --fix text.
  const ConfigField& field = config_field("order");
  EXPECT_EQ(field.text(field.parse("order", "cxpyzd", "test")), "cxpyzd");
}

TEST(ConfigFields, FixHelpListsEveryFieldAndChoice) {
  const std::string help = fix_help();
  for (const ConfigField& field : config_fields()) {
    EXPECT_NE(help.find(std::string(" ") + field.name + "="), std::string::npos) << field.name;
    EXPECT_NE(help.find(field.help), std::string::npos) << field.name;
    for (const char* choice : field.choices) EXPECT_NE(help.find(choice), std::string::npos);
  }
}

// The candidates of `field` for `config` on `gpus` GPUs of 8-GPU nodes.
std::vector<FieldValue> candidates(const ConfigField& field, const TransformerSpec& spec,
                                   int64_t gpus, const ParallelConfig& config) {
  std::vector<FieldValue> out;
  field.search.candidates(field, SearchSpace{spec, gpus, 8}, config, out);
  return out;
}

TEST(ConfigFields, SearchCandidates) {
  const TransformerSpec spec = load_model("gpt3-13b");  // 40 layers, global batch 1024
  ParallelConfig c;
  c.pipeline = 4, c.data = 2, c.z = 2, c.y = 2;
  // Every pipeline size up to the 40 layers (unequal stages allowed), not 64.
  EXPECT_EQ(candidates(config_field("pipeline"), spec, 64, c), (std::vector<FieldValue>{1, 2, 4, 8, 16, 32}));
  EXPECT_EQ(candidates(config_field("z"), spec, 64, c), (std::vector<FieldValue>{1, 2, 4, 8}));
  EXPECT_EQ(candidates(config_field("x"), spec, 64, c), (std::vector<FieldValue>{2}));
  // Microbatches: divisors of 1024/2 that z=2 divides.
  const auto microbatches = candidates(config_field("microbatch"), spec, 64, c);
  EXPECT_EQ(microbatches.front(), 2);
  EXPECT_EQ(microbatches.back(), 512);
  for (FieldValue m : microbatches) EXPECT_EQ(m % 2, 0);
  // Interleaving needs 4 stages to divide the 512/m microbatches.
  c.microbatch = 256;
  EXPECT_EQ(candidates(config_field("interleave"), spec, 64, c), (std::vector<FieldValue>{1}));
  c.microbatch = 2;
  // Every interleave with 4·interleave <= 40 layers.
  EXPECT_EQ(candidates(config_field("interleave"), spec, 64, c),
            (std::vector<FieldValue>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(candidates(config_field("zero"), spec, 64, c), (std::vector<FieldValue>{0, 1, 2}));
  EXPECT_EQ(candidates(config_field("recompute"), spec, 64, c), (std::vector<FieldValue>{0, 1, 2}));
  EXPECT_EQ(candidates(config_field("overlap"), spec, 64, c), (std::vector<FieldValue>{1, 0}));
  // Sequence parallelism needs x = 1 and y > 1, with any z (z = 2 here).
  EXPECT_EQ(candidates(config_field("sequence_parallel"), spec, 64, c), (std::vector<FieldValue>{0, 1}));
  c.x = 2;
  EXPECT_EQ(candidates(config_field("sequence_parallel"), spec, 64, c), (std::vector<FieldValue>{0}));
  c.x = c.z = 1;
  EXPECT_EQ(candidates(config_field("sequence_parallel"), spec, 64, c), (std::vector<FieldValue>{0, 1}));
  c.y = 1;
  EXPECT_EQ(candidates(config_field("overlap"), spec, 64, c), (std::vector<FieldValue>{1}));
  c.data = 1;  // nothing to shard over
  EXPECT_EQ(candidates(config_field("zero"), spec, 64, c), (std::vector<FieldValue>{0}));
  // Under a held recompute_layers, only interleavings whose largest chunk holds that many layers
  // (4 stages: 40 layers in 4 chunks of 10, 8 of 5, 12 of at most 4, ...).
  c.recompute_layers = 5;
  EXPECT_EQ(candidates(config_field("interleave"), spec, 64, c), (std::vector<FieldValue>{1, 2}));
}

// Context sizes split the sequence into 2·context chunks; context=1 takes any length.
TEST(ConfigFields, ContextCandidatesSplitTheSequence) {
  TransformerSpec spec = load_model("gpt3-13b");
  spec.seq_len = 1023;
  EXPECT_EQ(candidates(config_field("context"), spec, 8, ParallelConfig{}), (std::vector<FieldValue>{1}));
  spec.seq_len = 1024;
  EXPECT_EQ(candidates(config_field("context"), spec, 8, ParallelConfig{}), (std::vector<FieldValue>{1, 2, 4, 8}));
}

// Sequence parallelism only where Y divides each context rank's tokens (sequence_split_problem).
TEST(ConfigFields, SequenceParallelCandidatesSplitTheSequence) {
  TransformerSpec spec = load_model("gpt3-13b");
  spec.seq_len = 1020;
  ParallelConfig c;
  c.y = 8;
  EXPECT_EQ(candidates(config_field("sequence_parallel"), spec, 8, c), (std::vector<FieldValue>{0}));
  c.y = 4;
  EXPECT_EQ(candidates(config_field("sequence_parallel"), spec, 8, c), (std::vector<FieldValue>{0, 1}));
  c.context = 2;  // 510 tokens per context rank
  EXPECT_EQ(candidates(config_field("sequence_parallel"), spec, 8, c), (std::vector<FieldValue>{0}));
  c.y = 2;
  EXPECT_EQ(candidates(config_field("sequence_parallel"), spec, 4, c), (std::vector<FieldValue>{0, 1}));
}

// Once-per-grid candidates depend on the grid alone, and on the settings --fix holds as given,
// which are the same on every configuration of one search (the search sets them first):
// recompute's choices follow recompute_layers.
TEST(ConfigFields, OncePerGridCandidatesIgnoreTheSettings) {
  const TransformerSpec spec = load_model("gpt3-13b");
  ParallelConfig grid;
  grid.pipeline = 2, grid.data = 4, grid.y = 8;
  const ParallelConfig varied = [&] {
    ParallelConfig c = unusual_config();
    for (const ConfigField& field : config_fields()) {
      if (field.search.stage == SearchStage::grid || field.search.fixed_as_given) field.set(c, field.get(grid));
    }
    return c;
  }();
  ParallelConfig held = grid;
  held.recompute_layers = 2;
  EXPECT_EQ(candidates(config_field("recompute"), spec, 64, held), (std::vector<FieldValue>{FieldValue(Recompute::full)}));
  for (const ConfigField& field : config_fields()) {
    if (!field.search.once_per_grid) continue;
    EXPECT_EQ(candidates(field, spec, 64, grid), candidates(field, spec, 64, varied)) << field.name;
  }
}

TEST(ConfigFields, OrdersThatPlaceGroupsAlikeAreOne) {
  ParallelConfig c;
  c.y = 8, c.data = 16;
  // On 8-GPU nodes: y inside a node and data across, or the reverse, or mixed.
  const auto orders = distinct_orders(c, 8, kPairsOnly);
  EXPECT_GE(orders.size(), 2u);
  EXPECT_LT(orders.size(), 720u);
  EXPECT_EQ(orders.front()[0], GridDim::x);  // the default order comes first
  ParallelConfig single;
  single.data = 8;
  EXPECT_EQ(distinct_orders(single, 8, kPairsOnly).size(), 1u);
}

// Ranks per node of each group and of the stack's groups of several dimensions, under `config`'s order.
std::vector<int64_t> placement(const ParallelConfig& config, int64_t gpus_per_node, const std::vector<GridDims>& groups) {
  std::vector<int64_t> ranks_per_node;
  for (int d = 0; d < kGridDims; ++d) {
    const GridDim dim = static_cast<GridDim>(d);
    const GroupPlacement group = place_group(config.size(dim), config.stride(dim), gpus_per_node, config.gpus());
    ranks_per_node.push_back(group.ranks_per_node);
  }
  for (GridDims group : groups) ranks_per_node.push_back(grid_group(config, group, gpus_per_node).ranks_per_node);
  return ranks_per_node;
}

TEST(ConfigFields, DistinctOrdersCoverEveryPlacementOnce) {
  ParallelConfig c;
  c.x = 2, c.y = 4, c.z = 2, c.data = 4, c.pipeline = 4;
  // 6: context 6 past a node, data just outside it is one group of 24 with 4 a node, where data
  // after z was a box of 2 a node; the walk tried only the second. With the stage's group priced
  // (fp8 under Transformer Engine), context 6 also places it apart by where the pipeline lies
  // outside the node.
  // A stack that prices only the pairs, one that prices a stage's ranks too (fp8 under Transformer
  // Engine), and axo's executor's, which sums what it keeps whole over Z over z x context x data.
  TransformerSpec fp8 = load_model("gpt3-13b");
  fp8.precision = Precision::fp8;
  MachineProfile stage_amax = load_machine("dgx-h100"), axo_executor = load_machine("dgx-h100");
  stage_amax.fp8_amax = Fp8Amax::stage;
  axo_executor.activations = ActivationLayout::axo;
  const std::vector<GridDims> with_stage = priced_groups(fp8, stage_amax);
  const std::vector<GridDims> executor = priced_groups(load_model("gpt3-13b"), axo_executor);
  ASSERT_EQ(with_stage.size(), kPairsOnly.size() + 1);
  ASSERT_GT(executor.size(), kPairsOnly.size());
  for (const std::vector<GridDims>* groups : {&kPairsOnly, &with_stage, &executor}) {
    for (int64_t context : {1, 2, 4, 6}) {
      c.context = context;
      SCOPED_TRACE(std::to_string(context) + " context, " + std::to_string(groups->size()) + " groups priced");
      std::set<std::vector<int64_t>> distinct;
      const auto orders = distinct_orders(c, 8, *groups);
      for (const auto& order : orders) {
        ParallelConfig placed = c;
        placed.order = order;
        EXPECT_TRUE(distinct.insert(placement(placed, 8, *groups)).second) << placed.order_string();
      }
      std::array<GridDim, kGridDims> order = c.order;
      do {
        ParallelConfig placed = c;
        placed.order = order;
        EXPECT_EQ(distinct.count(placement(placed, 8, *groups)), 1u) << placed.order_string();
      } while (std::next_permutation(order.begin(), order.end()));
      if (groups == &kPairsOnly) {
        EXPECT_EQ(candidates(config_field("order"), load_model("gpt3-13b"), 256, c).size(), orders.size());
      }
    }
  }
  EXPECT_GT(distinct_orders(c, 8, with_stage).size(), distinct_orders(c, 8, kPairsOnly).size());  // context 6
}

}  // namespace
}  // namespace axo
