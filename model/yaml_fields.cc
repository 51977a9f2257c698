// Typed, located reading of YAML fields (see yaml_fields.h).
#include "model/yaml_fields.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include <yaml-cpp/eventhandler.h>

#include "model/error.h"
#include "model/input_file.h"

namespace axo {

namespace {

// Where each document of a YAML stream starts, from the parser's events alone.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> marks;
  void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// InputError where a second document begins: YAML::Load reads the first and drops the rest
// unread, even when broken. Two documents at most are parsed (yaml-cpp 0.7's LoadAll looped
// without end on a malformed stream the fuzzer found).
void reject_second_document(const std::string& text, const std::string& source) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts starts;
  if (!parser.HandleNextDocument(starts) || !parser.HandleNextDocument(starts)) return;
  const YAML::Mark& at = starts.marks.back();
  throw InputError(source + ":" + std::to_string(at.line + 1) + ":" + std::to_string(at.column + 1) +
                   ": a second YAML document begins here; axo reads one per file");
}

}  // namespace

YAML::Node load_yaml_text(const std::string& text, const std::string& source) {
  try {
    reject_second_document(text, source);
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    std::ostringstream out;
    out << source;
    if (!e.mark.is_null()) out << ":" << e.mark.line + 1 << ":" << e.mark.column + 1;
    out << ": malformed YAML: " << e.msg;
    throw InputError(out.str());
  }
}

YAML::Node load_yaml_file(const std::string& path) {
  return load_yaml_text(read_input_file(path), path);
}

std::string where(const YAML::Node& node, const std::string& source) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return source;
  return source + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

namespace {

constexpr const char* kMergeKey = "<<";

// yaml-cpp keeps a repeated key's entries and node[key] finds the first: a second `layers:`
// would be ignored without a word.
void reject_repeated_keys(const YAML::Node& map, const std::string& source, const std::string& what) {
  std::map<std::string, YAML::Node> seen;
  for (const auto& entry : map) {
    if (!entry.first.IsScalar()) continue;  // reject_unknown_keys names it
    const auto [first, inserted] = seen.emplace(entry.first.Scalar(), entry.first);
    if (inserted) continue;
    const YAML::Mark mark = first->second.Mark();
    throw InputError(where(entry.first, source) + ": field '" + first->first + "': given twice in the " + what +
                     (mark.is_null() ? "" : " (first on line " + std::to_string(mark.line + 1) + ")"));
  }
}

// The mapping's merge key and its value: a plain `<<` (a quoted "<<" is an ordinary key).
std::optional<std::pair<YAML::Node, YAML::Node>> merge_entry(const YAML::Node& map) {
  for (const auto& entry : map) {
    if (entry.first.IsScalar() && entry.first.Scalar() == kMergeKey && entry.first.Tag() == "?") {
      return std::pair{entry.first, entry.second};
    }
  }
  return std::nullopt;
}

// YAML 1.1's merge key (yaml.org/type/merge.html): `<<: *base`, or `<<: [*a, *b]`, gives the map
// each field of the merged mappings that it does not give itself, of an earlier mapping before a
// later one; a merged mapping's own `<<` first. yaml-cpp 0.7 reads `<<` as a plain key. Each key
// keeps its node, so a message names the line where the field was written.
class Merge {
 public:
  Merge(const std::string& source, const std::string& what) : source_(source), what_(what) {}

  YAML::Node of(const YAML::Node& map) {
    const auto merge = merge_entry(map);
    if (!merge) return map;
    const auto& [key, sources] = *merge;
    YAML::Node merged(YAML::NodeType::Map);
    std::set<std::string> given;
    for (const auto& entry : map) {
      if (entry.first.is(key)) continue;
      if (entry.first.IsScalar()) given.insert(entry.first.Scalar());
      merged.force_insert(entry.first, entry.second);
    }
    inside_.push_back(map);
    const bool listed = sources.IsSequence();
    for (size_t i = 0; i < (listed ? sources.size() : 1); ++i) {
      const YAML::Node from = listed ? sources[i] : sources;
      if (!take(key, from)) continue;
      for (const auto& entry : of(from)) {
        const bool new_field = !entry.first.IsScalar() || given.insert(entry.first.Scalar()).second;
        if (new_field) merged.force_insert(entry.first, entry.second);
      }
    }
    inside_.pop_back();
    return merged;
  }

 private:
  static bool among(const std::vector<YAML::Node>& nodes, const YAML::Node& node) {
    return std::any_of(nodes.begin(), nodes.end(), [&](const YAML::Node& n) { return n.is(node); });
  }

  // Whether to merge `from`: a mapping, not one being merged into (an alias may name one:
  // `&a {<<: *a}`), refused at the `<<` that names it; and not merged already, which adds no field
  // (skipped: aliases of aliases, each merging the one before twice, stay linear).
  bool take(const YAML::Node& key, const YAML::Node& from) {
    if (!from.IsMap()) {
      throw InputError(where(key, source_) +
                       ": field '<<': expected a mapping, or a list of mappings, to merge into the " + what_);
    }
    if (among(inside_, from)) throw InputError(where(key, source_) + ": field '<<': merges a mapping into itself");
    if (among(done_, from)) return false;
    done_.push_back(from);
    reject_repeated_keys(from, source_, what_);
    return true;
  }

  const std::string& source_;
  const std::string& what_;
  std::vector<YAML::Node> inside_, done_;
};

}  // namespace

YamlMap::YamlMap(const YAML::Node& node, std::string source, std::string what)
    : node_(node), source_(std::move(source)), what_(std::move(what)), at_(where(node, source_)) {
  if (!node_.IsMap()) {
    throw InputError(at_ + ": expected a mapping for the " + what_);
  }
  reject_repeated_keys(node_, source_, what_);
  node_ = Merge(source_, what_).of(node_);
}

bool YamlMap::has(const std::string& key) const {
  read_keys_.insert(key);
  const YAML::Node v = node_[key];
  return v.IsDefined() && !v.IsNull();
}

namespace {

// Levenshtein distance, one row at a time: for telling a misspelled key from an unrelated one.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

// A key of the map within two edits of `key` that is not a field read so far, with its line
// ("'gpus_pernode' on line 21"); "" if none, and for keys under 4 letters (a few edits from many).
std::string YamlMap::misspelling_of(const std::string& key) const {
  for (const auto& entry : node_) {
    if (!entry.first.IsScalar() || read_keys_.count(entry.first.Scalar()) != 0) continue;
    if (key.size() < 4 || edit_distance(entry.first.Scalar(), key) > 2) continue;
    const YAML::Mark mark = entry.first.Mark();
    return "'" + entry.first.Scalar() + "'" + (mark.is_null() ? "" : " on line " + std::to_string(mark.line + 1));
  }
  return "";
}

YAML::Node YamlMap::value(const std::string& key) const {
  read_keys_.insert(key);
  const YAML::Node v = node_[key];
  if (v.IsDefined() && v.IsNull()) fail(key, "empty (required in the " + what_ + ")");
  if (!v.IsDefined()) {
    const std::string near = misspelling_of(key);
    fail(key, "missing (required in the " + what_ + ")" + (near.empty() ? "" : "; misspelled as " + near + "?"));
  }
  return v;
}

void YamlMap::fail(const std::string& key, const std::string& message) const {
  if (key.empty()) throw InputError(at_ + ": " + what_ + ": " + message);
  const YAML::Node v = node_[key];
  std::string at = v.IsDefined() ? where(v, source_) : at_;
  if (v.IsDefined() && v.IsNull()) {  // an empty value has no place of its own: its key's
    for (const auto& entry : node_) {
      if (entry.first.IsScalar() && entry.first.Scalar() == key) at = where(entry.first, source_);
    }
  }
  throw InputError(at + ": field '" + key + "': " + message);
}

static std::string scalar_text(const YAML::Node& v) {
  return v.IsScalar() ? v.Scalar() : std::string(v.IsMap() ? "<mapping>" : "<sequence>");
}

std::string YamlMap::get_string(const std::string& key) const {
  const YAML::Node v = value(key);
  if (!v.IsScalar()) fail(key, "expected a string, got " + scalar_text(v));
  return v.Scalar();
}

std::string YamlMap::get_string(const std::string& key, const std::string& fallback) const {
  return has(key) ? get_string(key) : fallback;
}

int64_t YamlMap::get_int(const std::string& key, int64_t min, int64_t max) const {
  const YAML::Node v = value(key);
  const std::string text = scalar_text(v);
  int64_t parsed = 0;
  size_t used = 0;
  try {
    parsed = std::stoll(text, &used, 10);
  } catch (const std::exception&) {
    used = 0;
  }
  if (!v.IsScalar() || used == 0 || used != text.size()) {
    fail(key, "expected a whole number, got '" + text + "'");
  }
  if (parsed < min || parsed > max) {
    fail(key, "expected a whole number in [" + std::to_string(min) + ", " + std::to_string(max) +
                  "], got " + text);
  }
  return parsed;
}

int64_t YamlMap::get_int(const std::string& key, int64_t min, int64_t max, int64_t fallback) const {
  return has(key) ? get_int(key, min, max) : fallback;
}

double YamlMap::get_double(const std::string& key, double min, double max) const {
  const YAML::Node v = value(key);
  const std::string text = scalar_text(v);
  double parsed = 0;
  size_t used = 0;
  try {
    parsed = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (!v.IsScalar() || used == 0 || used != text.size() || !std::isfinite(parsed)) {
    fail(key, "expected a number, got '" + text + "'");
  }
  if (parsed < min || parsed > max) {
    std::ostringstream range;
    range << "expected a number in [" << min << ", " << max << "], got " << text;
    fail(key, range.str());
  }
  return parsed;
}

double YamlMap::get_double(const std::string& key, double min, double max, double fallback) const {
  return has(key) ? get_double(key, min, max) : fallback;
}

bool YamlMap::get_bool(const std::string& key) const {
  const YAML::Node v = value(key);
  bool parsed = false;
  if (!v.IsScalar() || !YAML::convert<bool>::decode(v, parsed)) {
    fail(key, "expected true or false, got '" + scalar_text(v) + "'");
  }
  return parsed;
}

bool YamlMap::get_bool(const std::string& key, bool fallback) const {
  return has(key) ? get_bool(key) : fallback;
}

std::string YamlMap::get_choice(const std::string& key,
                                const std::vector<std::string>& choices) const {
  const std::string text = get_string(key);
  for (const std::string& c : choices) {
    if (c == text) return text;
  }
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "" : ", ") + c;
  fail(key, "expected one of " + list + ", got '" + text + "'");
}

std::string YamlMap::get_choice(const std::string& key, const std::vector<std::string>& choices,
                                const std::string& fallback) const {
  return has(key) ? get_choice(key, choices) : fallback;
}

YAML::Node YamlMap::get_node(const std::string& key) const { return value(key); }

void YamlMap::reject_unknown_keys(const std::set<std::string>& also_allowed) const {
  for (const auto& entry : node_) {
    if (!entry.first.IsScalar()) {
      throw InputError(where(entry.first, source_) + ": " + what_ + ": keys must be plain names");
    }
    const std::string key = entry.first.Scalar();
    if (read_keys_.count(key) == 0 && also_allowed.count(key) == 0) {
      throw InputError(where(entry.first, source_) + ": field '" + key + "': unknown field in the " +
                       what_);
    }
  }
}

}  // namespace axo
