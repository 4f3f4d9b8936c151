#include "compiler/lower/build_execute_graph.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "compiler/util/strings.h"
#include "compiler/verify/limits.h"

namespace pto::compiler {
namespace {

// How a group touches buffers: one entry per TLOAD/TSTORE, with the index
// that maps a task's tile box to the region of the buffer it accesses.
struct Access {
  int buffer = -1;
  const std::vector<GmIndex>* index = nullptr;
  bool write = false;
};

struct PlacedGroup {
  int64_t first_task = 0;
  std::vector<int64_t> space;
  std::vector<int64_t> tile;
  std::vector<int64_t> grid;
};

std::vector<Access> AccessesOf(const TileGraph& tiles, const TileGroup& group) {
  std::vector<Access> a;
  for (const TileInstr& in : group.body) {
    if (in.op != PtoOpcode::kTLoad && in.op != PtoOpcode::kTStore) continue;
    a.push_back({tiles.gm[in.gm].buffer, &in.index, in.op == PtoOpcode::kTStore});
  }
  return a;
}

// The region of a buffer of shape `shape` that a task with tile `box`
// accesses through `index`: broadcast dims collapse to 0, a divided dim
// (a reduction's partial slot) to one slot.
TileBox Region(const TileBox& box, const std::vector<GmIndex>& index,
               const std::vector<int64_t>& shape) {
  TileBox r;
  for (size_t j = 0; j < shape.size(); ++j) {
    const GmIndex& x = index[j];
    if (x.space_dim < 0 || shape[j] == 1) {
      r.offset.push_back(shape[j] == 1 ? 0 : x.offset);
      r.extent.push_back(1);
    } else if (x.div > 1) {
      r.offset.push_back(box.offset[x.space_dim] / x.div);
      r.extent.push_back(1);
    } else {
      r.offset.push_back(x.offset + box.offset[x.space_dim]);
      r.extent.push_back(box.extent[x.space_dim]);
    }
  }
  return r;
}

// Per dim of `other`'s grid, the tile index range [lo, hi] of the tasks
// whose access through `index` to a buffer of shape `shape` overlaps
// `region` (in buffer coordinates). Space dims the index does not use (or
// broadcasts along): every tile. An empty range (hi < lo) in some dim: no
// task overlaps (disjoint regions of one buffer, e.g. two assembles).
void TouchingRange(const TileBox& region, const std::vector<GmIndex>& index,
                   const std::vector<int64_t>& shape, const PlacedGroup& other,
                   std::vector<int64_t>* lo, std::vector<int64_t>* hi) {
  const int rank = static_cast<int>(other.space.size());
  lo->assign(rank, 0);
  hi->resize(rank);
  for (int s = 0; s < rank; ++s) (*hi)[s] = other.grid[s] - 1;
  auto nothing = [&] { (*hi)[0] = (*lo)[0] - 1; };
  for (size_t j = 0; j < shape.size(); ++j) {
    const int s = index[j].space_dim;
    const int64_t off = region.offset[j], ext = region.extent[j];
    if (shape[j] == 1) continue;  // every task reads index 0 (broadcast)
    if (s < 0) {  // every task reads index `offset` (a view's fixed index)
      if (index[j].offset < off || index[j].offset >= off + ext) nothing();
      continue;
    }
    if (index[j].div > 1) {  // one slot per tile: slot = grid index
      (*lo)[s] = std::max((*lo)[s], off);
      (*hi)[s] = std::min((*hi)[s], off + ext - 1);
    } else {
      // Buffer index b = offset + a: the tasks with a in [off - offset,
      // off + ext - offset).
      const int64_t first = off - index[j].offset;
      const int64_t last = off + ext - 1 - index[j].offset;
      if (last < 0) {
        nothing();
        continue;
      }
      (*lo)[s] = std::max((*lo)[s], std::max<int64_t>(first, 0) / other.tile[s]);
      (*hi)[s] = std::min((*hi)[s], last / other.tile[s]);
    }
  }
}

int64_t CountTouching(const TileBox& region, const std::vector<GmIndex>& index,
                      const std::vector<int64_t>& shape, const PlacedGroup& other) {
  std::vector<int64_t> lo, hi;
  TouchingRange(region, index, shape, other, &lo, &hi);
  int64_t n = 1;
  for (size_t d = 0; d < lo.size(); ++d) n *= std::max<int64_t>(0, hi[d] - lo[d] + 1);
  return n;
}

void AppendTouching(const TileBox& region, const std::vector<GmIndex>& index,
                    const std::vector<int64_t>& shape, const PlacedGroup& other,
                    std::vector<uint32_t>* deps) {
  std::vector<int64_t> lo, hi;
  TouchingRange(region, index, shape, other, &lo, &hi);
  const int rank = static_cast<int>(lo.size());
  for (int d = 0; d < rank; ++d) {
    if (hi[d] < lo[d]) return;
  }
  std::vector<int64_t> at = lo;
  for (;;) {
    int64_t linear = 0;
    for (int d = 0; d < rank; ++d) linear = linear * other.grid[d] + at[d];
    deps->push_back(static_cast<uint32_t>(other.first_task + linear));
    int d = rank - 1;
    while (d >= 0 && ++at[d] > hi[d]) {
      at[d] = lo[d];
      --d;
    }
    if (d < 0) break;
  }
}

}  // namespace

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
  for (size_t f = 0; f < blocks.functions.size(); ++f) {
    const BlockFunction& fn = blocks.functions[f];
    pto::v1::BlockFunction* desc = out.add_functions();
    desc->set_index(static_cast<uint32_t>(f));
    desc->set_name(fn.name);
    desc->set_core_type(fn.core);
    desc->set_num_args(fn.num_args);
  }

  // Per buffer: the earlier groups' accesses that wrote it and read it.
  struct Earlier {
    int group;
    const std::vector<GmIndex>* index;
  };
  std::vector<std::vector<Earlier>> writers(tiles.buffers.size());
  std::vector<std::vector<Earlier>> readers(tiles.buffers.size());
  std::vector<PlacedGroup> placed;
  int64_t total_deps = 0;
  for (size_t g = 0; g < tiles.groups.size(); ++g) {
    const TileGroup& group = tiles.groups[g];
    const std::vector<Access> accesses = AccessesOf(tiles, group);
    PlacedGroup me{out.tasks_size(), group.space, group.tile,
                   TileGrid(group.space, group.tile)};
    // (my access, earlier access) pairs that may conflict: reads after
    // writes, writes after writes and reads.
    std::vector<std::pair<const Access*, Earlier>> sources;
    for (const Access& a : accesses) {
      for (const Earlier& w : writers[a.buffer]) sources.push_back({&a, w});
      if (a.write) {
        for (const Earlier& r : readers[a.buffer]) sources.push_back({&a, r});
      }
    }
    int64_t tasks = 1;
    for (int64_t n : me.grid) tasks *= n;
    for (int64_t t = 0; t < tasks; ++t) {
      const TileBox box = TileAt(group.space, group.tile, t);
      pto::v1::Task* task = out.add_tasks();
      task->set_function(blocks.FunctionOf(static_cast<int>(g), t));
      for (int64_t o : box.offset) task->add_args(o);
      std::vector<uint32_t> deps;
      for (const auto& [mine, other] : sources) {
        const std::vector<int64_t>& shape = tiles.buffers[mine->buffer].shape;
        const TileBox region = Region(box, *mine->index, shape);
        const PlacedGroup& p = placed[other.group];
        total_deps += CountTouching(region, *other.index, shape, p);
        if (total_deps > kMaxDependencies) {
          return absl::InvalidArgumentError(absl::StrCat(
              "op #", group.ops.front(), ": its tile shape ",
              FormatDims(group.tile), " against the tiles of op #",
              tiles.groups[other.group].ops.front(), " (", FormatDims(p.tile),
              ") needs more than ", kMaxDependencies,
              " task dependencies; use matching tile shapes"));
        }
        AppendTouching(region, *other.index, shape, p, &deps);
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      for (uint32_t d : deps) task->add_deps(d);
    }
    for (const Access& a : accesses) {
      (a.write ? writers : readers)[a.buffer].push_back(
          {static_cast<int>(g), a.index});
    }
    placed.push_back(std::move(me));
  }
  return out;
}

}  // namespace pto::compiler
