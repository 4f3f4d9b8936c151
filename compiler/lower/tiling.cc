#include "compiler/lower/tiling.h"

#include <algorithm>

#include "compiler/ir/dtype.h"

namespace pto::compiler {

bool IsReduce(const TensorOp& op) {
  return op.info->category == OpCategory::kReduce;
}

bool IsMatmul(const TensorOp& op) {
  return op.info->category == OpCategory::kMatmul;
}

const std::vector<int64_t>& OpSpace(const TensorGraph& g, const TensorOp& op) {
  return g.values[IsReduce(op) || IsAssemble(op) ? op.inputs[0] : op.outputs[0]]
      .shape;
}

std::vector<int64_t> ClampedTile(const TensorGraph& g, const TensorOp& op) {
  const std::vector<int64_t>& space = OpSpace(g, op);
  std::vector<int64_t> tile = op.vec_tile;
  for (size_t d = 0; d < tile.size(); ++d) tile[d] = std::min(tile[d], space[d]);
  return tile;
}

int64_t TileElements(const std::vector<int64_t>& tile) {
  int64_t n = 1;
  for (int64_t d : tile) n *= d;
  return n;
}

int64_t StorageBytes(pto::v1::DataType storage) {
  return storage == pto::v1::DT_FP32 ? 4 : 8;
}

bool Keepdim(const TensorOp& op) {
  auto it = op.attrs.find("keepdim");
  return it != op.attrs.end() && std::get<bool>(it->second);
}

bool CappedRow(const TensorOp& op, const ExpandOptions& options) {
  return options.symbolic_rows && options.fuse && !options.symbolic.empty() &&
         !options.symbolic[op.inputs[0]].empty() && options.symbolic[op.inputs[0]].back();
}

bool IsRowReduction(const TensorGraph& g, const TensorOp& op,
                    const ExpandOptions& options) {
  if (!IsReduce(op) || op.info->kind == "argmax" || op.info->kind == "argmin") {
    return false;
  }
  const std::vector<int64_t>& space = OpSpace(g, op);
  const int rank = static_cast<int>(space.size());
  int64_t dim = 0;
  if (auto it = op.attrs.find("dim"); it != op.attrs.end()) {
    dim = std::get<int64_t>(it->second);
  }
  if (rank == 0 || (dim < 0 ? dim + rank : dim) != rank - 1) return false;
  return (ClampedTile(g, op).back() == space.back() || CappedRow(op, options)) &&
         UbStorageType(g.values[op.inputs[0]].dtype) == pto::v1::DT_FP32 &&
         UbStorageType(g.values[op.outputs[0]].dtype) == pto::v1::DT_FP32;
}

bool IsRowShaped(const std::vector<int64_t>& shape,
                 const std::vector<int64_t>& space) {
  return !space.empty() && space.back() > 1 && shape.size() <= space.size() &&
         (shape.empty() || shape.back() == 1);
}

std::vector<int64_t> ConcatOffsets(const TensorGraph& g, const TensorOp& op,
                                   size_t k) {
  const int rank = static_cast<int>(g.values[op.outputs[0]].shape.size());
  int64_t dim = std::get<int64_t>(op.attrs.at("dim"));
  if (dim < 0) dim += rank;
  std::vector<int64_t> offsets(rank, 0);
  for (size_t j = 0; j < k; ++j) offsets[dim] += g.values[op.inputs[j]].shape[dim];
  return offsets;
}

}  // namespace pto::compiler
