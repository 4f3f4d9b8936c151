// Test support for the kernel tests: a graph builder whose op outputs take the
// types the compiler infers (broadcasting, BOOL comparisons, reductions), and
// a check that compiles a graph, runs it and compares it with the reference.
#ifndef PTO_TESTS_KERNELS_TYPED_BUILDER_H_
#define PTO_TESTS_KERNELS_TYPED_BUILDER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "client/ptoc/check.h"
#include "compiler/ops/infer.h"
#include "pto/v1/graph.pb.h"

namespace pto::testing {

class TypedBuilder {
 public:
  explicit TypedBuilder(const std::string& name);

  // A new IN parameter; returns its value id.
  uint32_t Input(const std::string& name, pto::v1::DataType dtype,
                 const std::vector<int64_t>& shape);

  // An op with float attributes (e.g. "scalar", "min"). The vector tile is the
  // trailing output-rank dims of `tile`.
  uint32_t Op(const std::string& kind, const std::vector<uint32_t>& inputs,
              const std::vector<int64_t>& tile,
              const std::map<std::string, double>& attrs = {});

  // A reduction over `dim` (attrs "dim", "keepdim"); `tile` covers its input.
  uint32_t Op(const std::string& kind, const std::vector<uint32_t>& inputs,
              const std::vector<int64_t>& tile, int64_t dim, bool keepdim);

  // matmul(a, b) with out_dtype (DT_UNSPECIFIED: a's dtype), the
  // transposes and cube tile {mL0, mL1, kL0, kL1, nL0, nL1}.
  uint32_t Matmul(uint32_t a, uint32_t b, pto::v1::DataType out_dtype,
                  bool a_trans, bool b_trans, const std::vector<int64_t>& cube);

  // cast(input, to).
  uint32_t Cast(uint32_t input, pto::v1::DataType to,
                const std::vector<int64_t>& tile);

  // A creation op (full, arange, ...) of `shape` and `dtype`, tile 32.
  uint32_t Create(const std::string& kind, pto::v1::DataType dtype,
                  const std::vector<int64_t>& shape,
                  const std::map<std::string, double>& attrs);

  // A new INOUT parameter; returns its incoming value id (Output(name, v)
  // sets its final value).
  uint32_t InOut(const std::string& name, pto::v1::DataType dtype,
                 const std::vector<int64_t>& shape);

  // A layout op (view, assemble, transpose, ...) with list attributes
  // ("offsets", "shape", "dims") and int ones ("dim", "dim0", "dim1").
  uint32_t Layout(const std::string& kind, const std::vector<uint32_t>& inputs,
                  const std::vector<int64_t>& tile,
                  const std::map<std::string, std::vector<int64_t>>& lists,
                  const std::map<std::string, int64_t>& ints = {});

  // Makes `value` the OUT parameter `name` (or the final value of the
  // INOUT parameter `name`).
  void Output(const std::string& name, uint32_t value);

  const pto::v1::Graph& graph() const { return g_; }

 private:
  uint32_t AddOp(const std::string& kind, const std::vector<uint32_t>& inputs,
                 const compiler::InferAttrs& infer, pto::v1::Op** op);
  uint32_t NewValue(pto::v1::DataType dtype, const std::vector<int64_t>& shape);

  pto::v1::Graph g_;
  std::map<uint32_t, compiler::ValueType> types_;
  uint32_t next_id_ = 1;
};

// Compiles `graph` for `target` (default: this machine's host target),
// loads it, and runs it `seeds` times on random inputs in [-4, 4], each
// compared with the reference evaluator (gtest failures name the graph and
// seed) within `tolerance` (null: the default, ptoc::DefaultTolerance).
void CompileRunAndCheck(const pto::v1::Graph& graph, int seeds,
                        const ptoc::Tolerance* tolerance = nullptr,
                        const std::string& target = "host");

}  // namespace pto::testing

#endif  // PTO_TESTS_KERNELS_TYPED_BUILDER_H_
