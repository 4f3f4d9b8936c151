// VerifiedGraph: a pto.v1.Graph the verifier accepted.
//
//   absl::StatusOr<VerifiedGraph> v = Verified(proto);   // verify/verify.h
//   absl::StatusOr<TensorGraph> g = ImportGraph(*v);     // ir/import.h
//
// Only Verified() makes one, and ImportGraph takes nothing else, so no
// unverified graph from the network reaches the IR. It refers to the
// graph, which must outlive it.
#ifndef PTO_COMPILER_IR_VERIFIED_GRAPH_H_
#define PTO_COMPILER_IR_VERIFIED_GRAPH_H_

#include "absl/status/statusor.h"
#include "pto/v1/graph.pb.h"

namespace pto::compiler {

class VerifiedGraph {
 public:
  const pto::v1::Graph& proto() const { return *graph_; }

 private:
  explicit VerifiedGraph(const pto::v1::Graph& graph) : graph_(&graph) {}
  friend absl::StatusOr<VerifiedGraph> Verified(const pto::v1::Graph& graph);

  const pto::v1::Graph* graph_;
};

}  // namespace pto::compiler

#endif  // PTO_COMPILER_IR_VERIFIED_GRAPH_H_
