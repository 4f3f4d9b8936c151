// Tasks and their dependencies from groups of tiles: the one region-overlap
// analysis, used by the compiler for static shapes (BuildExecuteGraph) and by
// the runtime for templates expanded at launch (symbolic shapes), so both
// make the same tasks and the same dependencies for the same sizes.
//
//   std::vector<ExpandGroup> groups = ...;   // spaces, tiles, accesses
//   absl::StatusOr<...> s = ExpandTasks(buffer_shapes, groups, limits, &graph);
//
// Tasks: every tile of every group, groups in order, tiles row-major; a
// task's args are its tile offsets (then `extra_args`). A task depends on
// earlier tasks that wrote what it reads (RAW), and a writing task on earlier
// tasks that read (WAR) or wrote (WAW) the region it writes.
#ifndef PTO_RUNTIME_EXPAND_TASKS_H_
#define PTO_RUNTIME_EXPAND_TASKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "pto/v1/kernel.pb.h"

namespace pto::runtime {

// How an access addresses one buffer dim: `offset` plus the task's offset in
// space dim `space_dim` divided by `div` (one slot per tile), or index
// `offset` when space_dim is -1. A buffer dim of size 1 always reads index 0
// (broadcast).
struct ExpandIndex {
  int space_dim = -1;
  int64_t div = 1;
  int64_t offset = 0;
};

// ExpandIndex::space_dim of a dim every task accesses whole (matmul's K:
// each cube task reads all of it).
inline constexpr int kExpandWholeDim = -2;

// One TLOAD (read) or TSTORE (write) of a group.
struct ExpandAccess {
  int buffer = -1;
  std::vector<ExpandIndex> index;  // one per buffer dim
  bool write = false;
  // A matmul operand's load: its whole dims are K, read from the offset for
  // ExpandGroup::k elements (checked by CheckAccessBounds; dependencies
  // still take the whole dim).
  bool reads_k = false;
  // Per buffer dim (empty: none): 1 + the index into ExpandGroup::extra_args
  // of the value the block code uses as that dim's GM stride, or 0 (a
  // compiled-in constant); CheckAccessBounds checks each against the
  // buffer's shape (TemplateAccess.stride_arg).
  std::vector<uint32_t> stride_arg;
  // A load through a reshape: the shape it reads the buffer as (evaluated
  // at the launch's sizes); stride_arg is then per dim of it, checked
  // against its row-major strides (TemplateAccess.view_shape).
  std::vector<int64_t> view_shape;
};

struct ExpandGroup {
  std::string label;            // for errors, e.g. "op #3"
  std::vector<int64_t> space;   // iteration space
  std::vector<int64_t> tile;    // tile shape (tiles at the end are shorter)
  // Function per tail mask: bit d set = the tile is the last (shorter) one
  // in dim d. Only masks that occur are read.
  std::vector<int> function_of_mask;
  std::vector<ExpandAccess> accesses;
  // Appended to each of its tasks' args after the call's `extra_args` (a
  // loop body template's dynamic args for one iteration).
  std::vector<int64_t> extra_args;
  // Then the task's tile extents (a generic tail function reads them).
  bool append_extents = false;
  // >= 0: the tasks along this dim run one after another (each depends on
  // the one before it in that dim; TaskTemplate.serial_dim). -1: none.
  int serial_dim = -1;
  // Every task depends on the one before it (row-major): tasks that may
  // write the same elements (a scatter: the compiler's TileGroup::serial_all).
  bool serial_all = false;
  // How much of K each task of a matmul group reads (ExpandAccess::reads_k).
  int64_t k = 0;
};

struct ExpandLimits {
  int64_t max_tasks = int64_t{1} << 24;
  int64_t max_dependencies = int64_t{1} << 24;
  // Drop dependencies that others imply: once a group writes a region, the
  // earlier accesses inside it are reached through that group's tasks, so
  // later groups depend on it alone (a loop-carried running sum then makes
  // a chain, not a quadratic number of edges). Off by default, so that
  // static graphs keep their listed dependencies.
  bool prune_covered = false;
};

// Tiles per dim: ceil(space / tile).
std::vector<int64_t> ExpandGrid(const std::vector<int64_t>& space,
                                const std::vector<int64_t>& tile);

// Appends the tasks of `groups` to `graph->tasks` (whose existing tasks, if
// any, are ignored for dependencies). `extra_args` follow each task's tile
// offsets. INVALID_ARGUMENT (naming both groups' labels and tiles) when the
// dependencies exceed the limit, or naming the group when tasks do.
absl::Status ExpandTasks(const std::vector<std::vector<int64_t>>& buffer_shapes,
                         const std::vector<ExpandGroup>& groups,
                         const std::vector<int64_t>& extra_args,
                         const ExpandLimits& limits,
                         pto::v1::ExecuteGraph* graph);

}  // namespace pto::runtime

#endif  // PTO_RUNTIME_EXPAND_TASKS_H_
