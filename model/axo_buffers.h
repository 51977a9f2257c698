// The tensor-parallel layers' communication buffers in axo's own executor
// (ActivationLayout::axo; executor/parallel/linear_4d.{h,cc}), in bytes. With
// m rows of a microbatch on a rank (axo_activations.h) and each linear's block
// n_ × k_ (qkv, fc: n/y × h/x; attproj: h/x × h/y; fcproj: h/x × ffn/y):
//   rows:    under sequence parallelism over y > 1, [m, h/x] (a transposed
//            layer's output before its reduce-scatter, dY's gathered rows);
//   partial: dX before its reduction, [m + m/y, h/x] for qkv and fc over y > 1
//            (the reduce-scatter's rows after m with sequence parallelism),
//            [m, ffn/y] for fcproj over x > 1;
//   with z > 1, the pools: whole blocks (n_·k_ padded to z) in fp32 as many as
//            are in flight at once (1; with the overlaps 3: a prefetched block
//            beside the one in use, or the dW block computed beside the one
//            reducing), one z-th chunk to receive the dW reduce-scatter (the
//            send's, widened to fp32 in 2-byte training, is given back before
//            it), and in 2-byte training with the overlaps two chunks more for
//            the two gathers prefetched.
// The largest linear sets each: one layer runs at a time, and the pools grow to
// the largest block they hand out.
// Not counted: each linear's n_ fp32 bias column in 2-byte training, and the
// norms' X sums (both [m]- or n_-sized).
#pragma once

#include "model/parallel_config.h"
#include "model/transformer_spec.h"

namespace axo {

double axo_linear_buffer_bytes(const TransformerSpec& spec, const ParallelConfig& config);

}  // namespace axo
