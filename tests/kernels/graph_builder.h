// Builds pto.v1.Graph protos for tests: every value has one dtype and shape,
// every op the same vector tile.
//
//   GraphBuilder b("add_exp", DT_FP32, {37, 70}, {16, 32});
//   uint32_t x = b.Input("x"), y = b.Input("y");
//   b.Output("out", b.Op("exp", {b.Op("add", {x, y})}));
//   pto::v1::Graph g = b.graph();
#ifndef PTO_TESTS_KERNELS_GRAPH_BUILDER_H_
#define PTO_TESTS_KERNELS_GRAPH_BUILDER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pto/v1/graph.pb.h"

namespace pto::testing {

class GraphBuilder {
 public:
  GraphBuilder(std::string name, pto::v1::DataType dtype,
               std::vector<int64_t> shape, std::vector<int64_t> tile);

  // A new IN parameter; returns its value id.
  uint32_t Input(const std::string& name);

  // An op of `kind` on `inputs` (with attribute "scalar" when given); returns
  // the id of its (new) output value.
  uint32_t Op(const std::string& kind, const std::vector<uint32_t>& inputs,
              std::optional<double> scalar = std::nullopt);

  // Makes `value` (defined by an op) the OUT parameter `name`.
  void Output(const std::string& name, uint32_t value);

  // A new INOUT parameter: returns the id of the value holding its incoming
  // contents; call SetResult with the value to write back.
  uint32_t InOut(const std::string& name);
  void SetResult(uint32_t inout_value, uint32_t result);

  // Changes the vector tile of ops added from now on.
  void SetTile(std::vector<int64_t> tile) { tile_ = std::move(tile); }

  const pto::v1::Graph& graph() const { return graph_; }

 private:
  uint32_t NewValue(const std::string& name);

  pto::v1::Graph graph_;
  pto::v1::DataType dtype_;
  std::vector<int64_t> shape_;
  std::vector<int64_t> tile_;
  uint32_t next_id_ = 1;
};

}  // namespace pto::testing

#endif  // PTO_TESTS_KERNELS_GRAPH_BUILDER_H_
