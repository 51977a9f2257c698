// `axo plan --explain` on failures and time to train: how the goodput and
// the time to train a token budget follow from the machine's failure rate,
// the checkpoint's size and the filesystem (model/goodput.h), as text and
// JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "model/goodput.h"

namespace axo {

std::string training_estimate_text(const TrainingEstimate& estimate, int64_t gpus,
                                   const MachineProfile& machine);
nlohmann::ordered_json training_estimate_json(const TrainingEstimate& estimate);

}  // namespace axo
