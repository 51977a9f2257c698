// Byte sizes as text, in binary units (KiB, MiB, GiB: powers of 1024, as
// nvidia-smi and the Linux tools report memory) or decimal ones on input
// (KB, MB, GB: powers of 1000, as datasheets and nccl-tests' GB/s).
#pragma once

#include <cstdint>
#include <string>

namespace axo {

// "512 B", "1.5 KiB", "12.00 MiB", "3.20 GiB".
std::string format_bytes(double bytes);

// "1048576", "512MiB", "80GiB", "2.5GB", "64 KiB" → bytes (positive);
// InputError naming `option` and the units it takes otherwise.
int64_t parse_bytes(const std::string& text, const std::string& option);

}  // namespace axo
