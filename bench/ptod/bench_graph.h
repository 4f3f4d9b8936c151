// The kernels ptod's load generators request (bench/ptod/).
#ifndef PTO_BENCH_PTOD_BENCH_GRAPH_H_
#define PTO_BENCH_PTOD_BENCH_GRAPH_H_

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pto/v1/graph.pb.h"

namespace pto::bench {

// out = exp(x + y) * 2 - x over FP32 tensors of `rows` x 128: a small
// elementwise chain; `rows` makes each kernel distinct.
inline pto::v1::Graph BenchGraph(int rows) {
  pto::v1::Graph graph;
  graph.set_schema_version(pto::v1::SCHEMA_VERSION_1);
  graph.set_name(absl::StrCat("bench_", rows));
  auto value = [&](uint32_t id, const char* name) {
    pto::v1::Value* v = graph.add_values();
    v->set_id(id);
    v->set_name(name);
    v->set_dtype(pto::v1::DT_FP32);
    v->mutable_shape()->add_dims()->set_size(rows);
    v->mutable_shape()->add_dims()->set_size(128);
  };
  value(0, "x");
  value(1, "y");
  value(2, "out");
  value(3, "sum");
  value(4, "e");
  value(5, "two_e");
  const char* names[] = {"x", "y", "out"};
  for (uint32_t id = 0; id < 3; ++id) {
    pto::v1::Parameter* p = graph.add_params();
    p->set_name(names[id]);
    p->set_role(id < 2 ? pto::v1::PARAM_ROLE_IN : pto::v1::PARAM_ROLE_OUT);
    p->set_value_id(id);
  }
  auto op = [&](const char* kind, std::vector<uint32_t> in, uint32_t out) {
    pto::v1::Op* o = graph.add_ops();
    o->set_kind(kind);
    for (uint32_t i : in) o->add_inputs(i);
    o->add_outputs(out);
    o->mutable_vec_tile()->add_dims(16);
    o->mutable_vec_tile()->add_dims(128);
    return o;
  };
  op("add", {0, 1}, 3);
  op("exp", {3}, 4);
  op("add", {4, 4}, 5);
  op("sub", {5, 0}, 2);
  return graph;
}

}  // namespace pto::bench

#endif  // PTO_BENCH_PTOD_BENCH_GRAPH_H_
