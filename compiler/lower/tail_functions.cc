#include "compiler/lower/tail_functions.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/util/strings.h"

namespace pto::compiler {
namespace {

// The run-time extents of matmul `op`'s cube group: its result's dims that
// depend on a loop index (rows and columns of a tail).
absl::Status CubeExtents(const TensorOp& op, const std::map<int, SymShape>& runtime_shape,
                         std::vector<std::optional<SymExpr>>* extent) {
  auto it = runtime_shape.find(op.outputs[0]);
  if (it == runtime_shape.end()) return absl::OkStatus();
  for (size_t d = 0; d < extent->size() && d < it->second.size(); ++d) {
    if (!it->second[d].IsConstant()) (*extent)[d] = it->second[d];
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status AddTailFunctions(const FlatGraph& flat, TileGraph* tile, BlockGraph* block,
                              pto::v1::ExecuteGraph* execute) {
  // Groups over dims whose extents depend on loop indices: the template's
  // space is that expression, and a generic function (extents from the
  // task's args) runs the tails; the full-tile function stays static.
  const size_t num_groups = tile->groups.size();
  for (size_t g = 0; g < num_groups; ++g) {
    const TileGroup& group = tile->groups[g];
    const int rank = static_cast<int>(group.space.size());
    std::vector<std::optional<SymExpr>> extent(rank);
    const std::string& where = flat.labels[group.ops.front()];
    if (group.is_cube) {
      // A cube group's space is its result's: rows and columns of a tail
      // are run-time extents (K, not a space dim, is a dynamic arg).
      absl::Status s =
          CubeExtents(flat.graph.ops[group.ops.front()], flat.runtime_shape, &extent);
      if (!s.ok()) return s;
    }
    for (int op : group.is_cube ? std::vector<int>{} : group.ops) {
      const TensorOp& t = flat.graph.ops[op];
      std::vector<int> values = t.outputs;
      values.insert(values.end(), t.inputs.begin(), t.inputs.end());
      for (int v : values) {
        auto it = flat.runtime_shape.find(v);
        if (it == flat.runtime_shape.end() ||
            flat.graph.values[v].shape != group.space) {
          continue;
        }
        for (int d = 0; d < rank; ++d) {
          if (it->second[d].IsConstant()) continue;
          if (extent[d] && *extent[d] != it->second[d]) {
            return RegionsUnimplemented(where, absl::StrCat(
                "dim ", d, " of its space is both ", extent[d]->ToString(), " and ",
                it->second[d].ToString()));
          }
          extent[d] = it->second[d];
        }
      }
    }
    bool any = false;
    for (const auto& e : extent) any = any || e.has_value();
    // MGATHER/MSCATTER/MSORT run their tails on the generic function (only
    // the task's extents of its tiles), but address whole buffers along
    // their dim: an operand lowered at a bound (a dim that depends on a
    // loop index) along that dim is refused (its buffer's extent there is
    // the bound); for MGATHER and MSORT, which read whole rows and write
    // only the task's tile, along the other dims it is a tail like any
    // other. MSCATTER writes a whole buffer: any such operand is refused.
    int index_dim = -1;
    bool scatters = false;
    for (const TileInstr& in : group.body) {
      if (PtoAddressesWholeBuffer(in.op)) index_dim = in.index_dim;
      scatters = scatters || in.op == PtoOpcode::kMScatter;
    }
    for (int op : index_dim >= 0 ? group.ops : std::vector<int>{}) {
      const TensorOp& t = flat.graph.ops[op];
      std::vector<int> values = t.outputs;
      values.insert(values.end(), t.inputs.begin(), t.inputs.end());
      for (int v : values) {
        auto it = flat.runtime_shape.find(v);
        if (it != flat.runtime_shape.end() &&
            (scatters || index_dim >= static_cast<int>(it->second.size()) ||
             !it->second[index_dim].IsConstant())) {
          return RegionsUnimplemented(
              where, scatters ? "a scatter with an operand whose extent depends on a loop index"
                              : "a gather/sort along a dim whose extent depends on a loop "
                                "index");
        }
      }
    }
    // A parameter's symbolic dim split into tiles of more than one element
    // has tails of any extent too (lower_symbolic.h dropped the probe's).
    for (int d = 0; d < rank; ++d) {
      absl::StatusOr<SymExpr> space_d =
          SymExprFromDim(execute->templates(static_cast<int>(g)).space(d));
      any = any || !space_d.ok() || (!space_d->IsConstant() && group.tile[d] > 1);
    }
    if (!any) continue;
    for (const TileInstr& in : group.body) {
      const bool rows = !group.ub_rows.empty() && extent[rank - 1].has_value();
      // (The accumulating form's tiles along its dim fold in order, tails
      // padded with the identity: any extent works.)
      if ((in.reduce_dim >= 0 && extent[in.reduce_dim].has_value() &&
           in.reduce_dim != group.serial_dim) ||
          rows) {
        return RegionsUnimplemented(where, "a reduction over a dim whose extent depends "
                                    "on a loop index");
      }
    }
    pto::v1::TaskTemplate* t = execute->mutable_templates(static_cast<int>(g));
    for (int d = 0; d < rank; ++d) {
      if (!extent[d]) continue;
      *t->mutable_space(d) = SymExprToDim(*extent[d]);
      TileGroup& printed = tile->groups[g];  // (the dumps show the extent)
      if (printed.sym_space.empty()) {
        for (int64_t x : printed.space) printed.sym_space.push_back(SymExpr(x));
      }
      printed.sym_space[d] = *extent[d];
    }
    t->set_extents_in_args(true);
    int model = -1;
    for (size_t f = 0; f < block->functions.size(); ++f) {
      if (block->functions[f].group != static_cast<int>(g)) continue;
      block->functions[f].num_args += rank;
      execute->mutable_functions(static_cast<int>(f))
          ->set_num_args(static_cast<uint32_t>(block->functions[f].num_args));
      if (block->functions[f].extent == group.tile) model = static_cast<int>(f);
    }
    if (model < 0) return absl::InternalError(absl::StrCat(where, ": no full-tile function"));
    BlockFunction generic = block->functions[model];
    generic.runtime_extents = true;
    generic.name += "_n";
    const int f = static_cast<int>(block->functions.size());
    block->functions.push_back(generic);
    pto::v1::BlockFunction* desc = execute->add_functions();
    *desc = execute->functions(model);
    desc->set_index(static_cast<uint32_t>(f));
    desc->set_name(generic.name);
    // A row group over a capped symbolic row (its probe row is longer than
    // its tile: expand_to_tiles.h symbolic_rows) runs every tile on the
    // generic function, the per-row code with c from the args: at c = the
    // cap the static function's whole-tile code (run-time strides keep it
    // from the per-row form) took 8x the generic one's time.
    if (group.branch == 1 && !group.ub_rows.empty() && group.tile.back() < group.space.back()) {
      t->clear_functions();
    }
    pto::v1::ExtentFunction* entry = t->add_functions();
    for (int d = 0; d < rank; ++d) entry->add_extent(0);
    entry->set_function(static_cast<uint32_t>(f));
  }

  return absl::OkStatus();
}

}  // namespace pto::compiler
