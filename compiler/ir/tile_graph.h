// The Tile Graph: ops on one tile each, with tensors placed in memory spaces.
//
// Tensors that must exist in global memory (GM: kernel parameters, and values
// crossing a group boundary) get a GM tensor and a buffer; everything else
// lives in unified-buffer (UB) tiles. A TileGroup is a run of Tensor Graph ops
// over the same iteration space and tile shape (fused elementwise chain): its
// body is the list of tile instructions executed for every tile of that space,
// with TLOAD/TSTORE moving data between GM and UB. Tiles differ only in their
// offsets and (for tail tiles) extents, so they are enumerated, not stored.
#ifndef PTO_COMPILER_IR_TILE_GRAPH_H_
#define PTO_COMPILER_IR_TILE_GRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/sym_expr.h"
#include "compiler/pto/opcode.h"
#include "pto/v1/graph.pb.h"

namespace pto::compiler {

// A dynamic arg of a templated kernel's block functions, for the dumps:
// the expression the runtime evaluates for it and what the code uses it
// for, e.g. "stride(%0, 0)" (buffer %0's GM stride in dim 0) or "K" (a
// matmul's run-time K); nothing for a loop-dependent offset (the indices
// print it as dK).
struct DynamicArgNote {
  SymExpr value;
  std::vector<std::string> uses;
};

// One line per dynamic arg, each `prefix` "dK = <value>" and, when the code
// uses it for something the indices do not show, "  ; <uses>".
std::string PrintDynamicArgs(const std::vector<DynamicArgNote>& args,
                             const std::string& prefix);

// A buffer the kernel addresses: a caller's parameter or a workspace.
struct GmBuffer {
  int param = -1;  // parameter index, or -1 for a workspace
  pto::v1::ParamRole role = pto::v1::PARAM_ROLE_UNSPECIFIED;
  pto::v1::DataType dtype = pto::v1::DT_UNSPECIFIED;
  std::vector<int64_t> shape;
  std::string name;  // debug only (the parameter's name)
  // Printing only: the shape with its symbols when it has any (a templated
  // kernel's Tile Graph is lowered at probe sizes, lower_symbolic.h).
  SymShape sym_shape;
  int64_t Bytes() const;
};

// A Tensor Graph value that lives in GM.
struct GmTensor {
  int value = -1;   // Tensor Graph value index
  int buffer = -1;  // index into TileGraph::buffers
};

// How a TLOAD/TSTORE addresses one dim of its buffer: `offset` plus the
// task's offset in space dim `space_dim` divided by `div` (a reduction's
// partial results: one slot per tile), or just `offset` when space_dim is -1.
// A buffer dim of size 1 always reads index 0 (broadcast). Mapping buffer
// dims to other space dims transposes (x.T: buffer dim 0 <- a1, 1 <- a0); an
// offset addresses a region (a view x[2:6, 8:], or the region an assemble
// writes).
struct GmIndex {
  int space_dim = -1;
  int64_t div = 1;
  int64_t offset = 0;
  // In a loop body: >= 0 adds the function's dynamic arg `dynamic`
  // (args[rank + dynamic], a loop-dependent offset such as a view's x[i])
  // to the offset (lower/bind_dynamic_args.h). -1: none.
  int dynamic = -1;
};

// GmIndex::space_dim of a dim a cube group walks whole, in its K loop
// (matmul's K): a task reads all of it.
inline constexpr int kGmIndexK = -2;

// The default index of a buffer of rank `buffer_rank` in a space of rank
// `space_rank`: numpy broadcasting (the buffer's dims align with the last).
std::vector<GmIndex> AlignedIndex(int buffer_rank, int space_rank);

// "a0, 0, a2/4, a1+8": the index expression of each buffer dim.
std::string FormatGmIndex(const std::vector<GmIndex>& index,
                          const std::vector<int64_t>& shape);

// Each scalar operand as printed: the immediate ("%.17g"), or "d<k>" where
// `dynamic` (TileInstr::scalar_dynamic) gives it from dynamic arg k.
std::vector<std::string> FormatScalars(const std::vector<double>& scalars,
                                       const std::vector<int>& dynamic);

// MSCATTER's combination with the destination element: replace it, add to
// it, multiply it (torch.scatter's reduce=None, 'add', 'multiply').
enum class ScatterReduce { kNone, kAdd, kMultiply };

// "none", "add", "multiply".
const char* ScatterReduceName(ScatterReduce reduce);

struct TileInstr {
  PtoOpcode op = PtoOpcode::kTMov;
  int dst = -1;           // UB tile written (every op but TSTORE)
  std::vector<int> srcs;  // UB tiles read
  int gm = -1;            // TLOAD source / TSTORE destination (GmTensor)
  std::vector<double> scalars;  // immediates (*S instructions, TCLIP)
  // Per scalar, the dynamic arg (args[rank + k]) holding its value
  // as an int64 (a scalar operand over symbols, x * n or x * i; the code
  // converts it to the tile's compute type), or -1 for the immediate. Empty:
  // every scalar an immediate.
  std::vector<int> scalar_dynamic;
  std::vector<GmIndex> index;   // TLOAD/TSTORE: one per buffer dim
  // TLOAD: the shape the buffer is read as when it is not its own (a
  // reshape that merges or splits dims: the same elements, row-major); the
  // index then has one entry per dim of this shape. Empty: the buffer's.
  std::vector<int64_t> view_shape;
  // view_shape with symbolic dims (a reshape of a tensor with a symbolic
  // dim, lower_symbolic.cc); empty when every dim is static.
  SymShape sym_view_shape;
  // TRED*/TARG*: the space dim reduced (the dst tile has extent 1 there);
  // TSTORE of such a tile: the dim in which the stored tile has extent 1;
  // TCUMSUM/TCUMPROD: the dim scanned (the dst keeps the source's shape,
  // the carry source has extent 1 there).
  int reduce_dim = -1;
  // Element type of the dst tile's values (f16 tiles hold f32 numbers
  // rounded to f16); for TSTORE, the stored value's type.
  pto::v1::DataType dtype = pto::v1::DT_FP32;
  // TLOAD/TSTORE of a buffer with a dynamic inner dim: per
  // buffer dim, the dynamic arg holding its GM stride (args[rank + k]), or
  // -1 for a static one. Empty: every stride static.
  std::vector<int> stride_dynamic;
  // MGATHER/MSCATTER: the space dim whose coordinate the index tile (their
  // last source) replaces when they address `gm` (the buffer has the
  // space's rank); -1 for every other instruction.
  int index_dim = -1;
  // MGATHER/MSCATTER/MSORT of a buffer whose extent along index_dim depends
  // on symbols: the dynamic arg holding that extent (args[rank + k], the
  // bound of a valid index; MSORT: its rows' length); -1: the buffer's
  // static extent.
  int extent_dynamic = -1;
  // MSCATTER: how a value meets the element it lands on.
  ScatterReduce scatter = ScatterReduce::kNone;
  // MSORT: largest first (false: smallest first); index_dim is the dim it
  // sorts along.
  bool descending = false;
  // TIMG2COL (a cube group's B, tile 1): the geometry's 8 ints
  // (compiler/ops/img2col.h: kh, kw, sh, sw, ph, pw, dh, dw), then the
  // feature map's channels per group, H and W. `index` addresses the
  // feature map [N, C, H, W] or [N, C, W] (in `view_shape` where set) as a TLOAD's does,
  // except that its channel dim's space dim holds the group g, which reads
  // channels from g * C/G on.
  std::vector<int64_t> img2col;
};

// A tile instruction without GM access: `opcode` into tile `dst` from
// `srcs`, of `dtype`, reducing space dim `reduce_dim` (-1: none).
TileInstr MakeInstr(PtoOpcode opcode, int dst, std::vector<int> srcs,
                    pto::v1::DataType dtype, int reduce_dim = -1);

// A TLOAD of GM buffer `gm` into tile `tile`, or a TSTORE of `tile` to it
// (by `opcode`), at `index`, of `dtype`, reducing `reduce_dim` (-1: none).
TileInstr MakeGmAccess(PtoOpcode opcode, int tile, int gm, pto::v1::DataType dtype,
                       std::vector<GmIndex> index, int reduce_dim);

// A cube group's K loop (matmul; see expand_matmul.h): each task computes one
// output tile [mL0 x nL0], loading K in blocks of k_l1 into L1 and moving
// k_l0 at a time into L0A/L0B, accumulating in L0C. Its tiles are, by
// number: 0 = A in L1, 1 = B in L1, 2 = L0A, 3 = L0B, 4 = L0C.
struct CubeLoop {
  int64_t k = 0;     // the reduced dim K
  int64_t k_l1 = 0;  // K per L1 block (TLOAD), the last one shorter
  int64_t k_l0 = 0;  // K per L0 step (TMOV, TMATMUL), the last one shorter
  bool a_trans = false;  // A is stored [..., K, M]
  bool b_trans = false;  // B is stored [..., N, K]
  // >= 0: K at run time is the function's dynamic arg args[rank +
  // k_dynamic] (a tail of K in a loop body, lower/bind_dynamic_args.h); k
  // is its bound, which sizes the L1/L0 tiles. -1: K is k.
  int k_dynamic = -1;
};

// "l1", "l0a", ... for cube tile `t` (CubeLoop's numbering).
const char* CubeTileSpace(int t);

struct TileGroup {
  std::vector<int> ops;         // Tensor Graph op indices, program order
  std::vector<int64_t> space;   // iteration space (the ops' shape)
  std::vector<int64_t> tile;    // tile shape, each dim clamped to the space
  std::vector<TileInstr> body;  // loads first, then compute, then stores
  // UB tiles %t0..%t(n-1), each [tile] (a reduction step's results: [tile]
  // with extent 1 along the reduced dim, as UB counts them).
  int num_ub_tiles = 0;
  // Storage type of each UB tile (UbStorageType: DT_FP32, DT_INT64 or
  // DT_DOUBLE); a tile is reused only by values stored the same way.
  std::vector<pto::v1::DataType> ub_types;
  // Row tiles of a fused last-dim reduction (empty: none): ub_rows[t] says
  // tile t holds one value per row (extent 1 in the last dim), such as a
  // reduction's result or a value computed from it (mean, rstd).
  std::vector<bool> ub_rows;
  // A cube group (core type CUBE): the body is TLOAD A and B (per L1
  // block), TMOV to L0A and L0B, TMATMUL (first L0 step) or TMATMUL_ACC
  // (the others), then TSTORE of L0C, in that order.
  bool is_cube = false;
  CubeLoop cube;
  // >= 0: the group's tiles along this dim run one after another, in order
  // (an accumulating reduction over a symbolic dim folds each tile into
  // one slot: expand_reduction.h). -1: all independent.
  int serial_dim = -1;
  // Every task runs after the one before it (row-major): an MSCATTER group,
  // whose tasks may write the same elements (BuildExecuteGraph).
  bool serial_all = false;
  // Printing only: the space with its symbols (parameter symbols, loop
  // extents) when it has any; `space` is then the probe's.
  SymShape sym_space;
  // Rows over a symbolic last dim (TileGraph::row_caps): 0 runs always, 1
  // only when every capped row fits its cap (the row groups), 2 otherwise
  // (the accumulating form).
  int branch = 0;
  // Printing only (templated kernels): what each dynamic arg of the group's
  // functions holds (dK = args[rank + K], lower/bind_dynamic_args.h).
  std::vector<DynamicArgNote> dynamic_args;
};

// A row over a symbolic last dim lowered as a row group (lower/symbolic_rows.h
// ExpandOptions::symbolic_rows): the value whose last dim is the row, and
// the longest row its groups hold.
struct RowCap {
  int value = -1;
  int64_t cap = 0;
};

struct TileGraph {
  std::string name;  // debug only
  std::vector<GmBuffer> buffers;  // parameters in order, then workspaces
  std::vector<GmTensor> gm;
  std::vector<TileGroup> groups;  // program order
  // Non-empty: groups of branch 1 run when every row here is within its
  // cap, those of branch 2 otherwise (both forms of the same graph).
  std::vector<RowCap> row_caps;
};

// Tiles per dim: ceil(space / tile).
std::vector<int64_t> TileGrid(const std::vector<int64_t>& space,
                              const std::vector<int64_t>& tile);

// One tile of a group: its offsets and extents (tails are shorter).
struct TileBox {
  std::vector<int64_t> offset;
  std::vector<int64_t> extent;
};

// The tile with row-major index `linear` in the grid of (space, tile).
TileBox TileAt(const std::vector<int64_t>& space,
               const std::vector<int64_t>& tile, int64_t linear);

// Human-readable form (lists at most 8 tiles per group).
std::string PrintTileGraph(const TileGraph& graph);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_IR_TILE_GRAPH_H_
