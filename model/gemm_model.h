// Time of one GEMM on one device, from the machine profile.
//
// The roofline: time = max(2mnk / (peak · e), bytes / HBM) + launch, where the
// compute efficiency e = max_efficiency · Π over m, n, k of d / (d + d½) ·
// gemm_wave_efficiency (the SMs' tiles; max_efficiency is a full wave's); an m
// or n under one tile counts as the tile it fills, whose padding the waves
// charge, so time never falls as m or n grows to a tile (beyond one, while the
// tiles fill less than a wave, d / (d + d½) still lowers it: a 512-row
// [m x 2304 x 768] GEMM prices below a 128-row one on an H100, an overlap of
// the two charges left open). For
// k, d½ is the depth a tile's fixed cost (its prologue, the epilogue writing
// the output) is worth in the k loop: gemm.half_efficiency_dim for 16-bit
// inputs, twice that for fp8, whose tensor-core instruction steps k 32
// elements where 16-bit ones step 16 in the same time (PTX ISA, wgmma.mma_async
// shapes: m64nNk16 for .f16 and .bf16, m64nNk32 for .e4m3 and .e5m2), while the
// fixed cost stays: an fp8 GEMM needs twice the k to amortize it.
// When the profile has measured samples for the precision, the roofline is
// corrected by the measured/roofline time ratio of the nearby samples
// (inverse-distance weighting in log2(m, n, k)), so a measured shape is
// reproduced exactly and shapes between samples are interpolated; a carried
// ratio never prices a GEMM above the larger of peak · max_efficiency and the
// best sample's rate.
#pragma once

#include <cstdint>

#include "model/machine_profile.h"

namespace axo {

// Tile and wave quantization: the fraction of the SMs' tile slots an [m x n]
// output keeps busy with the best of the 128x128, 128x256 and 256x128 tiles
// (CUTLASS's bf16 CTA tiles on Ampere and Hopper, the shapes cuBLAS's
// large-GEMM kernels use), m·n·split / (waves · SMs · tile_m · tile_n) with
// waves = ⌈tiles · split / SMs⌉ (a partial tile computes in
// full; a last wave that fills a part of the SMs leaves the rest idle), k split
// only when the tiles cannot fill one wave (gemm_model.cc). 1 for sm_count 0.
// E.g. A100 (108 SMs), 4096 x 1792: 32 x 14 tiles of 128x128 = 448 = 4.15
// waves -> 5; the best tile keeps 0.83 of the slots busy.
double gemm_wave_efficiency(int64_t sm_count, double m, double n, double k);
double gemm_roofline_seconds(const MachineProfile& machine, Precision precision, double m,
                             double n, double k);
double gemm_seconds(const MachineProfile& machine, Precision precision, double m, double n,
                    double k);

}  // namespace axo
