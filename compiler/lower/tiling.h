// What the tiling passes (Tensor Graph -> Tile Graph, expand_to_tiles.h)
// share: their options, the state they read and fill in turn, and the facts
// of an op's iteration space and tile that every one of them uses.
#ifndef PTO_COMPILER_LOWER_TILING_H_
#define PTO_COMPILER_LOWER_TILING_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/tile_graph.h"
#include "compiler/lower/layout.h"
#include "compiler/targets/memory_model.h"

namespace pto::compiler {

struct ExpandOptions {
  bool fuse = true;  // false: one group per op (every value in GM)
  // The target's buffers (TargetMemoryModel): UB bounds every group's tiles
  // and the row tiles below, L1/L0 a matmul's cube tile.
  MemoryModel memory = kAiCoreMemoryModel;
  // Per op (empty: no constraint): ops fuse only with ops of the same class
  // (flatten_regions.h: the loop body instance an op came from).
  std::vector<int> fusion_class;
  // Per value, per dim (empty: none): the dim is symbolic (the graph is a
  // probe lowering, lower_symbolic.h). A reduction over such a dim takes the
  // accumulating form, whose structure does not depend on the size.
  std::vector<std::vector<bool>> symbolic;
  // Per value (empty: none): 0 where the value's shape is its extent, k > 0
  // where its extent is the k-th distinct run-time extent (a dim that
  // depends on a loop index, FlatGraph::runtime_shape: a view past the end
  // of a dynamic batch). Ops fuse only over one extent: a group's tiles
  // cover its extent, so a full-extent op (a full of the view's static
  // shape) must not run over a clipped one's.
  std::vector<int> extent_class;
  // Row widening (with fuse): a reduction over a static last dim that its
  // tile splits into several tiles is lowered over whole rows instead, when
  // a whole-row tile stays within MaxWidenedTileElements: the reduction's
  // tile, and that of every op with the same space and tile, is widened
  // along the last dim to the dim's extent (the other dims keep the user's
  // granularity), so the row group fuses as for a full-row tile: no partial
  // results in GM workspaces, no combine step. The vec tile bounds a block's
  // UB use, as in PyPTO; it is not a request to spill partial results. The
  // order of a row's sum changes (one pass over the row instead of per-tile
  // partials combined). false: the user's tiles as given (tests).
  // widen_rows.h.
  bool widen_rows = true;
  // Rows over a symbolic last dim (with fuse and `symbolic`): a
  // sum/amax/amin/prod over a symbolic last dim is lowered twice: as a row
  // group whose tile along the row is the cap SymbolicRowCap(tile) (the
  // ops with its space and tile widened to it, as row widening does; a
  // row of n <= cap values is one tile, and its generic function runs the
  // row code with n from its args), and in the accumulating form for any
  // n. The Tile Graph holds both: TileGroup::branch says which, and
  // TileGraph::row_caps the condition (every such row within its cap)
  // that picks the row groups at launch (build_program.h).
  // Set by TemplateOptions (lower_regions.h) for graphs without loops;
  // symbolic_rows.h.
  bool symbolic_rows = false;
};

// What the tiling passes read and make, in pass order.
struct TilingState {
  const TensorGraph* input = nullptr;
  ExpandOptions options;
  // widen_rows: `input` with some ops' tiles widened (nullopt: unchanged).
  std::optional<TensorGraph> widened;
  // layout: aliases, roots and owners of the graph's values.
  std::optional<LayoutPlan> layout;
  // fuse: the fusion groups (op indices in program order), and per concat
  // op, per input, whether the group computing that input stores it.
  std::vector<std::vector<int>> groups;
  std::vector<std::vector<bool>> concat_fused;
  // place_in_gm: each value's GmTensor in `out` (-1: none, UB only).
  std::vector<int> gm_of_value;
  // place_in_gm fills out.buffers and out.gm; tile its groups; allocate_ub
  // the bodies of the fused groups tile leaves to it (`unallocated`).
  TileGraph out;
  std::vector<int> unallocated;  // indices into out.groups

  // The graph the passes after widen_rows lower.
  const TensorGraph& graph() const { return widened ? *widened : *input; }
};

bool IsReduce(const TensorOp& op);
bool IsMatmul(const TensorOp& op);

// The space an op iterates: its output, or a reduction's (assemble's) input.
const std::vector<int64_t>& OpSpace(const TensorGraph& g, const TensorOp& op);

// The op's vec tile with each dim clamped to its space.
std::vector<int64_t> ClampedTile(const TensorGraph& g, const TensorOp& op);

int64_t TileElements(const std::vector<int64_t>& tile);

// UB bytes per element of a tile of storage type `storage` (UbStorageType).
int64_t StorageBytes(pto::v1::DataType storage);

// Whether reduction `op` keeps its reduced dim (attr keepdim).
bool Keepdim(const TensorOp& op);

// Whether reduction `op` reduces a symbolic last dim that this lowering runs
// as a row group (ExpandOptions::symbolic_rows: its tile is the row's cap,
// and rows longer than that take the other branch).
bool CappedRow(const TensorOp& op, const ExpandOptions& options);

// A sum/amax/amin/prod over the last dim in one tile (or a capped symbolic
// row), in f32 storage: it fuses with the ops around it (fuse_groups.h).
bool IsRowReduction(const TensorGraph& g, const TensorOp& op, const ExpandOptions& options);

// Whether a value of `shape` broadcasts over space S as one value per row.
bool IsRowShaped(const std::vector<int64_t>& shape, const std::vector<int64_t>& space);

// Where input `k` of concat `op` goes in its result: the sizes of the inputs
// before it along the concat dim.
std::vector<int64_t> ConcatOffsets(const TensorGraph& g, const TensorOp& op, size_t k);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_TILING_H_
