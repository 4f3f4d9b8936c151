#include "compiler/lower/build_execute_graph.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "compiler/util/strings.h"
#include "compiler/verify/limits.h"

namespace pto::compiler {
namespace {

// How a group touches buffers. A write covers the task's own tile box (an
// output has the group's shape); a read of a broadcast operand (lower rank,
// or size-1 dims) covers the box projected onto the buffer's shape.
struct GroupAccess {
  std::set<int> reads;
  std::set<int> writes;
};

struct PlacedGroup {
  int64_t first_task = 0;
  std::vector<int64_t> space;
  std::vector<int64_t> tile;
  std::vector<int64_t> grid;
};

GroupAccess AccessOf(const TileGraph& tiles, const TileGroup& group) {
  GroupAccess a;
  for (const TileInstr& in : group.body) {
    if (in.op == PtoOpcode::kTLoad) a.reads.insert(tiles.gm[in.gm].buffer);
    if (in.op == PtoOpcode::kTStore) a.writes.insert(tiles.gm[in.gm].buffer);
  }
  return a;
}

// The region of a buffer of shape `shape` that a task with tile `box` (in
// a space of rank >= the buffer's) accesses: broadcast dims collapse to 0.
TileBox Project(const TileBox& box, const std::vector<int64_t>& shape) {
  const size_t lead = box.offset.size() - shape.size();
  TileBox r;
  for (size_t d = 0; d < shape.size(); ++d) {
    const bool bcast = shape[d] == 1;
    r.offset.push_back(bcast ? 0 : box.offset[lead + d]);
    r.extent.push_back(bcast ? 1 : box.extent[lead + d]);
  }
  return r;
}

// Per dim of `other`'s grid, the tile index range [lo, hi] of the tasks
// whose access to a buffer of shape `shape` overlaps `region` (in buffer
// coordinates). Dims the buffer broadcasts along: every tile.
void TouchingRange(const TileBox& region, const std::vector<int64_t>& shape,
                   const PlacedGroup& other, std::vector<int64_t>* lo,
                   std::vector<int64_t>* hi) {
  const int rank = static_cast<int>(other.space.size());
  const int lead = rank - static_cast<int>(shape.size());
  lo->assign(rank, 0);
  hi->assign(rank, 0);
  for (int d = 0; d < rank; ++d) {
    const bool all = d < lead || (shape[d - lead] == 1 && other.space[d] != 1);
    if (all) {
      (*hi)[d] = other.grid[d] - 1;
      continue;
    }
    const int64_t off = region.offset[d - lead];
    const int64_t ext = region.extent[d - lead];
    (*lo)[d] = off / other.tile[d];
    (*hi)[d] = (off + ext - 1) / other.tile[d];
  }
}

int64_t CountTouching(const TileBox& region, const std::vector<int64_t>& shape,
                      const PlacedGroup& other) {
  std::vector<int64_t> lo, hi;
  TouchingRange(region, shape, other, &lo, &hi);
  int64_t n = 1;
  for (size_t d = 0; d < lo.size(); ++d) n *= hi[d] - lo[d] + 1;
  return n;
}

void AppendTouching(const TileBox& region, const std::vector<int64_t>& shape,
                    const PlacedGroup& other, std::vector<uint32_t>* deps) {
  std::vector<int64_t> lo, hi;
  TouchingRange(region, shape, other, &lo, &hi);
  const int rank = static_cast<int>(lo.size());
  std::vector<int64_t> index = lo;
  for (;;) {
    int64_t linear = 0;
    for (int d = 0; d < rank; ++d) linear = linear * other.grid[d] + index[d];
    deps->push_back(static_cast<uint32_t>(other.first_task + linear));
    int d = rank - 1;
    while (d >= 0 && ++index[d] > hi[d]) {
      index[d] = lo[d];
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

  // Per buffer: the earlier groups that wrote it and that read it.
  std::vector<std::vector<int>> writers(tiles.buffers.size());
  std::vector<std::vector<int>> readers(tiles.buffers.size());
  std::vector<PlacedGroup> placed;
  int64_t total_deps = 0;
  for (size_t g = 0; g < tiles.groups.size(); ++g) {
    const TileGroup& group = tiles.groups[g];
    const GroupAccess access = AccessOf(tiles, group);
    PlacedGroup me{out.tasks_size(), group.space, group.tile,
                   TileGrid(group.space, group.tile)};
    // (buffer, earlier group) pairs this group's tasks may depend on: reads
    // after writes, writes after writes and reads.
    std::vector<std::pair<int, int>> sources;
    for (int b : access.reads) {
      for (int w : writers[b]) sources.push_back({b, w});
    }
    for (int b : access.writes) {
      for (int w : writers[b]) sources.push_back({b, w});
      for (int r : readers[b]) sources.push_back({b, r});
    }
    int64_t tasks = 1;
    for (int64_t n : me.grid) tasks *= n;
    for (int64_t t = 0; t < tasks; ++t) {
      const TileBox box = TileAt(group.space, group.tile, t);
      pto::v1::Task* task = out.add_tasks();
      task->set_function(blocks.FunctionOf(static_cast<int>(g), t));
      for (int64_t o : box.offset) task->add_args(o);
      std::vector<uint32_t> deps;
      for (const auto& [b, s] : sources) {
        const std::vector<int64_t>& shape = tiles.buffers[b].shape;
        const TileBox region = Project(box, shape);
        total_deps += CountTouching(region, shape, placed[s]);
        if (total_deps > kMaxDependencies) {
          return absl::InvalidArgumentError(absl::StrCat(
              "op #", group.ops.front(), ": its tile shape ",
              FormatDims(group.tile), " against the tiles of op #",
              tiles.groups[s].ops.front(), " (", FormatDims(placed[s].tile),
              ") needs more than ", kMaxDependencies,
              " task dependencies; use matching tile shapes"));
        }
        AppendTouching(region, shape, placed[s], &deps);
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      for (uint32_t d : deps) task->add_deps(d);
    }
    for (int b : access.reads) readers[b].push_back(static_cast<int>(g));
    for (int b : access.writes) writers[b].push_back(static_cast<int>(g));
    placed.push_back(std::move(me));
  }
  return out;
}

}  // namespace pto::compiler
