#include "compiler/lower/expand_matmul.h"

#include <algorithm>
#include <limits>
#include <variant>

#include "absl/strings/str_cat.h"
#include "compiler/ir/dtype.h"
#include "compiler/util/strings.h"

namespace pto::compiler {
namespace {

bool BoolAttr(const TensorOp& op, const char* name) {
  auto it = op.attrs.find(name);
  return it != op.attrs.end() && std::get<bool>(it->second);
}

// The TLOAD index of operand `o` (rank r, dims [batch..., rows, cols]) in
// a space of rank `space_rank`: batch dims aligned to the end of the
// space's batch dims (numpy broadcasting), rows following space dim `row`
// (or K), cols `col` (or K); one entry per dim of what the load reads, with
// the alias's offsets. A dim of extent 1 read from a longer buffer dim is a
// fixed index. `*rows_contiguous`: cols are strided in GM and rows lie
// contiguously (the cube reads the operand transposed).
absl::StatusOr<std::vector<GmIndex>> OperandIndex(const TensorGraph& g, int i,
                                                  int input,
                                                  const MatmulOperand& o,
                                                  int space_rank, int row,
                                                  int col,
                                                  bool* rows_contiguous) {
  const std::vector<int64_t>& shape = g.values[o.value].shape;
  const std::vector<int64_t>& buf =
      o.view_shape.empty() ? g.values[o.root].shape : o.view_shape;
  const int r = static_cast<int>(shape.size());
  const int brank = static_cast<int>(buf.size());
  if (static_cast<int>(o.dims.size()) != brank || r < 2) {
    return absl::InternalError(absl::StrCat("op #", i, " \"matmul\": input ", input,
                                            " has a malformed layout"));
  }
  std::vector<int64_t> stride(brank, 1);
  for (int j = brank - 2; j >= 0; --j) stride[j] = stride[j + 1] * buf[j + 1];
  std::vector<GmIndex> index(brank);
  int64_t row_stride = -1, col_stride = -1;  // -1: no buffer dim
  for (int j = 0; j < brank; ++j) {
    const LayoutPlan::DimMap& x = o.dims[j];
    index[j].offset = x.offset;
    if (x.dim < 0) continue;
    if (x.dim == r - 2) row_stride = stride[j];
    if (x.dim == r - 1) col_stride = stride[j];
    if (shape[x.dim] == 1 && buf[j] != 1) continue;  // one index of a longer dim
    index[j].space_dim = x.dim == r - 2   ? row
                         : x.dim == r - 1 ? col
                                          : space_rank - r + x.dim;
  }
  const bool cols_ok = shape[r - 1] == 1 || col_stride == 1;
  const bool rows_ok = shape[r - 2] == 1 || row_stride == 1;
  if (!cols_ok && !rows_ok) {
    return absl::UnimplementedError(absl::StrCat(
        "op #", i, " \"matmul\": input ", input, " (", FormatDims(shape),
        ") is a view or permute whose rows and columns are both strided in "
        "memory (neither of its last two dims is the contiguous one); clone "
        "it first"));
  }
  *rows_contiguous = !cols_ok;
  return index;
}

// The TIMG2COL operand of matmul op `i` with attr "img2col" `ints`, its
// feature map `x` [N, C, H, W] or [N, C, W] read in place (a view with offsets, or a
// reshape, of a GM tensor whose dims it keeps in order), and `groups` (a's
// dim 0): the instruction without its dst, GM tensor and dtype.
absl::StatusOr<TileInstr> Img2ColLoad(const TensorGraph& g, int i, const MatmulOperand& x,
                                      const std::vector<int64_t>& ints, int64_t groups) {
  const std::vector<int64_t>& shape = g.values[x.value].shape;
  const std::vector<int64_t>& buf =
      x.view_shape.empty() ? g.values[x.root].shape : x.view_shape;
  const size_t rank = shape.size();
  bool in_order = (rank == 3 || rank == 4) && buf.size() == rank && x.dims.size() == rank;
  for (size_t j = 0; in_order && j < rank; ++j) in_order = x.dims[j].dim == static_cast<int>(j);
  if (!in_order) {
    return absl::UnimplementedError(absl::StrCat(
        "op #", i, " \"matmul\": its img2col feature map ", FormatDims(shape),
        " is a view that reorders or drops dims of its tensor; clone it first"));
  }
  TileInstr load = MakeInstr(PtoOpcode::kTImg2Col, 1, {}, g.values[x.value].dtype);
  load.index.resize(rank);
  for (size_t j = 0; j < rank; ++j) load.index[j].offset = x.dims[j].offset;
  load.index[0].space_dim = 0;  // the image
  load.index[1].space_dim = 1;  // the group: channels from g * C/G
  load.view_shape = x.view_shape;
  load.img2col = ints;
  load.img2col.insert(load.img2col.end(),
                      {shape[1] / groups, rank == 4 ? shape[2] : 1, shape.back()});
  return load;
}

// The cube tile [mL0, mL1, kL0, kL1, nL0, nL1] of matmul op `i`, as the
// user gave it (the verifier checked its constraints), in the buffers of
// `memory`: L1 holds A's and B's blocks in the input dtype, the L0 buffers
// f32 steps.
absl::Status CheckCubeBuffers(int i, const std::vector<int64_t>& t,
                              pto::v1::DataType in_dtype, const MemoryModel& memory) {
  const int64_t elem = DTypeBytes(in_dtype);
  // The sizes come from an untrusted graph (positive, otherwise unbounded):
  // products saturate instead of overflowing past the capacity check.
  auto bytes = [](int64_t rows, int64_t cols, int64_t elem_bytes) {
    int64_t n = 0;
    if (__builtin_mul_overflow(rows, cols, &n) ||
        __builtin_mul_overflow(n, elem_bytes, &n)) {
      return std::numeric_limits<int64_t>::max();
    }
    return n;
  };
  auto sum = [](int64_t a, int64_t b) {
    int64_t n = 0;
    return __builtin_add_overflow(a, b, &n) ? std::numeric_limits<int64_t>::max() : n;
  };
  struct Need {
    const char* buffer;
    int64_t bytes, capacity;
  };
  const Need needs[] = {
      {"L1 (A [mL1 x kL1] + B [kL1 x nL1])",
       sum(bytes(t[1], t[3], elem), bytes(t[3], t[5], elem)), memory.l1_bytes},
      {"L0A ([mL0 x kL0] f32)", bytes(t[0], t[2], 4), memory.l0a_bytes},
      {"L0B ([kL0 x nL0] f32)", bytes(t[2], t[4], 4), memory.l0b_bytes},
      {"L0C ([mL0 x nL0] f32)", bytes(t[0], t[4], 4), memory.l0c_bytes},
  };
  for (const Need& need : needs) {
    if (need.bytes > need.capacity) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op #", i, " \"matmul\": cube_tile m=", FormatDims({t[0], t[1]}),
          " k=", FormatDims({t[2], t[3]}), " n=", FormatDims({t[4], t[5]}),
          " needs ", need.bytes, " bytes of ", need.buffer, ", which holds ",
          need.capacity, " bytes"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status AppendMatmul(const TensorGraph& g, int i, MatmulOperand a,
                          MatmulOperand b, const std::vector<int>& gm_of_value,
                          const MemoryModel& memory, TileGraph* out,
                          const MatmulStore* into) {
  const TensorOp& op = g.ops[i];
  const int v_a = a.value, v_out = op.outputs[0];
  const std::vector<int64_t>& space = g.values[v_out].shape;
  const int rank = static_cast<int>(space.size());
  const int a_rank = static_cast<int>(g.values[v_a].shape.size());
  if (op.cube_tile.size() != 6 || rank < 2) {
    return absl::InternalError(absl::StrCat(
        "op #", i, " \"matmul\": no cube tile (the verifier requires one)"));
  }
  if (absl::Status s = CheckCubeBuffers(i, op.cube_tile, g.values[v_a].dtype, memory);
      !s.ok()) {
    return s;
  }
  const int store_gm = into != nullptr ? into->gm : gm_of_value[v_out];
  for (int gm : {gm_of_value[a.root], gm_of_value[b.root], store_gm}) {
    if (gm < 0) {
      return absl::InternalError(absl::StrCat(
          "op #", i, " \"matmul\": an operand or the result has no GM tensor"));
    }
  }
  // Cube tasks read whole rows of A and columns of B while others write
  // their tiles of the result: the result may not share their buffer.
  const int out_buffer = out->gm[store_gm].buffer;
  for (const MatmulOperand* o : {&a, &b}) {
    if (out->gm[gm_of_value[o->root]].buffer == out_buffer) {
      return absl::UnimplementedError(absl::StrCat(
          "op #", i, " \"matmul\": the result is written into the buffer of "
          "its operand %", o->value, " (an inout parameter); write it to another "
          "tensor"));
    }
  }
  TileGroup grp;
  grp.ops = {i};
  grp.is_cube = true;
  const bool a_trans = BoolAttr(op, "a_trans"), b_trans = BoolAttr(op, "b_trans");
  const int m_dim = rank - 2, n_dim = rank - 1;
  bool a_flip = false, b_flip = false;
  absl::StatusOr<std::vector<GmIndex>> a_index =
      a_trans ? OperandIndex(g, i, 0, a, rank, kGmIndexK, m_dim, &a_flip)
              : OperandIndex(g, i, 0, a, rank, m_dim, kGmIndexK, &a_flip);
  if (!a_index.ok()) return a_index.status();
  // B: a TLOAD of its block, or (attr "img2col") TIMG2COL of the block of
  // the feature map's im2col matrix.
  auto img2col = op.attrs.find("img2col");
  const bool from_image = img2col != op.attrs.end();
  absl::StatusOr<TileInstr> load_b =
      from_image ? Img2ColLoad(g, i, b, std::get<std::vector<int64_t>>(img2col->second),
                               g.values[v_a].shape[0])
                 : MakeInstr(PtoOpcode::kTLoad, 1, {}, g.values[b.value].dtype);
  if (!load_b.ok()) return load_b.status();
  if (!from_image) {
    absl::StatusOr<std::vector<GmIndex>> b_index =
        b_trans ? OperandIndex(g, i, 1, b, rank, n_dim, kGmIndexK, &b_flip)
                : OperandIndex(g, i, 1, b, rank, kGmIndexK, n_dim, &b_flip);
    if (!b_index.ok()) return b_index.status();
    load_b->index = std::move(*b_index);
    load_b->view_shape = b.view_shape;
  }
  grp.cube.a_trans = a_trans != a_flip;
  grp.cube.b_trans = b_trans != b_flip;
  const std::vector<int64_t>& a_shape = g.values[v_a].shape;
  grp.cube.k = a_trans ? a_shape[a_rank - 2] : a_shape[a_rank - 1];
  const int64_t k = std::max<int64_t>(grp.cube.k, 1);
  grp.cube.k_l1 = std::min(op.cube_tile[3], k);
  grp.cube.k_l0 = std::min(op.cube_tile[2], grp.cube.k_l1);
  grp.space = space;
  grp.tile.assign(rank, 1);
  grp.tile[rank - 2] = std::min(op.cube_tile[0], space[rank - 2]);
  grp.tile[rank - 1] = std::min(op.cube_tile[4], space[rank - 1]);
  for (int d = 0; d < rank; ++d) grp.tile[d] = std::max<int64_t>(grp.tile[d], 1);

  const pto::v1::DataType in_dtype = g.values[v_a].dtype;
  const pto::v1::DataType f32 = pto::v1::DT_FP32;
  TileInstr load_a = MakeInstr(PtoOpcode::kTLoad, 0, {}, in_dtype);
  load_a.gm = gm_of_value[a.root];
  load_a.index = std::move(*a_index);
  load_a.view_shape = a.view_shape;
  load_b->gm = gm_of_value[b.root];
  TileInstr store = MakeInstr(PtoOpcode::kTStore, -1, {4}, g.values[v_out].dtype);
  store.gm = store_gm;
  store.index = into != nullptr ? into->index : AlignedIndex(rank, rank);
  grp.body = {std::move(load_a),
              *std::move(load_b),
              MakeInstr(PtoOpcode::kTMov, 2, {0}, in_dtype),
              MakeInstr(PtoOpcode::kTMov, 3, {1}, in_dtype),
              MakeInstr(PtoOpcode::kTMatmul, 4, {2, 3}, f32),
              MakeInstr(PtoOpcode::kTMatmulAcc, 4, {2, 3}, f32),
              std::move(store)};
  grp.num_ub_tiles = 0;  // the cube tiles are not UB tiles
  out->groups.push_back(std::move(grp));
  return absl::OkStatus();
}

}  // namespace pto::compiler
