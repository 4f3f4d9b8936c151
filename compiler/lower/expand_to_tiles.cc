#include "compiler/lower/expand_to_tiles.h"

#include <optional>
#include <utility>

#include "compiler/lower/allocate_ub.h"
#include "compiler/lower/fuse_groups.h"
#include "compiler/lower/layout.h"
#include "compiler/lower/place_in_gm.h"
#include "compiler/lower/symbolic_rows.h"
#include "compiler/lower/tile_groups.h"
#include "compiler/lower/widen_rows.h"

namespace pto::compiler {
namespace {

absl::Status PlanLayout(TilingState* s) {
  absl::StatusOr<LayoutPlan> layout = LayoutPlan::Make(s->graph());
  if (!layout.ok()) return layout.status();
  s->layout.emplace(*std::move(layout));
  return absl::OkStatus();
}

absl::StatusOr<TileGraph> RunTilingPasses(const TensorGraph& graph,
                                          const ExpandOptions& options) {
  TilingState state;
  state.input = &graph;
  state.options = options;
  for (const TilingPass& pass : TilingPasses()) {
    if (absl::Status s = pass.run(&state); !s.ok()) return s;
  }
  return std::move(state.out);
}

}  // namespace

const std::vector<TilingPass>& TilingPasses() {
  static const std::vector<TilingPass> passes = {
      {"widen_rows", WidenRows},    // widen_rows.h
      {"layout", PlanLayout},       // layout.h
      {"fuse", FuseGroups},         // fuse_groups.h
      {"place_in_gm", PlaceInGm},   // place_in_gm.h
      {"tile", TileGroups},         // tile_groups.h
      {"allocate_ub", AllocateUb},  // allocate_ub.h
  };
  return passes;
}

absl::StatusOr<TileGraph> ExpandToTiles(const TensorGraph& g,
                                        const ExpandOptions& options) {
  if (!options.symbolic_rows) return RunTilingPasses(g, options);
  ExpandOptions other = options;
  other.symbolic_rows = false;
  std::vector<RowCap> caps;
  std::optional<TensorGraph> capped = CapSymbolicRows(g, options, &caps);
  if (!capped) return RunTilingPasses(g, other);
  absl::StatusOr<TileGraph> rows = RunTilingPasses(*capped, options);
  absl::StatusOr<TileGraph> rest = RunTilingPasses(g, other);
  if (!rest.ok()) return rest.status();
  if (!rows.ok()) return rest;  // (e.g. an op's capped tile alone exceeds UB)
  // Only worth a branch when a row group formed over a capped row.
  if (!FormsCappedRowGroup(*rows)) return rest;
  return MergeBranches(*std::move(rows), *std::move(rest), std::move(caps));
}

}  // namespace pto::compiler
