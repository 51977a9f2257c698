// Reading typed fields out of YAML with errors that say where.
//
// Every message has the form "FILE:LINE:COLUMN: field 'NAME': expected ...,
// got '...'" so that a person can go straight to the mistake. A YamlMap
// also remembers which keys were read so that unknown keys (usually typos)
// are reported instead of silently ignored, and refuses a key given twice
// (yaml-cpp would keep the first: "m.yaml:9:1: field 'layers': given twice in
// the model spec (first on line 3)"). It reads YAML's merge keys
// (`model: {<<: *base, seq_len: 4096}`), which yaml-cpp 0.7 leaves as a key.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace axo {

// Parses a whole YAML file; a syntax error becomes an InputError with the
// file, line and column.
YAML::Node load_yaml_file(const std::string& path);
// Same for text already in memory; `source` names it in messages.
YAML::Node load_yaml_text(const std::string& text, const std::string& source);

// "FILE:LINE:COLUMN" of a node (1-based), or FILE when the node has no mark.
std::string where(const YAML::Node& node, const std::string& source);

// A mapping node whose fields are read one by one.
class YamlMap {
 public:
  // `what` describes the mapping for messages ("model spec", "gemm entry").
  // InputError when the node is not a mapping, repeats a key or merges what is not one.
  YamlMap(const YAML::Node& node, std::string source, std::string what);

  bool has(const std::string& key) const;
  const YAML::Node& node() const { return node_; }
  const std::string& source() const { return source_; }

  std::string get_string(const std::string& key) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  // Integers must be whole numbers within [min, max].
  int64_t get_int(const std::string& key, int64_t min, int64_t max) const;
  int64_t get_int(const std::string& key, int64_t min, int64_t max, int64_t fallback) const;
  // Reals must be finite and within [min, max].
  double get_double(const std::string& key, double min, double max) const;
  double get_double(const std::string& key, double min, double max, double fallback) const;
  bool get_bool(const std::string& key) const;
  bool get_bool(const std::string& key, bool fallback) const;
  // One of `choices`, e.g. {"gelu", "swiglu"}.
  std::string get_choice(const std::string& key, const std::vector<std::string>& choices) const;
  std::string get_choice(const std::string& key, const std::vector<std::string>& choices,
                         const std::string& fallback) const;
  // A nested mapping or sequence; throws if absent.
  YAML::Node get_node(const std::string& key) const;

  // Throws on any key that no getter asked about (or that is not in `also_allowed`).
  void reject_unknown_keys(const std::set<std::string>& also_allowed = {}) const;

  // Throws an InputError about `key` (or the whole map when key is empty).
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

 private:
  std::string misspelling_of(const std::string& key) const;
  YAML::Node value(const std::string& key) const;
  YAML::Node node_;  // with YAML's merge keys (`<<: *base`) merged in
  std::string source_;
  std::string what_;
  std::string at_;  // where the mapping begins
  mutable std::set<std::string> read_keys_;
};

}  // namespace axo
