// llm.c model files (see llmc_checkpoint.h).
#include "executor/gpt/llmc_checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>

#include "model/atomic_file.h"
#include "model/error.h"
#include "model/input_file.h"

namespace axo {

namespace {
constexpr int32_t kMagic = 20240326;
constexpr int32_t kVersionFp32 = 3;
}  // namespace

void write_llmc_model(const std::string& path, const GptShape& g, const std::vector<float>& parameters) {
  int32_t header[256] = {};
  header[0] = kMagic, header[1] = kVersionFp32, header[2] = int32_t(g.max_seq), header[3] = int32_t(g.vocab);
  header[4] = int32_t(g.layers), header[5] = int32_t(g.heads), header[6] = int32_t(g.channels);
  header[7] = int32_t(g.padded_vocab);
  std::string bytes(sizeof header + parameters.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), header, sizeof header);
  std::memcpy(bytes.data() + sizeof header, parameters.data(), parameters.size() * sizeof(float));
  write_file_atomically(path, bytes);
}

void read_llmc_model(const std::string& path, GptShape& g, std::vector<float>& parameters) {
  std::ifstream in = open_input_file(path, "model file");
  int32_t header[256];
  if (!in.read(reinterpret_cast<char*>(header), sizeof header)) {
    throw InputError(path + ": too short for an llm.c model header (1024 bytes)");
  }
  if (header[0] != kMagic) {
    throw InputError(path + ": not an llm.c model file (magic " + std::to_string(header[0]) + ", expected " +
                     std::to_string(kMagic) + ")");
  }
  if (header[1] != kVersionFp32) {
    throw InputError(path + ": llm.c model version " + std::to_string(header[1]) +
                     " is not supported (expected 3, fp32)");
  }
  g.max_seq = header[2], g.vocab = header[3], g.layers = header[4], g.heads = header[5];
  g.channels = header[6], g.padded_vocab = header[7];
  check_gpt_shape(g, path);
  // The size the header implies, checked against the file before allocating.
  const double count = double(gpt_parameter_count(g));
  in.seekg(0, std::ios::end);
  const double available = double(in.tellg() - std::streamoff(sizeof header)) / sizeof(float);
  if (count != available) {
    throw InputError(path + ": " + (count > available ? "truncated: " : "") + "the header implies " +
                     std::to_string(int64_t(count)) + " parameters (" +
                     std::to_string(int64_t(count) * int64_t(sizeof(float))) + " bytes), the file holds " +
                     std::to_string(int64_t(available * sizeof(float))) + " bytes after the header");
  }
  in.seekg(sizeof header);
  parameters.assign(size_t(gpt_parameter_count(g)), 0.0f);
  if (!in.read(reinterpret_cast<char*>(parameters.data()), std::streamsize(parameters.size() * sizeof(float)))) {
    throw InputError(path + ": truncated: expected " + std::to_string(parameters.size()) + " parameters");
  }
  // A NaN or infinite weight would surface steps later as a gradient norm of nan.
  const auto bad = std::find_if(parameters.begin(), parameters.end(), [](float v) { return !std::isfinite(v); });
  if (bad != parameters.end()) {
    throw InputError(path + ": parameter " + std::to_string(bad - parameters.begin()) + " is " +
                     (std::isnan(*bad) ? "nan" : "infinite") + ": the model file is damaged");
  }
}

}  // namespace axo
