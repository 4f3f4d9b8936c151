// The Execute Graph is pto.v1.ExecuteGraph itself (kernel.proto documents
// it): buffers, block functions, and tasks in topological order with their
// dependencies. This is its printer.
#ifndef PTO_COMPILER_IR_EXECUTE_GRAPH_H_
#define PTO_COMPILER_IR_EXECUTE_GRAPH_H_

#include <string>

#include "pto/v1/kernel.pb.h"

namespace pto::compiler {

// Lists at most `max_tasks` tasks, then a count of the rest.
std::string PrintExecuteGraph(const pto::v1::ExecuteGraph& graph,
                              int max_tasks = 64);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_IR_EXECUTE_GRAPH_H_
