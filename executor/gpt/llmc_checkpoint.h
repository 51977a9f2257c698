// llm.c's GPT-2 model file: a 256 × int32 header (magic 20240326, version 3
// for fp32, maxT, V, L, NH, C, Vp) and the fp32 parameters in llm.c's tensor
// order (REFERENCE-DATA.md), so models move between llm.c and axo.
#pragma once

#include <string>
#include <vector>

#include "executor/gpt/gpt.h"

namespace axo {

// Written atomically (temporary file, flush, rename).
void write_llmc_model(const std::string& path, const GptShape& shape, const std::vector<float>& parameters);
// InputError naming the file on a wrong magic, version, sizes or a short file.
void read_llmc_model(const std::string& path, GptShape& shape, std::vector<float>& parameters);

}  // namespace axo
