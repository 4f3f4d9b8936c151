#include "compiler/ir/tile_graph.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/util/strings.h"

namespace pto::compiler {

int64_t GmBuffer::Bytes() const {
  int64_t n = DTypeBytes(dtype);
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> TileGrid(const std::vector<int64_t>& space,
                              const std::vector<int64_t>& tile) {
  std::vector<int64_t> grid(space.size());
  for (size_t d = 0; d < space.size(); ++d) {
    grid[d] = (space[d] + tile[d] - 1) / tile[d];
  }
  return grid;
}

TileBox TileAt(const std::vector<int64_t>& space,
               const std::vector<int64_t>& tile, int64_t linear) {
  const std::vector<int64_t> grid = TileGrid(space, tile);
  TileBox box;
  box.offset.resize(space.size());
  box.extent.resize(space.size());
  for (int d = static_cast<int>(space.size()) - 1; d >= 0; --d) {
    int64_t index = linear % grid[d];
    linear /= grid[d];
    box.offset[d] = index * tile[d];
    box.extent[d] = std::min(tile[d], space[d] - box.offset[d]);
  }
  return box;
}

std::string PrintTileGraph(const TileGraph& g) {
  std::string out = absl::StrCat("tile_graph ", Quote(g.name), "\n");
  for (size_t b = 0; b < g.buffers.size(); ++b) {
    const GmBuffer& buf = g.buffers[b];
    std::string kind = buf.param >= 0
                           ? absl::StrCat("param #", buf.param, " ",
                                          ParamRoleName(buf.role))
                           : "workspace";
    absl::StrAppend(&out, "  buffer #", b, " ", kind, " ",
                    DTypeShortName(buf.dtype), FormatDims(buf.shape), "\n");
  }
  for (size_t t = 0; t < g.gm.size(); ++t) {
    absl::StrAppend(&out, "  gm %", g.gm[t].value, " -> buffer #",
                    g.gm[t].buffer, "\n");
  }
  for (size_t i = 0; i < g.groups.size(); ++i) {
    const TileGroup& grp = g.groups[i];
    const std::vector<int64_t> grid = TileGrid(grp.space, grp.tile);
    int64_t tiles = 1;
    for (int64_t n : grid) tiles *= n;
    absl::StrAppend(&out, "  group #", i, " ops=[", absl::StrJoin(grp.ops, ","),
                    "] space=", FormatDims(grp.space),
                    " tile=", FormatDims(grp.tile), " grid=", FormatDims(grid),
                    " ub_tiles=", grp.num_ub_tiles, "\n");
    for (const TileInstr& in : grp.body) {
      std::vector<std::string> operands;
      if (in.op == PtoOpcode::kTStore) {
        operands.push_back(absl::StrCat("%", g.gm[in.gm].value, ":gm"));
      } else {
        operands.push_back(
            absl::StrCat("%t", in.dst, ":ub.", DTypeShortName(in.dtype)));
      }
      if (in.op == PtoOpcode::kTLoad) {
        operands.push_back(absl::StrCat("%", g.gm[in.gm].value, ":gm"));
      }
      for (int s : in.srcs) operands.push_back(absl::StrCat("%t", s, ":ub"));
      for (double s : in.scalars) {
        operands.push_back(absl::StrFormat("%.17g", s));
      }
      absl::StrAppend(&out, "    ", absl::StrFormat("%-7s", PtoOpcodeName(in.op)),
                      absl::StrJoin(operands, ", "), "\n");
    }
    std::vector<std::string> shown;
    for (int64_t t = 0; t < tiles && t < 8; ++t) {
      TileBox box = TileAt(grp.space, grp.tile, t);
      shown.push_back(absl::StrCat("@", FormatDims(box.offset), "+",
                                   FormatDims(box.extent)));
    }
    absl::StrAppend(&out, "    tiles(", tiles, "): ", absl::StrJoin(shown, " "),
                    tiles > 8 ? " ..." : "", "\n");
  }
  return out;
}

}  // namespace pto::compiler
