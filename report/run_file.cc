// run.json reading (see run_file.h).
#include "report/run_file.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <tuple>
#include <utility>
#include <vector>

#include "model/config_fields.h"
#include "model/error.h"
#include "model/input_file.h"
#include "model/json_text.h"
#include "model/overlap.h"
#include "model/run_schema.h"

namespace axo {

namespace {

namespace key = run_json;

// "parent.child", the path of a field in messages.
std::string path(const std::string& parent, const std::string& child) { return parent + "." + child; }

std::string type_and_value(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return std::string(value.type_name()) + " " + text;
}

// parent[key], which `field` names in messages.
const nlohmann::json& value_at(const nlohmann::json& parent, const std::string& key, const std::string& source,
                               const std::string& field) {
  if (!parent.contains(key)) throw InputError(source + ": " + field + ": missing");
  return parent[key];
}

// A finite number of seconds at `field`, from 0 (above 0 where `positive`) to kMostIterationSeconds.
double seconds_at(const nlohmann::json& parent, const std::string& key, const std::string& source,
                  const std::string& field, bool positive = false) {
  const nlohmann::json& value = value_at(parent, key, source, field);
  if (!value.is_number()) {
    throw InputError(source + ": " + field + ": expected a number of seconds, got " +
                     type_and_value(value));
  }
  const double seconds = value.get<double>();
  if (!std::isfinite(seconds) || seconds < 0 || (positive && seconds == 0) || seconds > kMostIterationSeconds) {
    char most[32];
    std::snprintf(most, sizeof most, "%g", kMostIterationSeconds);
    throw InputError(source + ": " + field + ": expected a number of seconds " + (positive ? "> 0" : ">= 0") +
                     " and at most " + most + ", got " + value.dump());
  }
  return seconds;
}

// An integer >= minimum at `field`; `expected` says what in messages.
int64_t integer_at(const nlohmann::json& parent, const std::string& key, const std::string& source,
                   const std::string& field, int64_t minimum, const char* expected) {
  const nlohmann::json& value = value_at(parent, key, source, field);
  if (!value.is_number_integer() || value.get<int64_t>() < minimum) {
    throw InputError(source + ": " + field + ": expected " + expected + ", got " + type_and_value(value));
  }
  return value.get<int64_t>();
}

int64_t count_at(const nlohmann::json& parent, const std::string& key, const std::string& source,
                 const std::string& field) {
  return integer_at(parent, key, source, field, 1, "a positive integer");
}

int64_t bytes_at(const nlohmann::json& parent, const std::string& key, const std::string& source,
                 const std::string& field) {
  return integer_at(parent, key, source, field, 0, "a number of bytes >= 0");
}

// `memory`: the rank with the largest device peak.
MeasuredMemory memory_from_json(const nlohmann::json& memory, const std::string& source) {
  if (!memory.is_object()) throw InputError(source + ": memory: expected an object, got " + type_and_value(memory));
  const std::string offload_field = path(key::kMemory, key::kOffload);
  const nlohmann::json& offload = value_at(memory, key::kOffload, source, offload_field);
  if (!offload.is_boolean()) {
    throw InputError(source + ": " + offload_field + ": expected true or false, got " + type_and_value(offload));
  }
  const std::string ranks_field = path(key::kMemory, key::kRanks);
  const nlohmann::json& ranks = value_at(memory, key::kRanks, source, ranks_field);
  if (!ranks.is_array() || ranks.empty()) {
    throw InputError(source + ": " + ranks_field + ": expected a non-empty list, got " + type_and_value(ranks));
  }
  MeasuredMemory most;
  most.offload = offload.get<bool>();
  for (size_t k = 0; k < ranks.size(); ++k) {
    const std::string at = ranks_field + "[" + std::to_string(k) + "]";
    const nlohmann::json& rank = ranks[k];
    if (!rank.is_object()) throw InputError(source + ": " + at + ": expected an object, got " + type_and_value(rank));
    MeasuredMemory m;
    m.offload = most.offload, m.rank = k;
    m.device_peak = bytes_at(rank, key::kDevicePeakBytes, source, path(at, key::kDevicePeakBytes));
    m.host = bytes_at(rank, key::kHostBytes, source, path(at, key::kHostBytes));
    const std::string parts_field = path(at, key::kDeviceAtPeakBytes);
    const nlohmann::json& parts = value_at(rank, key::kDeviceAtPeakBytes, source, parts_field);
    if (!parts.is_object()) {
      throw InputError(source + ": " + parts_field + ": expected an object of byte counts, got " +
                       type_and_value(parts));
    }
    int64_t sum = 0;
    for (size_t i = 0; i < kMemoryNames.size(); ++i) {
      m.at_peak[i] = bytes_at(parts, kMemoryNames[i], source, path(parts_field, kMemoryNames[i]));
      if (m.at_peak[i] > INT64_MAX - sum) throw InputError(source + ": " + parts_field + ": too large to add up");
      sum += m.at_peak[i];
    }
    if (sum != m.device_peak) {
      throw InputError(source + ": " + parts_field + ": adds up to " + std::to_string(sum) + ", not " +
                       key::kDevicePeakBytes + " " + std::to_string(m.device_peak));
    }
    if (k == 0 || m.device_peak > most.device_peak) most = m;
  }
  return most;
}

// The step's slowest rank's seconds: iteration_s (rank 0's), or a longer one of its `ranks` (a rank
// that waited in a collective while rank 0 wrote a checkpoint after its own step had ended). Each
// rank's seconds are checked as the step's are: the stage table adds up their compute and tp_comm
// (a hand-edited -5 printed a negative stage time).
double slowest_rank_seconds(const nlohmann::json& step, double iteration_s, const std::string& at,
                            const std::string& source) {
  double slowest = iteration_s;
  if (!step.contains(key::kRanks)) return slowest;
  const std::string ranks_field = path(at, key::kRanks);
  const nlohmann::json& ranks = step[key::kRanks];
  if (!ranks.is_array()) throw InputError(source + ": " + ranks_field + ": expected a list, got " + type_and_value(ranks));
  for (size_t k = 0; k < ranks.size(); ++k) {
    const std::string rank_field = ranks_field + "[" + std::to_string(k) + "]";
    const nlohmann::json& rank = ranks[k];
    if (!rank.is_object()) throw InputError(source + ": " + rank_field + ": expected an object, got " + type_and_value(rank));
    if (rank.contains(key::kIterationS)) {
      slowest = std::max(slowest, seconds_at(rank, key::kIterationS, source, path(rank_field, key::kIterationS)));
    }
    if (!rank.contains(key::kComponentsS)) continue;
    const std::string parts_field = path(rank_field, key::kComponentsS);
    const nlohmann::json& parts = rank[key::kComponentsS];
    if (!parts.is_object()) {
      throw InputError(source + ": " + parts_field + ": expected an object of seconds, got " + type_and_value(parts));
    }
    for (const char* name : kComponentNames) seconds_at(parts, name, source, path(parts_field, name));
  }
  return slowest;
}

// A step's components split each rank's iteration and are the mean over its ranks: they add up to
// at most about the slowest rank's seconds, never to twice them.
void check_components_fit(const std::array<double, 7>& components, double slowest_s, const std::string& source,
                          const std::string& field) {
  double sum = 0;
  for (double value : components) sum += value;
  if (sum > 2 * slowest_s) {
    throw InputError(source + ": " + field + ": add up to " + std::to_string(sum) +
                     " s, more than twice the seconds of the step's slowest rank (" + std::to_string(slowest_s) +
                     " s) they split");
  }
}

// Steps in the order they ran, where they are numbered: the first is the warm-up left out.
void check_step_order(const nlohmann::json& step, const std::string& at, const std::string& source,
                      std::optional<int64_t>& previous) {
  if (!step.contains(key::kStep)) return;
  const int64_t number = integer_at(step, key::kStep, source, path(at, key::kStep), 0, "a step number >= 0");
  if (previous && number <= *previous) {
    throw InputError(source + ": " + path(at, key::kStep) + ": " + std::to_string(number) + " after step " +
                     std::to_string(*previous) + ": the steps are out of order (the first ran is the warm-up)");
  }
  previous = number;
}

// run.json's grid: the executor's pipeline, data, z, y and x (run_json_writer.cc).
ParallelConfig grid_from_json(const nlohmann::json& grid, const std::string& source) {
  if (!grid.is_object()) throw InputError(source + ": " + key::kGrid + ": expected an object, got " + type_and_value(grid));
  ParallelConfig c;
  for (auto [name, field] : {std::pair{"pipeline", &c.pipeline}, {"data", &c.data}, {"z", &c.z}, {"y", &c.y}, {"x", &c.x}}) {
    *field = count_at(grid, name, source, path(key::kGrid, name));
  }
  return c;
}

// A precision named at `field`: fp32, bf16 or fp16 (what the CPU executor trains), or fp8 where
// `fp8` (a plan's precision the executor trained in bf16).
Precision precision_at(const nlohmann::json& root, const char* field, const std::string& source, bool fp8) {
  const nlohmann::json& p = root[field];
  for (Precision candidate : {Precision::fp32, Precision::bf16, Precision::fp16, Precision::fp8}) {
    if (p == to_string(candidate) && (fp8 || candidate != Precision::fp8)) return candidate;
  }
  throw InputError(source + ": " + field + ": expected \"fp32\", \"bf16\"" + (fp8 ? ", \"fp16\" or \"fp8\"" : " or \"fp16\"") +
                   ", got " + type_and_value(p));
}

// The grid's settings later run.json files record, as --fix spells them (a count as its digits),
// each checked as --fix checks it; the overlaps as run (kOverlap: on, off or the list run).
void read_grid_settings(const nlohmann::json& grid, const std::string& source, MeasuredRun& run) {
  const auto text_at = [&](const char* name) {
    const nlohmann::json& value = grid[name];
    if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
    if (value.is_string()) return value.get<std::string>();
    throw InputError(source + ": " + path(key::kGrid, name) + ": expected an integer or a name, got " +
                     type_and_value(value));
  };
  for (const char* name : key::kGridSettings) {
    if (!grid.contains(name)) continue;
    const std::string text = text_at(name);
    const ConfigField& field = config_field(name);
    run.settings[name] = field.text(field.parse(name, text, source + ": " + key::kGrid));
  }
  if (grid.contains(key::kOverlap)) {
    const std::string where = source + ": " + path(key::kGrid, key::kOverlap);
    run.settings[key::kOverlap] = overlap_text(recorded_overlap(text_at(key::kOverlap), where));
  }
}

}  // namespace

bool ranks_shared_cores(const MeasuredRun& run) { return run.node_cores > 0 && run.node_ranks > run.node_cores; }


std::string plan_mismatch(const MeasuredRun& run, const Plan& plan) {
  std::vector<std::tuple<std::string, std::string, std::string>> fields;  // name, run's, plan's
  auto count = [&](const char* name, int64_t ran, int64_t planned) {
    if (ran > 0) fields.emplace_back(name, std::to_string(ran), std::to_string(planned));
  };
  fields.emplace_back("model", run.model, plan.model.name);
  count("ranks", run.ranks, plan.gpus);
  const ParallelConfig& g = run.grid;
  count("pipeline", g.pipeline, plan.config.pipeline), count("data", g.data, plan.config.data);
  count("z", g.z, plan.config.z), count("y", g.y, plan.config.y), count("x", g.x, plan.config.x);
  // The rank order means nothing on one rank, nor ZeRO without data or context ranks to shard over:
  // a serial run is a one-GPU plan's whatever they say. The overlaps are compared where they act.
  const ParallelConfig& c = plan.config;
  for (const auto& [name, ran] : run.settings) {
    if ((name == "order" && c.gpus() == 1) || (name == "zero" && c.data * c.context == 1)) continue;
    const ConfigField& field = config_field(name);
    if (name == key::kOverlap) {
      const Overlap planned = c.overlap ? Overlap{} : Overlap::none();
      if (acting_overlaps(recorded_overlap(ran, run.source), c) == acting_overlaps(planned, c)) continue;
    }
    fields.emplace_back(name, ran, field.text(field.get(c)));
  }
  if (run.memory) fields.emplace_back("offload", run.memory->offload ? "on" : "off", plan.config.offload ? "on" : "off");
  count("batch", run.batch, plan.model.global_batch);
  count("microbatch", run.microbatch, plan.config.microbatch);
  count("seq", run.seq, plan.model.seq_len);
  if (run.precision_stated) {
    fields.emplace_back("precision", to_string(run.planned_precision.value_or(run.precision)),
                        to_string(plan.model.precision));
  }
  for (const auto& [name, ran, planned] : fields) {
    if (ran == planned) continue;
    const bool option = name == "batch" || name == "microbatch" || name == "seq" || name == "offload" ||
                        name == "overlap" || name == "precision";
    return run.source + " trained " + name + "=" + ran + " where the plan has " + name + "=" + planned +
           ": pair each plan with its own run" + (option ? " (train's --" + name + " makes another plan's run)" : "");
  }
  return "";
}

std::string backend_mismatch(const MeasuredRun& run, const MachineProfile& profile, const std::string& profile_path) {
  const std::string machine_kind = run.backend == key::kCudaBackend ? "gpu" : run.backend;  // run.json's, the profile's
  if (run.backend.empty() || machine_kind == profile.backend) return "";
  return run.source + " ran on the " + run.backend + " backend, and " + profile_path + " describes a " +
         profile.backend + " machine: its predictions are of another machine than the run's";
}

MeasuredRun read_run_of(const std::string& path, const Plan& plan, const std::string& plan_path) {
  MeasuredRun run = read_run_file(path);
  if (const std::string mismatch = plan_mismatch(run, plan); !mismatch.empty()) {
    throw InputError(mismatch + " (" + plan_path + ")");
  }
  return run;
}

namespace {

// One step's seconds and components, checked (steps[k] at `at`).
std::pair<double, std::array<double, 7>> step_seconds(const nlohmann::json& step, const std::string& at,
                                                      const std::string& source) {
  const double iteration = seconds_at(step, key::kIterationS, source, path(at, key::kIterationS), true);
  const std::string parts_field = path(at, key::kComponentsS);
  const nlohmann::json& parts = value_at(step, key::kComponentsS, source, parts_field);
  if (!parts.is_object()) {
    throw InputError(source + ": " + parts_field + ": expected an object of seconds, got " + type_and_value(parts));
  }
  std::array<double, 7> values{};
  for (size_t i = 0; i < kComponentNames.size(); ++i) {
    values[i] = seconds_at(parts, kComponentNames[i], source, path(parts_field, kComponentNames[i]));
  }
  check_components_fit(values, slowest_rank_seconds(step, iteration, at, source), source, parts_field);
  return {iteration, values};
}

// The mean seconds and components over `steps`, leaving out the warm-up step when there are three
// or more.
void read_steps(const nlohmann::json& steps, const std::string& source, MeasuredRun& run) {
  if (!steps.is_array() || steps.empty()) {
    throw InputError(source + ": " + key::kSteps + ": expected a non-empty list of steps, got " +
                     type_and_value(steps));
  }
  run.steps = steps.size();
  const size_t first = steps.size() >= 3 ? 1 : 0;  // leave out the warm-up step
  run.steps_used = steps.size() - first;
  std::optional<int64_t> previous_step;
  for (size_t s = 0; s < steps.size(); ++s) {
    const std::string at = std::string(key::kSteps) + "[" + std::to_string(s) + "]";
    const nlohmann::json& step = steps[s];
    if (!step.is_object()) throw InputError(source + ": " + at + ": expected an object, got " + type_and_value(step));
    check_step_order(step, at, source, previous_step);
    const auto [iteration, values] = step_seconds(step, at, source);
    if (s < first) continue;
    run.iteration_s += iteration;
    for (size_t i = 0; i < values.size(); ++i) run.components[i] += values[i];
  }
  run.iteration_s /= double(run.steps_used);
  for (double& value : run.components) value /= double(run.steps_used);
}

// The pipeline schedule the run names; message-driven, the executor's default, where it names none.
Schedule schedule_at(const nlohmann::json& root, const std::string& source) {
  if (!root.contains(key::kSchedule)) return Schedule::message_driven;
  const nlohmann::json& value = root[key::kSchedule];
  for (Schedule schedule : kSchedules) {
    if (value == to_string(schedule)) return schedule;
  }
  throw InputError(source + ": " + key::kSchedule + ": expected \"" + to_string(Schedule::message_driven) +
                   "\" or \"" + to_string(Schedule::one_f_one_b) + "\", got " + type_and_value(value));
}

// What the run says of itself beside its steps: model and ranks (required), and where it says
// node, batch, microbatch, seq, precision, backend, schedule.
void read_run_keys(const nlohmann::json& root, const std::string& source, MeasuredRun& run) {
  if (root.contains(key::kNode)) {
    const nlohmann::json& node = root[key::kNode];
    if (!node.is_object()) {
      throw InputError(source + ": " + key::kNode + ": expected an object, got " + type_and_value(node));
    }
    run.node_ranks = count_at(node, key::kRanks, source, path(key::kNode, key::kRanks));
    run.node_cores = count_at(node, key::kCores, source, path(key::kNode, key::kCores));
  }
  if (root.contains(key::kBatch)) run.batch = count_at(root, key::kBatch, source, key::kBatch);
  if (root.contains(key::kMicrobatch)) run.microbatch = count_at(root, key::kMicrobatch, source, key::kMicrobatch);
  if (root.contains(key::kSeq)) run.seq = count_at(root, key::kSeq, source, key::kSeq);
  run.precision_stated = root.contains(key::kPrecision);
  if (run.precision_stated) run.precision = precision_at(root, key::kPrecision, source, false);
  if (root.contains(key::kPlannedPrecision)) {
    run.planned_precision = precision_at(root, key::kPlannedPrecision, source, true);
  }
  // What pairs the run with its plan is required: without it any plan would pair with the run.
  const nlohmann::json& model = value_at(root, key::kModel, source, key::kModel);
  if (!model.is_string() || model.get<std::string>().empty()) {
    throw InputError(source + ": " + key::kModel + ": expected a name, got " + type_and_value(model));
  }
  run.model = model.get<std::string>();
  run.ranks = count_at(root, key::kRanks, source, key::kRanks);
  if (root.contains(key::kBackend)) {
    const nlohmann::json& backend = root[key::kBackend];
    if (backend != key::kCpuBackend && backend != key::kCudaBackend) {
      throw InputError(source + ": " + key::kBackend + ": expected \"" + key::kCpuBackend + "\" or \"" +
                       key::kCudaBackend + "\", got " + type_and_value(backend));
    }
    run.backend = backend.get<std::string>();
  }
  run.schedule = schedule_at(root, source);
}

// A step's per-rank entries, where it has them, are one per rank of the run (a list cut short had
// been read as the whole run: the stage table compared the stages of the ranks it held).
void check_step_ranks(const nlohmann::json& steps, int64_t ranks, const std::string& source) {
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!steps[i].contains(key::kRanks)) continue;
    const size_t entries = steps[i][key::kRanks].size();
    if (int64_t(entries) == ranks) continue;
    throw InputError(source + ": " + path(key::kSteps + std::string("[") + std::to_string(i) + "]", key::kRanks) + ": " +
                     std::to_string(entries) + " entries for a run of " + std::to_string(ranks) + " ranks");
  }
}

}  // namespace

MeasuredRun measured_run_from_json(const nlohmann::json& root, const std::string& source) {
  if (!root.is_object()) {
    throw InputError(source + ": expected a JSON object with '" + key::kSteps + "', got " + type_and_value(root));
  }
  MeasuredRun run;
  run.source = source;
  read_steps(value_at(root, key::kSteps, source, key::kSteps), source, run);
  read_run_keys(root, source, run);
  check_step_ranks(root[key::kSteps], run.ranks, source);
  run.grid = grid_from_json(value_at(root, key::kGrid, source, key::kGrid), source);
  read_grid_settings(root[key::kGrid], source, run);
  if (root.contains(key::kMemory)) run.memory = memory_from_json(root[key::kMemory], source);
  if (run.grid.pipeline > 1) run.stages = measured_stages(root, source, run.grid.pipeline);
  return run;
}

MeasuredRun read_run_file(const std::string& path) {
  const nlohmann::json root = parse_json_text(read_input_file(path), path);
  return measured_run_from_json(root, path);
}

}  // namespace axo
