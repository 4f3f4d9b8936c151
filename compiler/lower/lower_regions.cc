#include "compiler/lower/lower_regions.h"

#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/util/strings.h"

namespace pto::compiler {

absl::Status CheckTemplatable(const TensorGraph& graph) {
  // Index ops (and sort) address whole buffers with compile-time strides
  // and extents (expand_indexing.h): static shapes only (loops and branches
  // are fine).
  std::function<const TensorOp*(const std::vector<TensorOp>&)> index_op =
      [&](const std::vector<TensorOp>& ops) -> const TensorOp* {
    for (const TensorOp& op : ops) {
      if (op.info != nullptr && op.info->category == OpCategory::kIndex) return &op;
      for (const TensorRegion& r : op.regions) {
        if (const TensorOp* found = index_op(r.ops)) return found;
      }
    }
    return nullptr;
  };
  if (const TensorOp* op = graph.HasSymbolicDims() ? index_op(graph.ops) : nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "op ", Quote(op->info->kind),
        ": gather/scatter/sort ops need static shapes (this kernel has symbolic dims or "
        "valid regions that depend on sizes or loop indices)"));
  }
  return absl::OkStatus();
}

ExpandOptions TemplateOptions(const FlatGraph& flat, bool fuse, const MemoryModel& memory) {
  ExpandOptions options;
  options.fuse = fuse;
  options.memory = memory;
  options.fusion_class = flat.fusion_class;
  // Rows over a symbolic last dim as row groups when they fit (an if on
  // the row lengths at launch, BuildProgram); graphs with loops keep the
  // accumulating form.
  options.symbolic_rows = flat.loops.empty();
  // Dims whose extents depend on loop indices: a reduction over one takes
  // the accumulating form (its tiles along the dim fold into one slot, the
  // tail through the generic function), never partial + combine over
  // slots that a short iteration would leave unwritten.
  options.symbolic.assign(flat.graph.values.size(), {});
  for (const auto& [v, shape] : flat.runtime_shape) {
    for (const SymExpr& d : shape) options.symbolic[v].push_back(!d.IsConstant());
  }
  return options;
}

}  // namespace pto::compiler
