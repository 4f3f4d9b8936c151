// Expanding a templated Execute Graph's program tree (loops
// and branches; kernel.proto ExecNode) into task groups for one
// binding of the parameter symbols, in program order: a template node gives
// one group (its space evaluated, its dynamic args evaluated with the loop
// indices bound and added to its accesses' offsets), a loop node its body
// once per iteration with its index bound, an if node the branch its
// condition picks, a region check an error when a view or assemble leaves
// its tensor. runtime/expand_tasks then makes tasks and dependencies by
// region overlap over all groups, so independent iterations run
// concurrently and iterations that touch the same region stay ordered.
//
//   std::vector<ExpandGroup> groups;
//   absl::Status s = ExpandProgram(graph, values, &groups);
#ifndef PTO_RUNTIME_EXPAND_REGIONS_H_
#define PTO_RUNTIME_EXPAND_REGIONS_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pto/v1/kernel.pb.h"
#include "runtime/dim_expr.h"
#include "runtime/expand_tasks.h"

namespace pto::runtime {

// The group of template `t` at `values` (its space evaluated, the function
// for each tail mask that occurs, dynamic args evaluated and added);
// INVALID_ARGUMENT naming the template.
absl::StatusOr<ExpandGroup> TemplateGroup(const pto::v1::ExecuteGraph& graph,
                                          const pto::v1::TaskTemplate& t,
                                          const SymbolValues& values);

// Rebinds `group` (TemplateGroup's for `t` at other values of the same
// space) to `values`: its dynamic args evaluated again and the access
// offsets they shift, with TemplateGroup's checks. ExpandProgram builds a
// template's group once and rebinds it for each later iteration.
absl::Status BindDynamicArgs(const pto::v1::ExecuteGraph& graph,
                             const pto::v1::TaskTemplate& t,
                             const SymbolValues& values, ExpandGroup* group);

// One loop enclosing a group: the loop node, and how many iterations of it
// the expansion had run before this one (counted over every run of the
// loop: nested loops' flattened iteration).
struct LoopVisit {
  const void* loop = nullptr;
  int64_t count = 0;
};

// Appends the groups of graph.program() for `values` (the parameter
// symbols), and when `loops` is set each group's enclosing loops, outermost
// first. Errors (INVALID_ARGUMENT): a region check that fails (naming the
// op, the offsets, extent and tensor dims and the loop indices), more than
// 2^24 loop iterations in total, an expression that cannot be evaluated.
absl::Status ExpandProgram(const pto::v1::ExecuteGraph& graph,
                           const SymbolValues& values,
                           std::vector<ExpandGroup>* groups,
                           std::vector<std::vector<LoopVisit>>* loops = nullptr);

// Every access of `g` lies inside its buffer (`shapes`, evaluated at this
// binding), and every GM stride it takes from a dynamic arg
// (ExpandAccess::stride_arg) is the buffer's row-major stride:
// INVALID_ARGUMENT naming the template, the access, the buffer and the
// region or the values otherwise, so that no binary (a corrupt cache entry
// included) can make a task read or write outside a buffer. Per group, not
// per task.
absl::Status CheckAccessBounds(const ExpandGroup& g,
                               const std::vector<std::vector<int64_t>>& shapes);

// Checks the program tree's structure (VerifyTemplates calls it): template
// indices, loop indices and steps, nesting, dynamic arg and check ranges.
absl::Status VerifyProgram(const pto::v1::ExecuteGraph& graph);

}  // namespace pto::runtime

#endif  // PTO_RUNTIME_EXPAND_REGIONS_H_
