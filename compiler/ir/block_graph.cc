#include "compiler/ir/block_graph.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/util/strings.h"

namespace pto::compiler {

int BlockGraph::FunctionOf(int group, int64_t linear) const {
  const BlockGroup& bg = groups[group];
  const int rank = static_cast<int>(bg.grid.size());
  const TileGroup& tg = tiles->groups[group];
  int mask = 0;
  for (int d = rank - 1; d >= 0; --d) {
    int64_t index = linear % bg.grid[d];
    linear /= bg.grid[d];
    if (index == bg.grid[d] - 1 && tg.space[d] % tg.tile[d] != 0) mask |= 1 << d;
  }
  return bg.function_of_mask[mask];
}

std::string PrintBlockGraph(const BlockGraph& g) {
  std::string out = absl::StrCat("block_graph ", Quote(g.tiles->name), "\n");
  for (size_t f = 0; f < g.functions.size(); ++f) {
    const BlockFunction& fn = g.functions[f];
    absl::StrAppend(&out, "  function #", f, " ", fn.name, " group #", fn.group,
                    " extent=", FormatDims(fn.extent), " core=",
                    fn.core == pto::v1::CORE_TYPE_CUBE ? "cube" : "vector",
                    " args=", fn.num_args, fn.runtime_extents ? " extents=args" : "",
                    "\n");
  }
  for (size_t i = 0; i < g.groups.size(); ++i) {
    const BlockGroup& bg = g.groups[i];
    const TileGroup& tg = g.tiles->groups[i];
    if (!tg.sym_space.empty()) {
      // A symbolic space: the grid exists per binding; full tiles run the
      // full-tile function, tails along a symbolic dim the generic one.
      std::vector<std::string> grid, functions;
      for (size_t d = 0; d < tg.sym_space.size(); ++d) {
        grid.push_back(SymExpr::CeilDiv(tg.sym_space[d], tg.tile[d]).ToString());
      }
      for (size_t f = 0; f < g.functions.size(); ++f) {
        const BlockFunction& fn = g.functions[f];
        if (fn.group != static_cast<int>(i)) continue;
        functions.push_back(absl::StrCat(
            fn.runtime_extents ? std::string("tails") : FormatDims(fn.extent), ":", f));
      }
      absl::StrAppend(&out, "  group #", i, " grid=[", absl::StrJoin(grid, ","),
                      "] extent->function: ", absl::StrJoin(functions, " "), "\n");
    } else {
      int64_t tiles = 1;
      for (int64_t n : bg.grid) tiles *= n;
      std::vector<std::string> uses;
      for (int64_t t = 0; t < tiles && t < 16; ++t) {
        uses.push_back(absl::StrCat(g.FunctionOf(static_cast<int>(i), t)));
      }
      absl::StrAppend(&out, "  group #", i, " grid=", FormatDims(bg.grid),
                      " tile->function: ", absl::StrJoin(uses, " "),
                      tiles > 16 ? " ..." : "", "\n");
    }
    absl::StrAppend(&out, PrintDynamicArgs(tg.dynamic_args, "    "));
  }
  return out;
}

}  // namespace pto::compiler
