// Flattening loops and branches: the first step of the dynamic route
// (compiler/pipeline.cc). A Tensor Graph with loops or ifs becomes one flat
// Tensor Graph that the static tiling passes can lower, plus what each of
// its ops came from, for the templating steps (lower_regions.h).
//
// Every body's ops are inlined once in program order, a region arg standing
// for its loop's input (the carried tensor lives in one buffer, updated in
// place) and a loop output for its body's result. A carried result that is
// a new value (acc = acc + x) is stored into the carried buffer at the end
// of its body (an assemble, fused after the result's producer). An `if`
// inlines both branches, each in place on the carried buffers. Each run of
// ops between loop boundaries is one fusion class (ExpandOptions::
// fusion_class), so no group spans a body's edge.
//
// An offset that depends on loop indices (x[i], out[i*8:]) becomes a
// *marker* constant (below) that the static passes carry through as an
// offset and the templating decodes into a dynamic arg. Every view/assemble
// with such offsets, or with static offsets into a tensor with symbolic
// dims, also gets a RegionCheck that the runtime evaluates before the tasks
// that access it (at the top of the program outside loops). A view of a
// view with loop-dependent offsets is one view at the summed offsets, with
// a check of the outer view inside the inner one. A scalar operand over
// symbols (x * n, clip's bounds as an expr) becomes a scalar marker.
//
// A dim that depends on a loop index (a tail, min(64, n - i)), or any
// symbolic dim with a constant bound (min(64, n) of a clipped view or a
// valid shape), is lowered at its constant bound; its expression is kept
// (FlatGraph::runtime_shape) for the run-time extents. A reshape that only
// adds or drops size-1 dims of such a dim reads it at the bound too. A
// concat whose offsets are symbolic (an input with a symbolic extent in the
// concat dim before another) becomes one assemble per input at its offset,
// into the result's buffer, with a region check each (op #k "concat" input
// j).
//
// Limits (UNIMPLEMENTED naming the op or value): a reshape whose shape
// depends on a loop index and merges or splits dims; a view with
// loop-dependent offsets of a reshape, permute or other layout op of such a
// view; a dim that depends on a loop index without a constant bound; more
// than kMarkerBits distinct loop-dependent offsets along one chain of nested
// loops (loops one after another share the markers' bits).
#ifndef PTO_COMPILER_LOWER_FLATTEN_REGIONS_H_
#define PTO_COMPILER_LOWER_FLATTEN_REGIONS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/ir/sym_expr.h"
#include "compiler/ir/tensor_graph.h"
#include "pto/v1/kernel.pb.h"

namespace pto::compiler {

// A marker stands for a dynamic offset while the static passes run: bit
// kMarkerShift + b, far above any real offset (tensors have at most 2^40
// elements), so a lowered offset is marker + a static part and a sum of two
// markers is recognisable. Bits are shared between offsets that no group
// can see both of: an offset's *scope* is the loop nest down to the deepest
// loop whose index it uses, and two offsets need different bits only when
// one scope is a prefix of the other (a group sees the offsets of the
// scopes along its own nest). So the limit is kMarkerBits per chain of
// nested scopes, not per kernel: sequential loops (loop_unroll's chunk
// loops, one loop per layer) reuse the bits.
constexpr int kMarkerShift = 40;
constexpr int kMarkerBits = 20;

// Splits a lowered offset into (marker bit or -1, static part);
// UNIMPLEMENTED when it holds two markers.
absl::StatusOr<std::pair<int, int64_t>> DecodeMarker(int64_t offset);

// A scalar operand over symbols stands for its dynamic arg while the static
// passes run as the double whose bits are a fixed pattern | k (k: its
// number), about 2^998: no graph's immediate (one equal to a marker is
// refused) and never folded. ScalarMarkerIndex: k, or -1 for any other
// value.
double ScalarMarker(int k);
int ScalarMarkerIndex(double v);

// UNIMPLEMENTED for what the dynamic route cannot lower: `where` (the op),
// `what`, and what loops need.
absl::Status RegionsUnimplemented(const std::string& where, const std::string& what);

// A scope ops are lowered in: a loop's body, or one branch of an if.
struct LoopInfo {
  enum Kind { kLoop, kThen, kElse };
  Kind kind = kLoop;
  std::string index;         // kLoop
  SymExpr start, stop;
  int64_t step = 1;
  int if_id = -1;            // kThen, kElse: which if (both branches share it)
  pto::v1::DimExpr cond;     // kThen, kElse
  std::vector<pto::v1::RegionCheck> checks;
};

// The flattened graph and what each of its ops came from.
struct FlatGraph {
  TensorGraph graph;
  // Per flat op: the scopes (indices into `loops`) it is nested in.
  std::vector<std::vector<int>> op_nest;
  // Per flat op: its fusion class (ExpandOptions::fusion_class).
  std::vector<int> fusion_class;
  // Per flat op: where it is in the graph ("op #0 body op #3 \"matmul\""),
  // for errors (pypto maps it to the kernel line that recorded the op).
  std::vector<std::string> labels;
  std::vector<LoopInfo> loops;
  // Region checks of views and assembles outside loops and branches: the
  // program runs them before any task.
  std::vector<pto::v1::RegionCheck> top_checks;
  // Per loop-dependent offset (a marker): its expression, its scope and its
  // marker bit.
  std::vector<SymExpr> dynamic_offsets;
  std::vector<std::vector<int>> offset_scope;
  std::vector<int> offset_bit;
  // Per scalar marker (ScalarMarker(k)): the scalar operand's expression.
  std::vector<SymExpr> dynamic_scalars;
  // Values whose dims depend on loop indices or have a constant bound: their
  // shapes (the flat graph has them at the bounds).
  std::map<int, SymShape> runtime_shape;

  // The dynamic offset whose marker has bit `bit` in a group at `nest`.
  absl::StatusOr<int> MarkerAt(int bit, const std::vector<int>& nest) const;
};

absl::StatusOr<FlatGraph> FlattenRegions(const TensorGraph& graph);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_FLATTEN_REGIONS_H_
