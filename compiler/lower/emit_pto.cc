#include "compiler/lower/emit_pto.h"

#include "compiler/util/strings.h"

namespace pto::compiler {

absl::StatusOr<PtoProgram> EmitPto(const BlockGraph& blocks,
                                   const std::string& target) {
  const TileGraph& tiles = *blocks.tiles;
  PtoProgram p;
  p.kernel_name = SanitizeIdentifier(tiles.name);
  p.target = target;
  for (const GmBuffer& buf : tiles.buffers) {
    p.buffers.push_back({buf.param, buf.role, buf.dtype, buf.shape, buf.sym_shape});
  }
  for (const BlockFunction& fn : blocks.functions) {
    const TileGroup& group = tiles.groups[fn.group];
    PtoFunction f;
    f.name = SanitizeIdentifier(fn.name);
    f.core = fn.core;
    f.num_args = fn.num_args;
    f.tile = fn.extent;
    f.num_tiles = group.num_ub_tiles;
    f.ub_types = group.ub_types;
    f.ub_rows = group.ub_rows;
    f.cube = group.cube;
    f.runtime_extents = fn.runtime_extents;
    f.dynamic_args = group.dynamic_args;
    for (const TileInstr& in : group.body) {
      PtoInstr out;
      out.op = in.op;
      out.dst = in.dst;
      out.srcs = in.srcs;
      out.buffer = in.gm >= 0 ? tiles.gm[in.gm].buffer : -1;
      out.scalars = in.scalars;
      out.scalar_dynamic = in.scalar_dynamic;
      out.index = in.index;
      out.view_shape = in.view_shape;
      out.reduce_dim = in.reduce_dim;
      out.dtype = in.dtype;
      out.stride_dynamic = in.stride_dynamic;
      out.index_dim = in.index_dim;
      out.extent_dynamic = in.extent_dynamic;
      out.scatter = in.scatter;
      out.descending = in.descending;
      out.img2col = in.img2col;
      f.body.push_back(std::move(out));
    }
    p.functions.push_back(std::move(f));
  }
  return p;
}

}  // namespace pto::compiler
