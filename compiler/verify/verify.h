// The verifier: decides whether an untrusted pto.v1.Graph is one this
// compiler accepts, before anything is lowered or hashed.
//
//   absl::Status s = VerifyGraph(graph);
//   // INVALID_ARGUMENT, e.g. "op #2 'add': input 1: dangling value id 17"
//   // UNIMPLEMENTED for well-formed graphs using features not built yet
//   //   (symbolic dims, regions, reading an inout input after it was
//   //   overwritten).
//   absl::StatusOr<VerifiedGraph> v = Verified(graph);   // what import takes
//
// Every message starts with where the problem is: "graph:", "values[#i]",
// "param #p 'name'" or "op #i 'kind' (name ...)", then the field.
#ifndef PTO_COMPILER_VERIFY_VERIFY_H_
#define PTO_COMPILER_VERIFY_VERIFY_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/ir/verified_graph.h"
#include "pto/v1/graph.pb.h"

namespace pto::compiler {

absl::Status VerifyGraph(const pto::v1::Graph& graph);

// VerifyGraph's verdict as the VerifiedGraph ImportGraph takes.
absl::StatusOr<VerifiedGraph> Verified(const pto::v1::Graph& graph);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_VERIFY_VERIFY_H_
