#include "compiler/lower/build_execute_graph.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "compiler/util/strings.h"
#include "compiler/verify/limits.h"

namespace pto::compiler {
namespace {

// How a group touches buffers; every access covers the task's own tile box
// (elementwise ops: the group's space is the buffer's shape).
struct GroupAccess {
  std::set<int> reads;
  std::set<int> writes;
};

struct PlacedGroup {
  int64_t first_task = 0;
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

// Number of tasks of `other` whose tiles overlap `box`.
int64_t CountOverlap(const TileBox& box, const PlacedGroup& other) {
  int64_t n = 1;
  for (size_t d = 0; d < box.offset.size(); ++d) {
    int64_t lo = box.offset[d] / other.tile[d];
    int64_t hi = (box.offset[d] + box.extent[d] - 1) / other.tile[d];
    n *= hi - lo + 1;
  }
  return n;
}

// Appends the tasks of `other` whose tiles overlap `box`.
void AppendOverlap(const TileBox& box, const PlacedGroup& other,
                   std::vector<uint32_t>* deps) {
  const int rank = static_cast<int>(box.offset.size());
  std::vector<int64_t> lo(rank), hi(rank), index(rank);
  for (int d = 0; d < rank; ++d) {
    lo[d] = box.offset[d] / other.tile[d];
    hi[d] = (box.offset[d] + box.extent[d] - 1) / other.tile[d];
    index[d] = lo[d];
  }
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
    PlacedGroup me{out.tasks_size(), group.tile, TileGrid(group.space, group.tile)};
    std::set<int> sources;  // earlier groups this group's tasks depend on
    for (int b : access.reads) sources.insert(writers[b].begin(), writers[b].end());
    for (int b : access.writes) {
      sources.insert(writers[b].begin(), writers[b].end());
      sources.insert(readers[b].begin(), readers[b].end());
    }
    int64_t tasks = 1;
    for (int64_t n : me.grid) tasks *= n;
    for (int64_t t = 0; t < tasks; ++t) {
      const TileBox box = TileAt(group.space, group.tile, t);
      pto::v1::Task* task = out.add_tasks();
      task->set_function(blocks.FunctionOf(static_cast<int>(g), t));
      for (int64_t o : box.offset) task->add_args(o);
      std::vector<uint32_t> deps;
      for (int s : sources) {
        total_deps += CountOverlap(box, placed[s]);
        if (total_deps > kMaxDependencies) {
          return absl::InvalidArgumentError(absl::StrCat(
              "op #", group.ops.front(), ": its tile shape ",
              FormatDims(group.tile), " against the tiles of op #",
              tiles.groups[s].ops.front(), " (", FormatDims(placed[s].tile),
              ") needs more than ", kMaxDependencies,
              " task dependencies; use matching tile shapes"));
        }
        AppendOverlap(box, placed[s], &deps);
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
