#include "compiler/lower/expand_matmul.h"

#include <algorithm>
#include <variant>

#include "absl/strings/str_cat.h"

namespace pto::compiler {
namespace {

bool BoolAttr(const TensorOp& op, const char* name) {
  auto it = op.attrs.find(name);
  return it != op.attrs.end() && std::get<bool>(it->second);
}

// The index of an operand of shape [batch..., R, C] in the output space
// [batch..., M, N]: batch dims aligned to the end of the output's batch
// dims (numpy broadcasting; size-1 dims read index 0), the row dim
// following space dim `row` (or K), the column dim `col` (or K).
std::vector<GmIndex> OperandIndex(int operand_rank, int space_rank, int row,
                                  int col) {
  std::vector<GmIndex> index(operand_rank);
  const int batch = operand_rank - 2, space_batch = space_rank - 2;
  for (int j = 0; j < batch; ++j) index[j].space_dim = space_batch - batch + j;
  index[operand_rank - 2].space_dim = row;
  index[operand_rank - 1].space_dim = col;
  return index;
}

}  // namespace

absl::Status AppendMatmul(const TensorGraph& g, int i, MatmulOperand a,
                          MatmulOperand b, const std::vector<int>& gm_of_value,
                          TileGraph* out) {
  const TensorOp& op = g.ops[i];
  const int v_a = a.value, v_b = b.value, v_out = op.outputs[0];
  const std::vector<int64_t>& space = g.values[v_out].shape;
  const int rank = static_cast<int>(space.size());
  const int a_rank = static_cast<int>(g.values[v_a].shape.size());
  const int b_rank = static_cast<int>(g.values[v_b].shape.size());
  if (op.cube_tile.size() != 6 || rank < 2) {
    return absl::InternalError(absl::StrCat(
        "op #", i, " \"matmul\": no cube tile (the verifier requires one)"));
  }
  for (int v : {v_a, v_b, v_out}) {
    if (gm_of_value[v] < 0) {
      return absl::InternalError(absl::StrCat(
          "op #", i, " \"matmul\": value %", v, " has no GM tensor"));
    }
  }
  // Cube tasks read whole rows of A and columns of B while others write
  // their tiles of the result: the result may not share their buffer.
  const int out_buffer = out->gm[gm_of_value[v_out]].buffer;
  for (int v : {v_a, v_b}) {
    if (out->gm[gm_of_value[v]].buffer == out_buffer) {
      return absl::UnimplementedError(absl::StrCat(
          "op #", i, " \"matmul\": the result is written into the buffer of "
          "its operand %", v, " (an inout parameter); write it to another "
          "tensor"));
    }
  }
  TileGroup grp;
  grp.ops = {i};
  grp.is_cube = true;
  grp.cube.a_trans = BoolAttr(op, "a_trans") != a.transposed;
  grp.cube.b_trans = BoolAttr(op, "b_trans") != b.transposed;
  const std::vector<int64_t>& a_shape = g.values[v_a].shape;
  grp.cube.k = grp.cube.a_trans ? a_shape[a_rank - 2] : a_shape[a_rank - 1];
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
  const int m_dim = rank - 2, n_dim = rank - 1;
  auto instr = [](PtoOpcode opcode, int dst, std::vector<int> srcs,
                  pto::v1::DataType dtype) {
    TileInstr t;
    t.op = opcode;
    t.dst = dst;
    t.srcs = std::move(srcs);
    t.dtype = dtype;
    return t;
  };
  TileInstr load_a = instr(PtoOpcode::kTLoad, 0, {}, in_dtype);
  load_a.gm = gm_of_value[v_a];
  load_a.index = grp.cube.a_trans ? OperandIndex(a_rank, rank, kGmIndexK, m_dim)
                                  : OperandIndex(a_rank, rank, m_dim, kGmIndexK);
  TileInstr load_b = instr(PtoOpcode::kTLoad, 1, {}, in_dtype);
  load_b.gm = gm_of_value[v_b];
  load_b.index = grp.cube.b_trans ? OperandIndex(b_rank, rank, n_dim, kGmIndexK)
                                  : OperandIndex(b_rank, rank, kGmIndexK, n_dim);
  TileInstr store = instr(PtoOpcode::kTStore, -1, {4}, g.values[v_out].dtype);
  store.gm = gm_of_value[v_out];
  store.index = AlignedIndex(rank, rank);
  grp.body = {std::move(load_a),
              std::move(load_b),
              instr(PtoOpcode::kTMov, 2, {0}, in_dtype),
              instr(PtoOpcode::kTMov, 3, {1}, in_dtype),
              instr(PtoOpcode::kTMatmul, 4, {2, 3}, f32),
              instr(PtoOpcode::kTMatmulAcc, 4, {2, 3}, f32),
              std::move(store)};
  grp.num_ub_tiles = 0;  // the cube tiles are not UB tiles
  out->groups.push_back(std::move(grp));
  return absl::OkStatus();
}

}  // namespace pto::compiler
