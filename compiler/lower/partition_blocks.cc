#include "compiler/lower/partition_blocks.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/util/strings.h"
#include "compiler/verify/limits.h"

namespace pto::compiler {
namespace {

constexpr int kMaxKindsInName = 4;

std::string FunctionName(const TensorGraph& tensors, int group_index,
                         const TileGroup& group,
                         const std::vector<int64_t>& extent) {
  std::string name = absl::StrCat("g", group_index);
  for (size_t k = 0; k < group.ops.size(); ++k) {
    if (k == kMaxKindsInName) {
      absl::StrAppend(&name, "_etc");
      break;
    }
    absl::StrAppend(&name, "_", tensors.ops[group.ops[k]].info->kind);
  }
  absl::StrAppend(&name, "_", absl::StrJoin(extent, "x"));
  return name;
}

}  // namespace

absl::StatusOr<BlockGraph> PartitionBlocks(const TensorGraph& tensors,
                                           const TileGraph& tiles) {
  BlockGraph out;
  out.tiles = &tiles;
  for (size_t i = 0; i < tiles.groups.size(); ++i) {
    const TileGroup& group = tiles.groups[i];
    const int rank = static_cast<int>(group.space.size());
    BlockGroup bg;
    bg.grid = TileGrid(group.space, group.tile);
    int tail_dims = 0;
    for (int d = 0; d < rank; ++d) {
      if (group.space[d] % group.tile[d] != 0) tail_dims |= 1 << d;
    }
    bg.function_of_mask.assign(size_t{1} << rank, -1);
    for (int mask = 0; mask < (1 << rank); ++mask) {
      if ((mask & ~tail_dims) != 0) continue;  // no tail in some masked dim
      BlockFunction fn;
      fn.group = static_cast<int>(i);
      fn.extent = group.tile;
      for (int d = 0; d < rank; ++d) {
        if (mask & (1 << d)) fn.extent[d] = group.space[d] % group.tile[d];
      }
      fn.name = FunctionName(tensors, static_cast<int>(i), group, fn.extent);
      fn.core = group.is_cube ? pto::v1::CORE_TYPE_CUBE : pto::v1::CORE_TYPE_VECTOR;
      fn.num_args = rank;
      if (out.functions.size() >= kMaxBlockFunctions) {
        return absl::InvalidArgumentError(absl::StrCat(
            "op #", group.ops.front(), " ", Quote(tensors.ops[group.ops.front()].info->kind),
            ": the kernel needs more than ", kMaxBlockFunctions,
            " block functions (each group needs one per combination of "
            "dims with a tail tile); use tile shapes that divide the shapes "
            "or fewer distinct tilings"));
      }
      bg.function_of_mask[mask] = static_cast<int>(out.functions.size());
      out.functions.push_back(std::move(fn));
    }
    out.groups.push_back(std::move(bg));
  }
  return out;
}

}  // namespace pto::compiler
