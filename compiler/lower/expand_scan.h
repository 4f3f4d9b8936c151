// Tensor Graph -> Tile Graph for the scans (OpCategory::kScan: cumsum,
// cumprod; op_registry.cc). Each is a group of its own (fuse_groups.h),
// in two steps, the same at every size (a symbolic dim, the scanned one
// too, compiles once):
//
//   init: per tile of S with dim d = 1, the scan's identity (0, or 1 for
//         cumprod) into a carry workspace of the accumulator's type
//         (one slot per line along d);
//   scan: per tile of S (x's space), the tiles along d one after another
//         (TileGroup::serial_dim), the other dims in parallel:
//     TLOAD    %t0, x
//     TCVT     %t4:acc, %t0               (when x's tiles are not acc's)
//     TLOAD    %t1:acc, carry             (extent 1 along d)
//     TCUMSUM  %t2:acc, %t4, %t1, dim=d   out[i] = out[i-1] + x[i], out[-1] = carry
//     TREDLAST %t3:acc, %t2, dim=d        the last slice: the next tile's carry
//     TSTORE   carry, %t3
//     TCVT     %t5, %t2                   (to x's dtype when it differs)
//     TSTORE   out, %t5
//
// The accumulator is torch's CPU one (at::acc_type): DOUBLE for FP32 and
// DOUBLE, FP32 for FP16 and BF16 (their f32 tiles), INT64 for INT32 and
// INT64; every output rounds once from it. The running value crosses tiles
// in the accumulator's type, so the results do not depend on the tile
// shape. The last tile along d, shorter or padded, stores a carry no one
// reads. The tile is the op's vec tile, its other dims halved (the widest
// first), then d, until its tiles fit UB.
#ifndef PTO_COMPILER_LOWER_EXPAND_SCAN_H_
#define PTO_COMPILER_LOWER_EXPAND_SCAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/tile_graph.h"

namespace pto::compiler {

bool IsScanOp(const TensorOp& op);

// The accumulator of a scan of `dtype` (torch's at::acc_type on the CPU).
pto::v1::DataType ScanAccumulator(pto::v1::DataType dtype);

// Appends the groups of scan op `i` to `out`; `gm_of_value` maps a value
// with a GM tensor to it (out->gm; an alias input has none here: the
// caller points the input's load at its root, ReadAliasInput).
// INVALID_ARGUMENT (naming the op) when not even a one-element tile fits
// `ub_bytes`.
absl::Status AppendScan(const TensorGraph& g, int i, const std::vector<int>& gm_of_value,
                        int64_t ub_bytes, TileGraph* out);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_EXPAND_SCAN_H_
