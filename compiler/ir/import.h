// Import: pto.v1.Graph (untrusted) -> TensorGraph.
//
//   absl::StatusOr<TensorGraph> g = ImportGraph(proto);   // verifies first
//
// Value ids are renumbered canonically (see tensor_graph.h); values declared
// in the proto but never used by a parameter or op are dropped.
#ifndef PTO_COMPILER_IR_IMPORT_H_
#define PTO_COMPILER_IR_IMPORT_H_

#include "absl/status/statusor.h"
#include "compiler/ir/tensor_graph.h"
#include "pto/v1/graph.pb.h"

namespace pto::compiler {

absl::StatusOr<TensorGraph> ImportGraph(const pto::v1::Graph& graph);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_IR_IMPORT_H_
