// Values of every configuration field for the table-driven tests
// (config_fields_test, plan_file_test, plan_table_test): they walk
// config_fields() and never name a field, so a new entry is tested too.
#pragma once

#include <vector>

#include "model/config_fields.h"

namespace axo::testing {

// Values of `field` away from and at its default: a few counts (the field's
// minimum the least, 2^30 the largest allowed), every choice, on and off, a few rank orders.
inline std::vector<FieldValue> sample_values(const ConfigField& field) {
  switch (field.kind) {
    case FieldKind::count: {
      std::vector<FieldValue> counts = {1, 3, 64, FieldValue(1) << 30};
      if (field.minimum < 1) counts.insert(counts.begin(), field.minimum);
      return counts;
    }
    case FieldKind::on_off: return {0, 1};
    case FieldKind::choice: {
      std::vector<FieldValue> all;
      for (size_t i = 0; i < field.choices.size(); ++i) all.push_back(FieldValue(i));
      return all;
    }
    case FieldKind::order:
      return {order_code(parse_order("xyzdp", "test")), order_code(parse_order("pdzyx", "test")),
              order_code(parse_order("ydpxz", "test"))};
  }
  return {};
}

// A value of `field` other than its default.
inline FieldValue other_value(const ConfigField& field) {
  for (FieldValue value : sample_values(field)) {
    if (value != field.default_value() && value != (FieldValue(1) << 30)) return value;
  }
  return field.default_value();
}

// A configuration with every field away from its default.
inline ParallelConfig unusual_config() {
  ParallelConfig config;
  for (const ConfigField& field : config_fields()) field.set(config, other_value(field));
  return config;
}

}  // namespace axo::testing
