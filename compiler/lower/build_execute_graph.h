// Block Graph -> Execute Graph (pto.v1.ExecuteGraph).
//
// Tasks: every tile of every group, groups in program order, tiles in
// row-major order; a task's args are its tile offsets. Dependencies come from
// region overlap on each buffer: a task depends on earlier tasks that wrote
// what it reads (RAW), and a writing task on earlier tasks that read (WAR) or
// wrote (WAW) the region it writes. Every dep is smaller than the task's own
// index. Buffers: the parameters in order, then GM workspaces. The analysis
// itself is runtime/expand_tasks.h, shared with the runtime's expansion of
// templates for symbolic shapes.
#ifndef PTO_COMPILER_LOWER_BUILD_EXECUTE_GRAPH_H_
#define PTO_COMPILER_LOWER_BUILD_EXECUTE_GRAPH_H_

#include "absl/status/statusor.h"
#include "compiler/ir/block_graph.h"
#include "pto/v1/kernel.pb.h"
#include "runtime/expand_tasks.h"

namespace pto::compiler {

absl::StatusOr<pto::v1::ExecuteGraph> BuildExecuteGraph(const BlockGraph& blocks);

// Appends one pto.v1.BlockFunction per block function of `blocks`, in
// order (its index, name, core type and number of args).
void AddBlockFunctions(const BlockGraph& blocks, pto::v1::ExecuteGraph* out);

// A group's TLOADs and TSTOREs as the overlap analysis sees them.
std::vector<runtime::ExpandAccess> ExpandAccessesOf(const TileGraph& tiles,
                                                    const TileGroup& group);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_BUILD_EXECUTE_GRAPH_H_
