// The overlaps' names and where they act (see overlap.h).
#include "model/overlap.h"

#include <utility>

#include "model/comma_list.h"
#include "model/error.h"

namespace axo {

namespace {

// Each overlap's name (--overlap, run.json) and its switch.
constexpr std::pair<const char*, bool Overlap::*> kOverlapNames[] = {
    {"oar", &Overlap::all_reduce}, {"ors", &Overlap::reduce_scatter}, {"oag", &Overlap::all_gather}};

}  // namespace

Overlap parse_overlap(const std::string& text, const std::string& option) {
  Overlap o = Overlap::none();
  if (text == "none") return o;
  if (text.empty()) throw InputError(option + ": expected none or a list of oar, ors, oag; got nothing");
  for (const std::string& item : comma_list(text, option)) {
    bool known = false;
    for (const auto& [name, member] : kOverlapNames) {
      if (item == name) o.*member = known = true;
    }
    if (!known) throw InputError(option + ": expected none or a list of oar, ors, oag; got '" + item + "'");
  }
  return o;
}

std::string overlap_text(const Overlap& overlap) {
  std::string on;
  for (const auto& [name, member] : kOverlapNames) {
    if (overlap.*member) on += std::string(on.empty() ? "" : ",") + name;
  }
  return on == "oar,ors,oag" ? "on" : on.empty() ? "off" : on;
}

Overlap recorded_overlap(const std::string& text, const std::string& where) {
  if (text == "on") return Overlap{};
  if (text == "off") return Overlap::none();
  return parse_overlap(text, where);
}

Overlap acting_overlaps(const Overlap& overlap, const ParallelConfig& c) {
  return {overlap.all_reduce && c.x * c.y > 1, overlap.reduce_scatter && c.z > 1, overlap.all_gather && c.z > 1};
}

}  // namespace axo
