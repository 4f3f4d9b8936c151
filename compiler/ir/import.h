// Import: a verified pto.v1.Graph -> TensorGraph.
//
//   absl::StatusOr<VerifiedGraph> v = Verified(proto);   // verify/verify.h
//   absl::StatusOr<TensorGraph> g = ImportGraph(*v);
//
// Value ids are renumbered canonically (see tensor_graph.h); values declared
// in the proto but never used by a parameter or op are dropped.
#ifndef PTO_COMPILER_IR_IMPORT_H_
#define PTO_COMPILER_IR_IMPORT_H_

#include "absl/status/statusor.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/verified_graph.h"

namespace pto::compiler {

absl::StatusOr<TensorGraph> ImportGraph(const VerifiedGraph& graph);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_IR_IMPORT_H_
