// A vector function run one instruction at a time over the whole tile: the
// plain form (also for run-time extents, whose loads and stores move only
// the task's part of the tile, and for the index ops).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/targets/host/host_emit.h"

namespace pto::compiler::host_emit {
namespace {

// Per UB tile of a whole-tile function (`elems` values): the values it
// holds if it is a reduction step's result (written only by TRED*,
// TARGFIRST or TARGSEL, read only by them and TSTORE: the tile's elements
// over its extent along the reduced dim), else 0 (the whole tile). Such a
// tile is declared that long (sum over dim 0 of a [64, 256] tile: 256
// values, not 16384), as ExpandToTiles counts it against UB.
std::vector<int64_t> ReducedTileElements(const PtoFunction& fn, int64_t elems) {
  auto reduces = [](PtoOpcode op) {
    return op == PtoOpcode::kTRedSum || op == PtoOpcode::kTRedMax ||
           op == PtoOpcode::kTRedMin || op == PtoOpcode::kTRedProd ||
           op == PtoOpcode::kTArgFirst || op == PtoOpcode::kTArgSel;
  };
  const int rank = static_cast<int>(fn.tile.size());
  std::vector<int64_t> values(fn.num_tiles, 0);
  std::vector<bool> other(fn.num_tiles, false);  // a whole-tile writer or reader
  for (const PtoInstr& in : fn.body) {
    if (in.dst >= 0 && in.dst < fn.num_tiles) {
      if (reduces(in.op) && in.reduce_dim >= 0 && in.reduce_dim < rank &&
          fn.tile[in.reduce_dim] > 0) {
        values[in.dst] = std::max(values[in.dst], elems / fn.tile[in.reduce_dim]);
      } else {
        other[in.dst] = true;
      }
    }
    if (in.op == PtoOpcode::kTStore || reduces(in.op)) continue;
    for (int s : in.srcs) {
      if (s >= 0 && s < fn.num_tiles) other[s] = true;
    }
  }
  for (int t = 0; t < fn.num_tiles; ++t) {
    if (other[t]) values[t] = 0;
  }
  return values;
}

}  // namespace

absl::StatusOr<std::string> EmitWholeTileFunction(const VectorFunction& f) {
  std::string out = FunctionHeader(f.index);
  const std::vector<int64_t> reduced = ReducedTileElements(*f.fn, f.elems);
  absl::StrAppend(&out, TileArrays(f, "  ", [&](int t) {
                    return f.IsRow(t) ? f.row_n : reduced[t] > 0 ? reduced[t] : f.n;
                  }));
  InstructionEmitter instructions(f, "  ", &out);
  if (absl::Status s = instructions.EmitBody(); !s.ok()) return s;
  absl::StrAppend(&out, "}\n\n");
  return out;
}

}  // namespace pto::compiler::host_emit
