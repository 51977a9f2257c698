// Failures and time to train, explained (see training_explain.h).
#include "planner/training_explain.h"

#include "model/byte_size.h"
#include "planner/format.h"

namespace axo {

std::string training_estimate_text(const TrainingEstimate& e, int64_t gpus, const MachineProfile& machine) {
  const Goodput& g = e.goodput;
  const double state_bytes = g.checkpoint_write_s * machine.checkpoint_filesystem_GBps * 1e9;
  std::string out = "Failures and checkpoints:\n";
  out += format("  mean time between failures  %10.0f s  (%.3g per GPU-hour on %lld GPUs)\n", g.mtbf_s,
                machine.failures_per_gpu_hour, (long long)gpus);
  out += format("  checkpoint write            %10.1f s  (%s of weights and optimizer state at %.0f GB/s)\n",
                g.checkpoint_write_s, format_bytes(state_bytes).c_str(), machine.checkpoint_filesystem_GBps);
  out += format("  restart and restore         %10.1f s  (%.0f s restart + reading the checkpoint)\n",
                g.restart_s, machine.restart_s);
  out += format("  checkpoint interval         %10.0f s  (Young: sqrt(2 * write * MTBF), whole iterations)\n",
                g.checkpoint_interval_s);
  out += format("  goodput                     %10.4f    (interval / (interval + write) * "
                "(1 - (restart + (interval + write) / 2) / MTBF))\n", g.goodput);
  if (e.has_time) {
    const TrainingTime& t = e.time;
    out += "Time to train:\n";
    out += format("  iterations                  %10.0f\n", t.iterations);
    out += format("  ideal time                  %10.2f days\n", t.ideal_s / 86400);
    out += format("  train_days                  %10.2f days  (ideal / goodput)\n", t.train_days);
    out += format("  gpu_hours                   %10.4g\n", t.gpu_hours);
    if (e.has_cost) out += format("  cost                        %10.4g\n", t.cost);
  }
  return out;
}

nlohmann::ordered_json training_estimate_json(const TrainingEstimate& e) {
  nlohmann::ordered_json j;
  j["mtbf_s"] = e.goodput.mtbf_s;
  j["checkpoint_write_s"] = e.goodput.checkpoint_write_s;
  j["restart_s"] = e.goodput.restart_s;
  j["checkpoint_interval_s"] = e.goodput.checkpoint_interval_s;
  j["goodput"] = e.goodput.goodput;
  if (e.has_time) {
    j["iterations"] = e.time.iterations;
    j["ideal_s"] = e.time.ideal_s;
    j["train_days"] = e.time.train_days;
    j["gpu_hours"] = e.time.gpu_hours;
  }
  if (e.has_cost) j["cost"] = e.time.cost;
  return j;
}

}  // namespace axo
