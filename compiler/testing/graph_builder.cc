#include "compiler/testing/graph_builder.h"

#include "absl/strings/str_cat.h"
#include "compiler/ops/infer.h"

namespace pto::compiler::testing {

GraphBuilder::GraphBuilder(const std::string& name, uint32_t first_id,
                           uint32_t id_stride)
    : next_id_(first_id), stride_(id_stride) {
  g_.set_schema_version(pto::v1::SCHEMA_VERSION_1);
  g_.set_name(name);
}

uint32_t GraphBuilder::Value(pto::v1::DataType dtype,
                             const std::vector<int64_t>& shape,
                             const std::string& name) {
  pto::v1::Value* v = g_.add_values();
  v->set_id(next_id_);
  next_id_ += stride_;
  v->set_name(name);
  v->set_dtype(dtype);
  for (int64_t d : shape) v->mutable_shape()->add_dims()->set_size(d);
  return v->id();
}

uint32_t GraphBuilder::SymValue(pto::v1::DataType dtype, const SymShape& shape,
                                const std::string& name) {
  uint32_t id = Value(dtype, {}, name);
  pto::v1::Value* v = g_.mutable_values(g_.values_size() - 1);
  for (const SymExpr& d : shape) *v->mutable_shape()->add_dims() = SymExprToDim(d);
  return id;
}

uint32_t GraphBuilder::SymInput(const std::string& name, pto::v1::DataType dtype,
                                const SymShape& shape) {
  uint32_t id = SymValue(dtype, shape, name);
  pto::v1::Parameter* p = g_.add_params();
  p->set_name(name);
  p->set_role(pto::v1::PARAM_ROLE_IN);
  p->set_value_id(id);
  return id;
}

uint32_t GraphBuilder::Input(const std::string& name, pto::v1::DataType dtype,
                             const std::vector<int64_t>& shape) {
  uint32_t id = Value(dtype, shape, name);
  pto::v1::Parameter* p = g_.add_params();
  p->set_name(name);
  p->set_role(pto::v1::PARAM_ROLE_IN);
  p->set_value_id(id);
  return id;
}

uint32_t GraphBuilder::Layout(
    const std::string& kind, const std::vector<uint32_t>& inputs,
    const std::vector<int64_t>& out_shape, const std::vector<int64_t>& tile,
    const std::map<std::string, std::vector<int64_t>>& lists,
    const std::map<std::string, int64_t>& ints) {
  const uint32_t out = Value(Find(inputs.at(0))->dtype(), out_shape,
                             absl::StrCat("t", op_count_));
  pto::v1::Op* op = g_.add_ops();
  op->set_kind(kind);
  op->set_name(absl::StrCat(kind, op_count_++));
  for (uint32_t i : inputs) op->add_inputs(i);
  op->add_outputs(out);
  auto* a = op->mutable_attrs();
  for (const auto& [name, v] : lists) {
    auto* values = (*a)[name].mutable_ints();
    for (int64_t x : v) values->add_values(x);
  }
  for (const auto& [name, v] : ints) (*a)[name].set_i(v);
  for (int64_t t : tile) op->mutable_vec_tile()->add_dims(t);
  return out;
}

const pto::v1::Value* GraphBuilder::Find(uint32_t id) const {
  for (const pto::v1::Value& v : g_.values()) {
    if (v.id() == id) return &v;
  }
  return nullptr;
}

uint32_t GraphBuilder::Op(const std::string& kind,
                          const std::vector<uint32_t>& inputs,
                          const std::vector<int64_t>& tile,
                          std::optional<double> scalar, const std::string& name) {
  const pto::v1::Value* first = Find(inputs.at(0));
  pto::v1::Shape shape = first->shape();
  pto::v1::DataType dtype = first->dtype();
  if (const OpInfo* info = FindOp(kind); info != nullptr) {
    std::vector<SymValueType> types;
    for (uint32_t id : inputs) {
      const pto::v1::Value* v = Find(id);
      if (v == nullptr) break;
      SymValueType t{v->dtype(), {}};
      for (const pto::v1::Dim& d : v->shape().dims()) {
        absl::StatusOr<SymExpr> e = SymExprFromDim(d);
        t.shape.push_back(e.ok() ? *e : SymExpr(d.size()));
      }
      types.push_back(std::move(t));
    }
    if (types.size() == inputs.size() &&
        static_cast<int>(types.size()) == info->num_inputs) {
      InferAttrs attrs;
      attrs.dim = -1;  // reductions built here reduce the last dim
      attrs.keepdim = true;
      absl::StatusOr<SymValueType> inferred = InferSymResult(*info, types, attrs);
      if (inferred.ok()) {
        dtype = inferred->dtype;
        shape.clear_dims();
        for (const SymExpr& d : inferred->shape) {
          *shape.add_dims() = SymExprToDim(d);
        }
      }
    }
  }
  uint32_t out = Value(dtype, {}, absl::StrCat("t", op_count_));
  *g_.mutable_values(g_.values_size() - 1)->mutable_shape() = shape;
  pto::v1::Op* op = g_.add_ops();
  op->set_kind(kind);
  op->set_name(name.empty() ? absl::StrCat(kind, op_count_) : name);
  ++op_count_;
  for (uint32_t i : inputs) op->add_inputs(i);
  op->add_outputs(out);
  if (scalar) (*op->mutable_attrs())["scalar"].set_f(*scalar);
  if (const OpInfo* info = FindOp(kind);
      info != nullptr && info->category == OpCategory::kReduce) {
    (*op->mutable_attrs())["dim"].set_i(-1);
    (*op->mutable_attrs())["keepdim"].set_b(true);
  }
  for (int64_t t : tile) op->mutable_vec_tile()->add_dims(t);
  return out;
}

uint32_t GraphBuilder::Cast(uint32_t input, pto::v1::DataType to,
                            const std::vector<int64_t>& tile) {
  const pto::v1::Shape shape = Find(input)->shape();
  uint32_t out = Value(to, {}, absl::StrCat("t", op_count_));
  *g_.mutable_values(g_.values_size() - 1)->mutable_shape() = shape;
  pto::v1::Op* op = g_.add_ops();
  op->set_kind("cast");
  op->set_name(absl::StrCat("cast", op_count_));
  ++op_count_;
  op->add_inputs(input);
  op->add_outputs(out);
  (*op->mutable_attrs())["dtype"].set_dtype(to);
  for (int64_t t : tile) op->mutable_vec_tile()->add_dims(t);
  return out;
}

void GraphBuilder::Output(const std::string& name, uint32_t value) {
  pto::v1::Parameter* p = g_.add_params();
  p->set_name(name);
  p->set_role(pto::v1::PARAM_ROLE_OUT);
  p->set_value_id(value);
}

void GraphBuilder::InOut(const std::string& name, uint32_t in_value,
                         uint32_t result) {
  pto::v1::Parameter* p = g_.add_params();
  p->set_name(name);
  p->set_role(pto::v1::PARAM_ROLE_INOUT);
  p->set_value_id(in_value);
  p->set_result_value_id(result);
}

uint32_t GraphBuilder::Matmul(uint32_t a, uint32_t b,
                              const std::vector<int64_t>& out_shape,
                              pto::v1::DataType out_dtype, bool a_trans,
                              bool b_trans, const std::vector<int64_t>& m,
                              const std::vector<int64_t>& k,
                              const std::vector<int64_t>& n) {
  const uint32_t y = Value(out_dtype, out_shape);
  pto::v1::Op* op = g_.add_ops();
  op->set_kind("matmul");
  op->add_inputs(a);
  op->add_inputs(b);
  op->add_outputs(y);
  (*op->mutable_attrs())["out_dtype"].set_dtype(out_dtype);
  if (a_trans) (*op->mutable_attrs())["a_trans"].set_b(true);
  if (b_trans) (*op->mutable_attrs())["b_trans"].set_b(true);
  pto::v1::CubeTileShape* tile = op->mutable_cube_tile();
  for (int64_t d : m) tile->add_m(d);
  for (int64_t d : k) tile->add_k(d);
  for (int64_t d : n) tile->add_n(d);
  return y;
}

pto::v1::Graph ExpAddGraph(pto::v1::DataType dtype, const std::string& a_name) {
  GraphBuilder b("exp_add");
  uint32_t a = b.Input(a_name, dtype, {3, 5});
  uint32_t bb = b.Input("b", dtype, {3, 5});
  uint32_t e = b.Op("exp", {a}, {2, 4});
  b.Output("out", b.Op("add", {e, bb}, {2, 4}));
  return b.Build();
}

pto::v1::Graph MatmulGraph(const std::vector<int64_t>& a_shape,
                           const std::vector<int64_t>& b_shape,
                           const std::vector<int64_t>& out_shape, bool a_trans,
                           bool b_trans, pto::v1::DataType in_dtype,
                           pto::v1::DataType out_dtype) {
  GraphBuilder g("matmul");
  const uint32_t a = g.Input("a", in_dtype, a_shape);
  const uint32_t b = g.Input("b", in_dtype, b_shape);
  g.Output("out", g.Matmul(a, b, out_shape, out_dtype, a_trans, b_trans,
                           {16, 32}, {16, 64}, {32, 64}));
  return g.Build();
}

}  // namespace pto::compiler::testing
