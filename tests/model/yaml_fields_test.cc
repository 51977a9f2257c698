// Located YAML errors: file, line, column and field in every message.
#include "model/yaml_fields.h"

#include <gtest/gtest.h>

#include "model/error.h"
#include "tests/input_error_of.h"

namespace axo {
namespace {

TEST(YamlFields, SyntaxErrorNamesLineAndColumn) {
  const std::string message =
      testing::input_error_of([] { load_yaml_text("a: 1\nb: [1, 2\nc: 3\n", "spec.yaml"); });
  EXPECT_NE(message.find("spec.yaml:"), std::string::npos) << message;
  EXPECT_NE(message.find("malformed YAML"), std::string::npos) << message;
}

// A second document was dropped unread (even a broken one); one document, with or without its
// markers, reads as before.
TEST(YamlFields, ASecondDocumentIsRefusedWhereItBegins) {
  EXPECT_EQ(testing::input_error_of([] { load_yaml_text("layers: 32\n---\nlayers: 64\n", "m.yaml"); }),
            "m.yaml:2:1: a second YAML document begins here; axo reads one per file");  // at its ---
  EXPECT_NE(testing::input_error_of([] { load_yaml_text("layers: 32\n---\ngarbage: [\n", "m.yaml"); })
                .find("m.yaml:"),
            std::string::npos);
  EXPECT_EQ(load_yaml_text("---\nlayers: 32\n...\n", "m.yaml")["layers"].as<int>(), 32);
  EXPECT_TRUE(load_yaml_text("", "m.yaml").IsNull());
}

// A required field that is missing names a key within two edits of it that is no field: a typo
// was reported as the field missing, its line never named.
TEST(YamlFields, AMissingFieldNamesItsLikelyMisspelling) {
  const YAML::Node node = load_yaml_text("name: x\nlayrs: 12\nhidden: 64\n", "m.yaml");
  const YamlMap map(node, "m.yaml", "model spec");
  EXPECT_EQ(testing::input_error_of([&] { map.get_int("layers", 1, 100); }),
            "m.yaml:1:1: field 'layers': missing (required in the model spec); misspelled as 'layrs' on line 2?");
  // A key far from it, or one that is a field read already, is not offered.
  EXPECT_EQ(map.get_int("hidden", 1, 100), 64);
  EXPECT_EQ(testing::input_error_of([&] { map.get_int("heads", 1, 100); }),
            "m.yaml:1:1: field 'heads': missing (required in the model spec)");
}

// A required field given no value is empty, not missing, and named on its key's line (an empty
// value's place is the next line's).
TEST(YamlFields, AnEmptyRequiredFieldIsNamedOnItsLine) {
  for (const char* text : {"name: x\nlayers:\nhidden: 64\n", "name: x\nlayers: null\nhidden: 64\n"}) {
    const YamlMap map(load_yaml_text(text, "m.yaml"), "m.yaml", "model spec");
    EXPECT_EQ(testing::input_error_of([&] { map.get_int("layers", 1, 100); }),
              "m.yaml:2:1: field 'layers': empty (required in the model spec)");
  }
}

TEST(YamlFields, WrongTypeNamesFieldAndLine) {
  const YAML::Node node = load_yaml_text("name: x\nlayers: twelve\n", "m.yaml");
  const YamlMap map(node, "m.yaml", "model spec");
  const std::string message = testing::input_error_of([&] { map.get_int("layers", 1, 100); });
  EXPECT_EQ(message, "m.yaml:2:9: field 'layers': expected a whole number, got 'twelve'");
}

TEST(YamlFields, RangeAndMissingAndUnknown) {
  const YAML::Node node = load_yaml_text("layers: 0\nlayres: 3\n", "m.yaml");
  const YamlMap map(node, "m.yaml", "model spec");
  EXPECT_NE(testing::input_error_of([&] { map.get_int("layers", 1, 100); }).find("in [1, 100], got 0"),
            std::string::npos);
  EXPECT_NE(testing::input_error_of([&] { map.get_string("name"); }).find("field 'name': missing"),
            std::string::npos);
  const std::string unknown = testing::input_error_of([&] { map.reject_unknown_keys(); });
  EXPECT_NE(unknown.find("m.yaml:2:1: field 'layres': unknown field"), std::string::npos) << unknown;
}

// yaml-cpp keeps both entries of a repeated key and finds the first: refused, naming both lines,
// in a nested mapping too.
TEST(YamlFields, ARepeatedKeyIsRefused) {
  const YAML::Node node = load_yaml_text("name: x\nlayers: 12\nhidden: 768\nlayers: 24\n", "m.yaml");
  EXPECT_EQ(testing::input_error_of([&] { YamlMap(node, "m.yaml", "model spec"); }),
            "m.yaml:4:1: field 'layers': given twice in the model spec (first on line 2)");
  const YAML::Node nested = load_yaml_text("peak_tflops: {fp32: 10, fp32: 20}\n", "p.yaml");
  const YamlMap outer(nested, "p.yaml", "machine profile");
  EXPECT_EQ(testing::input_error_of([&] { YamlMap(outer.get_node("peak_tflops"), "p.yaml", "peak_tflops"); }),
            "p.yaml:1:25: field 'fp32': given twice in the peak_tflops (first on line 1)");
}

// YAML's merge key: the map's own fields, then each merged mapping's (an earlier one's first, a
// merged mapping's own merge too), every field named where it was written; yaml-cpp 0.7 had read
// `<<` as an unknown key and every merged field as missing.
TEST(YamlFields, MergeKeysGiveTheFieldsTheMapDoesNotGive) {
  const YAML::Node node = load_yaml_text(
      "base: &base {layers: 12, hidden: 768, heads: 12}\n"
      "wide: &wide {<<: *base, hidden: 1024, vocab: 50257}\n"
      "spec:\n"
      "  <<: [*wide, {layers: 99, seq_len: 2048}]\n"
      "  layers: 24\n"
      "  name: m\n",
      "m.yaml");
  const YamlMap outer(node, "m.yaml", "file");
  const YamlMap spec(outer.get_node("spec"), "m.yaml", "model spec");
  EXPECT_EQ(spec.get_int("layers", 1, 1000), 24);
  EXPECT_EQ(spec.get_int("hidden", 1, 100000), 1024);
  EXPECT_EQ(spec.get_int("heads", 1, 1000), 12);
  EXPECT_EQ(spec.get_int("vocab", 1, 100000), 50257);
  EXPECT_EQ(spec.get_int("seq_len", 1, 100000), 2048);
  EXPECT_EQ(spec.get_string("name"), "m");
  EXPECT_NO_THROW(spec.reject_unknown_keys());
  EXPECT_EQ(testing::input_error_of([&] { spec.get_bool("heads"); }),
            "m.yaml:1:46: field 'heads': expected true or false, got '12'");
  EXPECT_EQ(testing::input_error_of([&] { spec.get_int("absent", 1, 10); }),
            "m.yaml:4:3: field 'absent': missing (required in the model spec)");
  const YAML::Node scalar = load_yaml_text("name: m\n<<: 3\n", "s.yaml");
  EXPECT_EQ(testing::input_error_of([&] { YamlMap(scalar, "s.yaml", "model spec"); }),
            "s.yaml:2:1: field '<<': expected a mapping, or a list of mappings, to merge into the model spec");
  const YAML::Node itself = load_yaml_text("&a {<<: *a, layers: 2}\n", "a.yaml");  // had recursed without end
  EXPECT_EQ(testing::input_error_of([&] { YamlMap(itself, "a.yaml", "model spec"); }),
            "a.yaml:1:5: field '<<': merges a mapping into itself");
  // A merged mapping that repeats a key is refused as the map itself would be.
  const YAML::Node repeated = load_yaml_text("name: m\n<<: {layers: 2, layers: 3}\n", "r.yaml");
  EXPECT_EQ(testing::input_error_of([&] { YamlMap(repeated, "r.yaml", "model spec"); }),
            "r.yaml:2:17: field 'layers': given twice in the model spec (first on line 2)");
  // A quoted "<<" is an ordinary key (YAML 1.1 merges the plain one only).
  const YamlMap quoted(load_yaml_text("\"<<\": {layers: 3}\nname: m\n", "q.yaml"), "q.yaml", "model spec");
  EXPECT_FALSE(quoted.has("layers"));
  // Aliases of aliases, each merging the one before twice: each mapping is merged once, not 2^40 times.
  std::string chain = "a0: &a0 {layers: 1}\n";
  for (int i = 1; i <= 40; ++i) {
    chain += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " {<<: [*a" + std::to_string(i - 1) + ", *a" +
             std::to_string(i - 1) + "]}\n";
  }
  chain += "spec: {<<: *a40, name: m}\n";
  const YamlMap chained(YamlMap(load_yaml_text(chain, "c.yaml"), "c.yaml", "file").get_node("spec"), "c.yaml", "spec");
  EXPECT_EQ(chained.get_int("layers", 1, 10), 1);
  const YAML::Node unknown = load_yaml_text("b: &b {layrs: 3}\nspec: {<<: *b, name: m}\n", "u.yaml");
  const YamlMap with_typo(YamlMap(unknown, "u.yaml", "file").get_node("spec"), "u.yaml", "model spec");
  with_typo.get_string("name");
  EXPECT_EQ(testing::input_error_of([&] { with_typo.reject_unknown_keys(); }),
            "u.yaml:1:8: field 'layrs': unknown field in the model spec");
}

TEST(YamlFields, ChoicesAndDefaults) {
  const YAML::Node node = load_yaml_text("mlp: relu\nflag: yes\n", "m.yaml");
  const YamlMap map(node, "m.yaml", "spec");
  EXPECT_NE(testing::input_error_of([&] { map.get_choice("mlp", {"gelu", "swiglu"}); }).find("expected one of gelu, swiglu"),
            std::string::npos);
  EXPECT_TRUE(map.get_bool("flag"));
  EXPECT_EQ(map.get_int("absent", 1, 10, 7), 7);
  EXPECT_DOUBLE_EQ(map.get_double("absent2", 0, 1, 0.5), 0.5);
}

TEST(YamlFields, MissingFileIsInputError) {
  EXPECT_THROW(load_yaml_file("/nonexistent/file.yaml"), InputError);
}

}  // namespace
}  // namespace axo
