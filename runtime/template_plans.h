// Kernels with symbolic shapes: binding the symbols from the
// arguments at launch, expanding the Execute Graph's task templates into
// tasks for that binding, and caching the result per binding.
//
//   absl::StatusOr<SymbolValues> values = BindArguments(binary, args);
//   absl::StatusOr<ExpandedGraph> g = ExpandTemplates(binary.execute_graph(),
//                                                     *values);
//
// Binding reads every parameter dim: a `symbol` dim binds its symbol the
// first time it is seen (parameters in order, dims outermost first) and must
// agree with that value afterwards; `size` and `expr` dims must equal their
// value. Errors (INVALID_ARGUMENT) name the argument, the dim and the values,
// and for a conflicting symbol also the argument that bound it first.
#ifndef PTO_RUNTIME_TEMPLATE_PLANS_H_
#define PTO_RUNTIME_TEMPLATE_PLANS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "google/protobuf/arena.h"
#include "pto/v1/kernel.pb.h"
#include "runtime/dim_expr.h"
#include "runtime/kernel.h"

namespace pto::runtime {

// Whether the graph is templated (has task templates or symbols).
bool IsTemplated(const pto::v1::ExecuteGraph& graph);

// The symbol values of this launch, after checking every argument's rank
// and dims against its parameter (dtype and data are checked elsewhere).
absl::StatusOr<SymbolValues> BindArguments(const pto::v1::KernelBinary& binary,
                                           absl::Span<const TensorArg> args);

struct ExpandedGraph {
  // The expanded graph lives on an arena: a launch of a big dynamic kernel
  // has hundreds of thousands of tasks, and one message (plus its args and
  // deps) each from malloc cost more than the expansion itself, twice
  // (made, then freed). Movable (the arena and the message stay put);
  // a moved-from ExpandedGraph must not be used.
  std::unique_ptr<google::protobuf::Arena> arena;
  pto::v1::ExecuteGraph& graph;       // functions and tasks (no templates)
  ExpandedGraph();
  ExpandedGraph(ExpandedGraph&&) = default;
  // Per expanded buffer: the graph's buffers, then the extra instances of
  // loop-body workspaces (runtime/workspace_instances.h); 0 for parameters.
  std::vector<int64_t> buffer_bytes;
  // buffer_sets[s][slot]: the expanded buffer behind graph buffer `slot` for
  // tasks of set s; empty when there is only the identity.
  std::vector<std::vector<int>> buffer_sets;
  // Per task: its buffer set; empty when all are 0.
  std::vector<uint32_t> task_buffer_set;
};

// The tasks of every template for `values`; INVALID_ARGUMENT when a size
// overflows, a tile's extents have no block function, or the tasks or
// dependencies exceed the runtime's limits. Workspaces that only one loop's
// body touches get up to `workspace_instances` instances (0: the default,
// DefaultWorkspaceInstances(); 1: none), one per iteration modulo that.
absl::StatusOr<ExpandedGraph> ExpandTemplates(const pto::v1::KernelBinary& binary,
                                              const SymbolValues& values,
                                              int workspace_instances = 0);

// Checks a templated graph's structure (VerifyBinary calls it): symbol
// bindings, template ranks, function and buffer indices, access indices.
absl::Status VerifyTemplates(const pto::v1::KernelBinary& binary);

}  // namespace pto::runtime

#endif  // PTO_RUNTIME_TEMPLATE_PLANS_H_
