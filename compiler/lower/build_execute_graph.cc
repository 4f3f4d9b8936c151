#include "compiler/lower/build_execute_graph.h"

#include "absl/strings/str_cat.h"
#include "compiler/util/strings.h"
#include "runtime/expand_tasks.h"
#include "compiler/verify/limits.h"

namespace pto::compiler {

std::vector<runtime::ExpandAccess> ExpandAccessesOf(const TileGraph& tiles,
                                                    const TileGroup& group) {
  std::vector<runtime::ExpandAccess> out;
  for (const TileInstr& in : group.body) {
    if (PtoAddressesWholeBuffer(in.op)) {
      // Addressed by data: the whole buffer, read (MGATHER, MSORT) or
      // written (MSCATTER).
      runtime::ExpandAccess a;
      a.buffer = tiles.gm[in.gm].buffer;
      a.write = in.op == PtoOpcode::kMScatter;
      a.index.assign(tiles.buffers[a.buffer].shape.size(),
                     {runtime::kExpandWholeDim, 1, 0});
      out.push_back(std::move(a));
      continue;
    }
    if (in.op == PtoOpcode::kTImg2Col) {
      // Its image (space dim 0) whole: the rows and columns its windows
      // reach, and (through a reshape) everything.
      runtime::ExpandAccess a;
      a.buffer = tiles.gm[in.gm].buffer;
      a.index.assign(tiles.buffers[a.buffer].shape.size(), {runtime::kExpandWholeDim, 1, 0});
      if (in.view_shape.empty() && !in.index.empty() && in.index[0].dynamic < 0) {
        a.index[0] = {in.index[0].space_dim, 1, in.index[0].offset};
      }
      out.push_back(std::move(a));
      continue;
    }
    if (in.op != PtoOpcode::kTLoad && in.op != PtoOpcode::kTStore) continue;
    runtime::ExpandAccess a;
    a.buffer = tiles.gm[in.gm].buffer;
    a.write = in.op == PtoOpcode::kTStore;
    // Through a reshape's shape: conservatively the whole buffer.
    const size_t rank = tiles.buffers[a.buffer].shape.size();
    if (!in.view_shape.empty()) {
      a.index.assign(rank, {runtime::kExpandWholeDim, 1, 0});
    }
    for (size_t j = 0; j < in.index.size() && in.view_shape.empty(); ++j) {
      const GmIndex& x = in.index[j];
      const int dim = x.space_dim == kGmIndexK ? runtime::kExpandWholeDim : x.space_dim;
      a.reads_k = a.reads_k || x.space_dim == kGmIndexK;
      a.index.push_back({dim, x.div, x.offset});
    }
    out.push_back(std::move(a));
  }
  return out;
}

void AddBlockFunctions(const BlockGraph& blocks, pto::v1::ExecuteGraph* out) {
  for (size_t f = 0; f < blocks.functions.size(); ++f) {
    const BlockFunction& fn = blocks.functions[f];
    pto::v1::BlockFunction* desc = out->add_functions();
    desc->set_index(static_cast<uint32_t>(f));
    desc->set_name(fn.name);
    desc->set_core_type(fn.core);
    desc->set_num_args(fn.num_args);
  }
}

absl::StatusOr<pto::v1::ExecuteGraph> BuildExecuteGraph(const BlockGraph& blocks) {
  const TileGraph& tiles = *blocks.tiles;
  pto::v1::ExecuteGraph out;
  for (const GmBuffer& buf : tiles.buffers) {
    pto::v1::BufferDesc* desc = out.add_buffers();
    if (buf.param >= 0) {
      desc->set_name(buf.name);
    } else {
      desc->set_workspace_bytes(buf.Bytes());
      desc->set_name(absl::StrCat("ws", out.buffers_size() - 1));
    }
  }
  AddBlockFunctions(blocks, &out);

  // Tasks and dependencies: the region-overlap analysis shared with the
  // runtime, which runs it at launch for symbolic shapes.
  std::vector<std::vector<int64_t>> shapes;
  for (const GmBuffer& buf : tiles.buffers) shapes.push_back(buf.shape);
  std::vector<runtime::ExpandGroup> groups;
  for (size_t g = 0; g < tiles.groups.size(); ++g) {
    const TileGroup& group = tiles.groups[g];
    runtime::ExpandGroup eg;
    eg.label = absl::StrCat("op #", group.ops.front());
    eg.space = group.space;
    eg.tile = group.tile;
    eg.function_of_mask = blocks.groups[g].function_of_mask;
    eg.accesses = ExpandAccessesOf(tiles, group);
    eg.serial_dim = group.serial_dim;
    eg.serial_all = group.serial_all;
    groups.push_back(std::move(eg));
  }
  runtime::ExpandLimits limits;
  limits.max_dependencies = kMaxDependencies;
  if (absl::Status s = runtime::ExpandTasks(shapes, groups, {}, limits, &out);
      !s.ok()) {
    return s;
  }
  return out;
}

}  // namespace pto::compiler
