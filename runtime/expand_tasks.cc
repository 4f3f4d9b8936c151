#include "runtime/expand_tasks.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pto::runtime {
namespace {

struct Box {
  std::vector<int64_t> offset;
  std::vector<int64_t> extent;
};

struct Placed {
  int64_t first_task = 0;
  const ExpandGroup* group = nullptr;
  std::vector<int64_t> grid;
};

std::string Dims(const std::vector<int64_t>& d) {
  return absl::StrCat("[", absl::StrJoin(d, ","), "]");
}

// The tile with row-major index `linear` and its tail mask, into `*tile`
// (reused from task to task: no allocation per task).
void TileAt(const ExpandGroup& g, const std::vector<int64_t>& grid,
            int64_t linear, int* mask, Box* tile) {
  const int rank = static_cast<int>(g.space.size());
  Box& b = *tile;
  b.offset.resize(rank);
  b.extent.resize(rank);
  *mask = 0;
  for (int d = rank - 1; d >= 0; --d) {
    const int64_t i = linear % grid[d];
    linear /= grid[d];
    b.offset[d] = i * g.tile[d];
    b.extent[d] = std::min(g.tile[d], g.space[d] - b.offset[d]);
    if (b.extent[d] != g.tile[d]) *mask |= 1 << d;
  }
}

// The region of a buffer of shape `shape` that a task with tile `box`
// accesses through `index`: broadcast dims collapse to 0, a divided dim
// (a reduction's partial slot) to one slot, an offset index shifts, a
// whole dim (matmul's K) spans the buffer's dim. Into `*out` (reused).
void Region(const Box& box, const std::vector<ExpandIndex>& index,
            const std::vector<int64_t>& shape, Box* out) {
  Box& r = *out;
  r.offset.clear();
  r.extent.clear();
  for (size_t j = 0; j < shape.size(); ++j) {
    const ExpandIndex& x = index[j];
    if (x.space_dim == kExpandWholeDim) {
      r.offset.push_back(0);
      r.extent.push_back(shape[j]);
    } else if (x.space_dim < 0 || shape[j] == 1) {
      r.offset.push_back(shape[j] == 1 ? 0 : x.offset);
      r.extent.push_back(1);
    } else if (x.div > 1) {  // the slots of the tiles the box spans
      const int64_t first = box.offset[x.space_dim] / x.div;
      const int64_t last =
          (box.offset[x.space_dim] + box.extent[x.space_dim] - 1) / x.div;
      r.offset.push_back(first);
      r.extent.push_back(last - first + 1);
    } else {
      r.offset.push_back(x.offset + box.offset[x.space_dim]);
      r.extent.push_back(box.extent[x.space_dim]);
    }
  }
}

// Per dim of `other`'s grid, the tile index range [lo, hi] of the tasks
// whose access through `index` to a buffer of shape `shape` overlaps
// `region` (in buffer coordinates). Space dims the index does not use (or
// broadcasts along): every tile. An empty range (hi < lo) in some dim: no
// task overlaps (disjoint regions of one buffer, e.g. two assembles).
void TouchingRange(const Box& region, const std::vector<ExpandIndex>& index,
                   const std::vector<int64_t>& shape, const Placed& other,
                   std::vector<int64_t>* lo, std::vector<int64_t>* hi) {
  const std::vector<int64_t>& tile = other.group->tile;
  const int rank = static_cast<int>(other.group->space.size());
  lo->assign(rank, 0);
  hi->resize(rank);
  for (int s = 0; s < rank; ++s) (*hi)[s] = other.grid[s] - 1;
  auto nothing = [&] { (*hi)[0] = (*lo)[0] - 1; };
  for (size_t j = 0; j < shape.size(); ++j) {
    const int s = index[j].space_dim;
    const int64_t off = region.offset[j], ext = region.extent[j];
    if (shape[j] == 1) continue;  // every task reads index 0 (broadcast)
    if (s == kExpandWholeDim) continue;  // every task reads the whole dim
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
      (*lo)[s] = std::max((*lo)[s], std::max<int64_t>(first, 0) / tile[s]);
      (*hi)[s] = std::min((*hi)[s], last / tile[s]);
    }
  }
}

int64_t CountTouching(const std::vector<int64_t>& lo,
                      const std::vector<int64_t>& hi) {
  int64_t n = 1;
  for (size_t d = 0; d < lo.size(); ++d) n *= std::max<int64_t>(0, hi[d] - lo[d] + 1);
  return n;
}

// (`at`: scratch, reused from call to call.)
void AppendTouching(const std::vector<int64_t>& lo, const std::vector<int64_t>& hi,
                    const Placed& other, std::vector<uint32_t>* deps,
                    std::vector<int64_t>* scratch) {
  const int rank = static_cast<int>(lo.size());
  for (int d = 0; d < rank; ++d) {
    if (hi[d] < lo[d]) return;
  }
  std::vector<int64_t>& at = *scratch;
  at = lo;
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

// The region a group's access covers over its whole space (tiles cover the
// space, so a write writes all of it).
Box Bounds(const ExpandGroup& g, const std::vector<ExpandIndex>& index,
           const std::vector<int64_t>& shape) {
  Box whole;
  whole.offset.assign(g.space.size(), 0);
  whole.extent = g.space;
  Box r;
  Region(whole, index, shape, &r);
  return r;
}

bool Overlap(const Box& a, const Box& b) {
  for (size_t d = 0; d < a.offset.size(); ++d) {
    if (a.offset[d] >= b.offset[d] + b.extent[d] ||
        b.offset[d] >= a.offset[d] + a.extent[d]) {
      return false;
    }
  }
  return true;
}

bool Inside(const Box& inner, const Box& outer) {
  for (size_t d = 0; d < inner.offset.size(); ++d) {
    if (inner.offset[d] < outer.offset[d] ||
        inner.offset[d] + inner.extent[d] > outer.offset[d] + outer.extent[d]) {
      return false;
    }
  }
  return true;
}

struct Earlier {
  int group;
  const std::vector<ExpandIndex>* index;
  Box bounds;
};

// Earlier accesses of one buffer, ordered by (first row, arrival): finding
// those that overlap a region looks only at those starting within the
// longest extent before it.
class AccessIndexByRow {
 public:
  void Add(Earlier e) {
    const int64_t row = e.bounds.offset.empty() ? 0 : e.bounds.offset[0];
    const int64_t rows = e.bounds.offset.empty() ? 1 : e.bounds.extent[0];
    max_rows_ = std::max(max_rows_, rows);
    by_row_.emplace(std::make_pair(row, next_++), std::move(e));
  }

  // The earlier accesses overlapping `region`, in arrival order.
  void Overlapping(const Box& region, std::vector<const Earlier*>* out) const {
    out->clear();
    for (auto it = First(region); it != by_row_.end() && it->first.first < End(region);
         ++it) {
      if (Overlap(it->second.bounds, region)) out->push_back(&it->second);
    }
    std::sort(out->begin(), out->end(),
              [](const Earlier* a, const Earlier* b) { return a->group < b->group; });
  }

  void RemoveInside(const Box& region) {
    for (auto it = First(region); it != by_row_.end() && it->first.first < End(region);) {
      it = Inside(it->second.bounds, region) ? by_row_.erase(it) : std::next(it);
    }
  }

 private:
  using Map = std::map<std::pair<int64_t, int64_t>, Earlier>;
  Map::const_iterator First(const Box& region) const {
    const int64_t row = region.offset.empty() ? 0 : region.offset[0];
    return by_row_.lower_bound({row - max_rows_ + 1, 0});
  }
  Map::iterator First(const Box& region) {
    const int64_t row = region.offset.empty() ? 0 : region.offset[0];
    return by_row_.lower_bound({row - max_rows_ + 1, 0});
  }
  static int64_t End(const Box& region) {
    return region.offset.empty() ? 1 : region.offset[0] + region.extent[0];
  }

  Map by_row_;
  int64_t next_ = 0;
  int64_t max_rows_ = 1;
};

}  // namespace

std::vector<int64_t> ExpandGrid(const std::vector<int64_t>& space,
                                const std::vector<int64_t>& tile) {
  std::vector<int64_t> grid(space.size());
  for (size_t d = 0; d < space.size(); ++d) {
    grid[d] = (space[d] + tile[d] - 1) / tile[d];
  }
  return grid;
}

absl::Status ExpandTasks(const std::vector<std::vector<int64_t>>& buffer_shapes,
                         const std::vector<ExpandGroup>& groups,
                         const std::vector<int64_t>& extra_args,
                         const ExpandLimits& limits,
                         pto::v1::ExecuteGraph* graph) {
  // Per buffer: the earlier groups' accesses that wrote it and read it,
  // indexed by where their regions start in dim 0 so that a group only
  // meets the accesses its region can overlap (a loop's iterations writing
  // disjoint rows never look at each other).
  std::vector<AccessIndexByRow> writers(buffer_shapes.size());
  std::vector<AccessIndexByRow> readers(buffer_shapes.size());
  std::vector<Placed> placed;
  const int64_t base = graph->tasks_size();
  int64_t total_tasks = 0, total_deps = 0;
  std::vector<const Earlier*> found;
  for (size_t g = 0; g < groups.size(); ++g) {
    const ExpandGroup& group = groups[g];
    Placed me{base + total_tasks, &group, ExpandGrid(group.space, group.tile)};
    // (my access, earlier access) pairs that may conflict: reads after
    // writes, writes after writes and reads, whose regions overlap.
    std::vector<Box> bounds;
    for (const ExpandAccess& a : group.accesses) {
      bounds.push_back(Bounds(group, a.index, buffer_shapes[a.buffer]));
    }
    std::vector<std::pair<const ExpandAccess*, Earlier>> sources;
    for (size_t k = 0; k < group.accesses.size(); ++k) {
      const ExpandAccess& a = group.accesses[k];
      writers[a.buffer].Overlapping(bounds[k], &found);
      for (const Earlier* w : found) sources.push_back({&a, *w});
      if (a.write) {
        readers[a.buffer].Overlapping(bounds[k], &found);
        for (const Earlier* r : found) sources.push_back({&a, *r});
      }
    }
    int64_t tasks = 1;
    bool overflow = false;
    for (int64_t n : me.grid) overflow = overflow || __builtin_mul_overflow(tasks, n, &tasks);
    overflow = overflow || __builtin_add_overflow(total_tasks, tasks, &total_tasks);
    if (overflow || total_tasks > limits.max_tasks) {
      return absl::InvalidArgumentError(absl::StrCat(
          group.label, ": the kernel splits into more than ", limits.max_tasks,
          " tasks (space ", Dims(group.space), ", tile ", Dims(group.tile), ")"));
    }
    std::vector<int64_t> lo, hi, at;
    Box box, region;
    std::vector<uint32_t> deps;
    graph->mutable_tasks()->Reserve(graph->tasks_size() + static_cast<int>(tasks));
    for (int64_t t = 0; t < tasks; ++t) {
      int mask = 0;
      TileAt(group, me.grid, t, &mask, &box);
      pto::v1::Task* task = graph->add_tasks();
      task->set_function(static_cast<uint32_t>(group.function_of_mask[mask]));
      task->mutable_args()->Reserve(static_cast<int>(
          box.offset.size() + extra_args.size() + group.extra_args.size() +
          (group.append_extents ? box.extent.size() : 0)));
      for (int64_t o : box.offset) task->add_args(o);
      for (int64_t a : extra_args) task->add_args(a);
      for (int64_t a : group.extra_args) task->add_args(a);
      if (group.append_extents) {
        for (int64_t e : box.extent) task->add_args(e);
      }
      deps.clear();
      for (const auto& [mine, other] : sources) {
        const std::vector<int64_t>& shape = buffer_shapes[mine->buffer];
        Region(box, mine->index, shape, &region);
        const Placed& p = placed[other.group];
        TouchingRange(region, *other.index, shape, p, &lo, &hi);
        total_deps += CountTouching(lo, hi);
        if (total_deps > limits.max_dependencies) {
          return absl::InvalidArgumentError(absl::StrCat(
              group.label, ": its tile shape ", Dims(group.tile),
              " against the tiles of ", p.group->label, " (",
              Dims(p.group->tile), ") needs more than ",
              limits.max_dependencies,
              " task dependencies; use matching tile shapes"));
        }
        AppendTouching(lo, hi, p, &deps, &at);
      }
      if (group.serial_dim >= 0) {
        // The task before this one along the serial dim (row-major: one
        // step there is the product of the grid's later dims).
        int64_t step = 1, at = t;
        for (int d = static_cast<int>(me.grid.size()) - 1; d > group.serial_dim; --d) {
          step *= me.grid[d];
        }
        at = (t / step) % me.grid[group.serial_dim];
        if (at > 0) deps.push_back(static_cast<uint32_t>(me.first_task + t - step));
      }
      if (group.serial_all && t > 0) {
        deps.push_back(static_cast<uint32_t>(me.first_task + t - 1));
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      task->mutable_deps()->Add(deps.begin(), deps.end());
    }
    for (size_t k = 0; k < group.accesses.size(); ++k) {
      const ExpandAccess& a = group.accesses[k];
      if (a.write && limits.prune_covered) {
        // Everything earlier inside the region this group writes whole is
        // reached through this group's tasks from now on (they depend on
        // it), so later groups need not look at it.
        writers[a.buffer].RemoveInside(bounds[k]);
        readers[a.buffer].RemoveInside(bounds[k]);
      }
      (a.write ? writers : readers)[a.buffer].Add(
          {static_cast<int>(g), &a.index, bounds[k]});
    }
    placed.push_back(std::move(me));
  }
  return absl::OkStatus();
}

}  // namespace pto::runtime
