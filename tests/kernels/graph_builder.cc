#include "tests/kernels/graph_builder.h"

#include <utility>

namespace pto::testing {

GraphBuilder::GraphBuilder(std::string name, pto::v1::DataType dtype,
                           std::vector<int64_t> shape, std::vector<int64_t> tile)
    : dtype_(dtype), shape_(std::move(shape)), tile_(std::move(tile)) {
  graph_.set_schema_version(pto::v1::SCHEMA_VERSION_1);
  graph_.set_name(std::move(name));
}

uint32_t GraphBuilder::NewValue(const std::string& name) {
  pto::v1::Value* v = graph_.add_values();
  v->set_id(next_id_++);
  v->set_name(name);
  v->set_dtype(dtype_);
  for (int64_t d : shape_) v->mutable_shape()->add_dims()->set_size(d);
  return v->id();
}

uint32_t GraphBuilder::Input(const std::string& name) {
  const uint32_t id = NewValue(name);
  pto::v1::Parameter* p = graph_.add_params();
  p->set_name(name);
  p->set_role(pto::v1::PARAM_ROLE_IN);
  p->set_value_id(id);
  return id;
}

uint32_t GraphBuilder::Op(const std::string& kind,
                          const std::vector<uint32_t>& inputs,
                          std::optional<double> scalar) {
  const uint32_t out = NewValue("");
  pto::v1::Op* op = graph_.add_ops();
  op->set_kind(kind);
  for (uint32_t in : inputs) op->add_inputs(in);
  op->add_outputs(out);
  if (scalar.has_value()) (*op->mutable_attrs())["scalar"].set_f(*scalar);
  for (int64_t t : tile_) op->mutable_vec_tile()->add_dims(t);
  return out;
}

void GraphBuilder::Output(const std::string& name, uint32_t value) {
  for (pto::v1::Value& v : *graph_.mutable_values()) {
    if (v.id() == value) v.set_name(name);
  }
  pto::v1::Parameter* p = graph_.add_params();
  p->set_name(name);
  p->set_role(pto::v1::PARAM_ROLE_OUT);
  p->set_value_id(value);
}

uint32_t GraphBuilder::InOut(const std::string& name) {
  const uint32_t id = NewValue(name);
  pto::v1::Parameter* p = graph_.add_params();
  p->set_name(name);
  p->set_role(pto::v1::PARAM_ROLE_INOUT);
  p->set_value_id(id);
  return id;
}

void GraphBuilder::SetResult(uint32_t inout_value, uint32_t result) {
  for (pto::v1::Parameter& p : *graph_.mutable_params()) {
    if (p.value_id() == inout_value) p.set_result_value_id(result);
  }
}

}  // namespace pto::testing
