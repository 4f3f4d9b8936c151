#include "compiler/lower/expand_to_tiles.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "compiler/util/strings.h"
#include "compiler/verify/limits.h"

namespace pto::compiler {
namespace {

constexpr int64_t kUbElementBytes = 4;  // UB tiles are f32 (f16 widens)

std::vector<int64_t> ClampedTile(const TensorGraph& g, const TensorOp& op) {
  const std::vector<int64_t>& space = g.values[op.outputs[0]].shape;
  std::vector<int64_t> tile = op.vec_tile;
  for (size_t d = 0; d < tile.size(); ++d) tile[d] = std::min(tile[d], space[d]);
  return tile;
}

int64_t TileBytes(const std::vector<int64_t>& tile) {
  int64_t n = kUbElementBytes;
  for (int64_t d : tile) n *= d;
  return n;
}

// UB tiles a group needs: one per value loaded from outside, one per result.
int CountUbTiles(const TensorGraph& g, const std::vector<int>& ops) {
  std::set<int> defined, loaded;
  for (int i : ops) {
    for (int v : g.ops[i].inputs) {
      if (!defined.count(v)) loaded.insert(v);
    }
    for (int v : g.ops[i].outputs) defined.insert(v);
  }
  return static_cast<int>(loaded.size() + defined.size());
}

// Splits the program into fusion groups (op index lists).
absl::StatusOr<std::vector<std::vector<int>>> FormGroups(
    const TensorGraph& g, const ExpandOptions& options) {
  std::vector<std::vector<int>> groups;
  std::vector<int64_t> space, tile;
  for (int i = 0; i < static_cast<int>(g.ops.size()); ++i) {
    const TensorOp& op = g.ops[i];
    const std::vector<int64_t>& op_space = g.values[op.outputs[0]].shape;
    const std::vector<int64_t> op_tile = ClampedTile(g, op);
    const int64_t bytes = TileBytes(op_tile);
    const int alone = CountUbTiles(g, {i});
    if (alone * bytes > kMaxUbBytesPerBlock) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op #", i, " ", Quote(op.info->kind), ": vec_tile ",
          FormatDims(op.vec_tile), " needs ", alone, " UB tiles of ", bytes,
          " bytes; a block may use ", kMaxUbBytesPerBlock,
          " bytes (use a smaller tile)"));
    }
    bool join = options.fuse && !groups.empty() && op_space == space &&
                op_tile == tile;
    if (join) {
      std::vector<int> candidate = groups.back();
      candidate.push_back(i);
      join = CountUbTiles(g, candidate) * bytes <= kMaxUbBytesPerBlock;
    }
    if (join) {
      groups.back().push_back(i);
    } else {
      groups.push_back({i});
      space = op_space;
      tile = op_tile;
    }
  }
  return groups;
}

}  // namespace

absl::StatusOr<TileGraph> ExpandToTiles(const TensorGraph& g,
                                        const ExpandOptions& options) {
  absl::StatusOr<std::vector<std::vector<int>>> groups = FormGroups(g, options);
  if (!groups.ok()) return groups.status();

  // Which group defines each value (-1: a parameter's incoming data).
  const int num_values = static_cast<int>(g.values.size());
  std::vector<int> group_of_op(g.ops.size());
  std::vector<int> def_group(num_values, -1);
  for (size_t k = 0; k < groups->size(); ++k) {
    for (int i : (*groups)[k]) {
      group_of_op[i] = static_cast<int>(k);
      for (int v : g.ops[i].outputs) def_group[v] = static_cast<int>(k);
    }
  }

  // A value lives in GM when it is bound to a parameter or crosses groups.
  TileGraph out;
  out.name = g.name;
  std::vector<int> buffer_of_value(num_values, -1);
  for (size_t p = 0; p < g.params.size(); ++p) {
    const TensorParam& param = g.params[p];
    const int any = param.in_value >= 0 ? param.in_value : param.out_value;
    GmBuffer buf;
    buf.param = static_cast<int>(p);
    buf.role = param.role;
    buf.dtype = g.values[any].dtype;
    buf.shape = g.values[any].shape;
    buf.name = param.name;
    out.buffers.push_back(std::move(buf));
    if (param.in_value >= 0) buffer_of_value[param.in_value] = static_cast<int>(p);
    if (param.out_value >= 0) buffer_of_value[param.out_value] = static_cast<int>(p);
  }
  std::vector<bool> crosses(num_values, false);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    for (int v : g.ops[i].inputs) {
      if (def_group[v] != group_of_op[i]) crosses[v] = true;
    }
  }
  std::vector<int> gm_of_value(num_values, -1);
  for (int v = 0; v < num_values; ++v) {
    if (buffer_of_value[v] < 0 && crosses[v]) {
      GmBuffer buf;
      buf.dtype = g.values[v].dtype;
      buf.shape = g.values[v].shape;
      buffer_of_value[v] = static_cast<int>(out.buffers.size());
      out.buffers.push_back(std::move(buf));
    }
    if (buffer_of_value[v] >= 0) {
      gm_of_value[v] = static_cast<int>(out.gm.size());
      out.gm.push_back({v, buffer_of_value[v]});
    }
  }

  for (const std::vector<int>& ops : *groups) {
    TileGroup grp;
    grp.ops = ops;
    const TensorOp& first = g.ops[ops.front()];
    grp.space = g.values[first.outputs[0]].shape;
    grp.tile = ClampedTile(g, first);
    std::map<int, int> ub_of_value;
    // Loads first: everything the group reads from outside, in first-use
    // order (an inout buffer is read before the group overwrites it).
    for (int i : ops) {
      for (int v : g.ops[i].inputs) {
        if (ub_of_value.count(v) || (def_group[v] == group_of_op[i] &&
                                     def_group[v] >= 0)) {
          continue;
        }
        TileInstr load;
        load.op = PtoOpcode::kTLoad;
        load.dst = grp.num_ub_tiles++;
        load.gm = gm_of_value[v];
        load.dtype = g.values[v].dtype;
        ub_of_value[v] = load.dst;
        grp.body.push_back(load);
      }
    }
    std::vector<int> results;
    for (int i : ops) {
      const TensorOp& op = g.ops[i];
      TileInstr instr;
      instr.op = op.info->pto;
      for (int v : op.inputs) instr.srcs.push_back(ub_of_value.at(v));
      instr.scalar = TensorGraph::Scalar(op);
      instr.dst = grp.num_ub_tiles++;
      instr.dtype = g.values[op.outputs[0]].dtype;
      ub_of_value[op.outputs[0]] = instr.dst;
      grp.body.push_back(std::move(instr));
      results.push_back(op.outputs[0]);
    }
    for (int v : results) {
      if (gm_of_value[v] < 0) continue;  // stays in UB (or is dead)
      TileInstr store;
      store.op = PtoOpcode::kTStore;
      store.gm = gm_of_value[v];
      store.dtype = g.values[v].dtype;
      store.srcs.push_back(ub_of_value.at(v));
      grp.body.push_back(std::move(store));
    }
    out.groups.push_back(std::move(grp));
  }
  return out;
}

}  // namespace pto::compiler
