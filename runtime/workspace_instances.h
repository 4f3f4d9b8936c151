// Per-iteration instances of loop-body workspaces.
//
// A temporary that a loop body writes to a workspace (an unfused body, a
// reduction's partial/combine slots) is one buffer in the Execute Graph, so
// if every iteration used it, iteration i+1's writes would wait for
// iteration i's reads (WAR/WAW) and the iterations would run one after
// another. A workspace that only the body of one loop L touches holds no
// value from one iteration of L to the next (carried values live in their
// input's buffer, which is written outside L), so it can be private to the
// iteration: it gets a ring of K instances, iteration n of L (n counted over
// every run of L, nested loops included: the flattened iteration) uses
// instance n % K, and so iteration n waits only for iteration n - K's use of
// that instance. Instance 0 is the buffer itself; instances 1..K-1 are
// buffers appended after the graph's own.
//
// Tasks still address buffers by the graph's slots: each task gets a buffer
// set, the expanded buffer behind each slot for it; the runtime passes that
// set's pointers to the block function (TaskPlan buffer offsets).
//
// Memory: at most K - 1 extra copies of each such workspace, at most the trip
// count of L minus one, and at most kMaxExtraWorkspaceBytes over all copies
// (fewer instances for the workspaces that come last when that is reached).
#ifndef PTO_RUNTIME_WORKSPACE_INSTANCES_H_
#define PTO_RUNTIME_WORKSPACE_INSTANCES_H_

#include <cstdint>
#include <vector>

#include "runtime/expand_regions.h"
#include "runtime/expand_tasks.h"

namespace pto::runtime {

// Bytes of extra workspace instances one expanded plan may add.
inline constexpr int64_t kMaxExtraWorkspaceBytes = int64_t{64} << 20;

// K by default: twice the hardware threads (the default vector workers), in
// [4, 64]; PTO_WORKSPACE_INSTANCES=n (read once) sets it to n (at most 64),
// n = 1 keeps one shared buffer (to measure against).
int DefaultWorkspaceInstances();

struct WorkspaceInstances {
  // buffer_sets[s][slot]: the expanded buffer behind `slot` for tasks of set
  // s. Set 0 is the identity. Empty when nothing was privatized.
  std::vector<std::vector<int>> buffer_sets;
  // Per group: its buffer set.
  std::vector<uint32_t> group_set;
  // Per extra buffer (expanded index - original count): the buffer it copies.
  std::vector<int> copy_of;
};

// Privatizes the workspaces (buffers >= num_params) that only one loop's body
// accesses and that each iteration of that loop writes whole (its first
// access there is a write covering the buffer by a group that does not read
// it), with `k` instances at most (k <= 1: none): rewrites the groups'
// accesses to the instance's buffer and returns the sets. `loops[g]` is
// group g's loop path from ExpandProgram; `buffer_bytes` and `shapes` are
// per buffer.
WorkspaceInstances PrivatizeWorkspaces(const std::vector<std::vector<LoopVisit>>& loops,
                                       int num_params,
                                       const std::vector<int64_t>& buffer_bytes,
                                       const std::vector<std::vector<int64_t>>& shapes,
                                       int k, std::vector<ExpandGroup>* groups);

}  // namespace pto::runtime

#endif  // PTO_RUNTIME_WORKSPACE_INSTANCES_H_
