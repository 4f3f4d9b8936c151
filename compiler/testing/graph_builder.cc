#include "compiler/testing/graph_builder.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/ir/import.h"
#include "compiler/ops/infer.h"
#include "compiler/verify/verify.h"

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
  return AddParam(name, pto::v1::PARAM_ROLE_IN, SymValue(dtype, shape, name));
}

uint32_t GraphBuilder::Input(const std::string& name, pto::v1::DataType dtype,
                             const std::vector<int64_t>& shape) {
  return AddParam(name, pto::v1::PARAM_ROLE_IN, Value(dtype, shape, name));
}

uint32_t GraphBuilder::Layout(
    const std::string& kind, const std::vector<uint32_t>& inputs,
    const std::vector<int64_t>& out_shape, const std::vector<int64_t>& tile,
    const std::map<std::string, std::vector<int64_t>>& lists,
    const std::map<std::string, int64_t>& ints) {
  const uint32_t out = Value(Find(inputs.at(0))->dtype(), out_shape,
                             absl::StrCat("t", op_count_));
  pto::v1::Op* op = AddOp();
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

pto::v1::Op* GraphBuilder::AddInferred(const std::string& kind,
                                       const std::vector<uint32_t>& inputs,
                                       const InferAttrs& attrs,
                                       const std::string& name, uint32_t* out) {
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
    const bool arity_ok = info->num_inputs < 0  // one or more (concat)
                              ? !types.empty()
                              : static_cast<int>(types.size()) == info->num_inputs;
    if (types.size() == inputs.size() && arity_ok) {
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
  *out = Value(dtype, {}, absl::StrCat("t", op_count_));
  *g_.mutable_values(g_.values_size() - 1)->mutable_shape() = shape;
  pto::v1::Op* op = AddOp();
  op->set_kind(kind);
  op->set_name(name.empty() ? absl::StrCat(kind, op_count_) : name);
  ++op_count_;
  for (uint32_t i : inputs) op->add_inputs(i);
  op->add_outputs(*out);
  return op;
}

void GraphBuilder::SetVecTile(pto::v1::Op* op, const std::vector<int64_t>& tile,
                              int rank) {
  const size_t skip =
      tile.size() > static_cast<size_t>(rank) ? tile.size() - rank : 0;
  for (size_t d = skip; d < tile.size(); ++d) op->mutable_vec_tile()->add_dims(tile[d]);
}

int GraphBuilder::RankOf(uint32_t id) const {
  const pto::v1::Value* v = Find(id);
  return v == nullptr ? 0 : v->shape().dims_size();
}

pto::v1::Op* GraphBuilder::LastOp() {
  google::protobuf::RepeatedPtrField<pto::v1::Op>* ops =
      scopes_.empty() ? g_.mutable_ops() : scopes_.back()->mutable_ops();
  return ops->Mutable(ops->size() - 1);
}

uint32_t GraphBuilder::Op(const std::string& kind,
                          const std::vector<uint32_t>& inputs,
                          const std::vector<int64_t>& tile,
                          std::optional<double> scalar, const std::string& name) {
  InferAttrs attrs;
  attrs.dim = -1;  // reductions built here reduce the last dim
  attrs.keepdim = true;
  uint32_t out = 0;
  pto::v1::Op* op = AddInferred(kind, inputs, attrs, name, &out);
  if (scalar) (*op->mutable_attrs())["scalar"].set_f(*scalar);
  if (const OpInfo* info = FindOp(kind);
      info != nullptr && info->category == OpCategory::kReduce) {
    (*op->mutable_attrs())["dim"].set_i(-1);
    (*op->mutable_attrs())["keepdim"].set_b(true);
  }
  SetVecTile(op, tile, RankOf(out));
  return out;
}

uint32_t GraphBuilder::ScalarOp(const std::string& kind, const std::vector<uint32_t>& inputs,
                                const std::vector<int64_t>& tile,
                                const std::map<std::string, SymExpr>& scalars) {
  const uint32_t out = Op(kind, inputs, tile);
  pto::v1::Op* op = LastOp();
  for (const auto& [name, e] : scalars) (*op->mutable_attrs())[name] = FloatExprAttr(e);
  return out;
}

uint32_t GraphBuilder::Cast(uint32_t input, pto::v1::DataType to,
                            const std::vector<int64_t>& tile, const std::string& kind) {
  const pto::v1::Shape shape = Find(input)->shape();
  uint32_t out = Value(to, {}, absl::StrCat("t", op_count_));
  *g_.mutable_values(g_.values_size() - 1)->mutable_shape() = shape;
  pto::v1::Op* op = AddOp();
  op->set_kind(kind);
  op->set_name(absl::StrCat(kind, op_count_));
  ++op_count_;
  op->add_inputs(input);
  op->add_outputs(out);
  (*op->mutable_attrs())["dtype"].set_dtype(to);
  for (int64_t t : tile) op->mutable_vec_tile()->add_dims(t);
  return out;
}

void GraphBuilder::Output(const std::string& name, uint32_t value) {
  for (pto::v1::Parameter& inout : *g_.mutable_params()) {
    if (inout.name() == name && inout.role() == pto::v1::PARAM_ROLE_INOUT &&
        inout.result_value_id() == 0) {
      inout.set_result_value_id(value);
      return;
    }
  }
  AddParam(name, pto::v1::PARAM_ROLE_OUT, value);
}

void GraphBuilder::InOut(const std::string& name, uint32_t in_value,
                         uint32_t result) {
  AddParam(name, pto::v1::PARAM_ROLE_INOUT, in_value, result);
}

uint32_t GraphBuilder::AddParam(const std::string& name, pto::v1::ParamRole role,
                                uint32_t value, uint32_t result) {
  pto::v1::Parameter* p = g_.add_params();
  p->set_name(name);
  p->set_role(role);
  p->set_value_id(value);
  p->set_result_value_id(result);
  return value;
}

uint32_t GraphBuilder::Matmul(uint32_t a, uint32_t b,
                              const std::vector<int64_t>& out_shape,
                              pto::v1::DataType out_dtype, bool a_trans,
                              bool b_trans, const std::vector<int64_t>& m,
                              const std::vector<int64_t>& k,
                              const std::vector<int64_t>& n) {
  const uint32_t y = Value(out_dtype, out_shape);
  pto::v1::Op* op = AddOp();
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

UniformGraphBuilder::UniformGraphBuilder(const std::string& name,
                                         pto::v1::DataType dtype,
                                         std::vector<int64_t> shape,
                                         std::vector<int64_t> tile)
    : b_(name), dtype_(dtype), shape_(std::move(shape)), tile_(std::move(tile)) {}

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

namespace pto::compiler::testing {

pto::v1::Op* GraphBuilder::AddOp() {
  return scopes_.empty() ? g_.add_ops() : scopes_.back()->add_ops();
}

uint32_t GraphBuilder::SameType(uint32_t of, const std::string& name) {
  const uint32_t id = Value(pto::v1::DT_FP32, {}, name);
  pto::v1::Value* v = g_.mutable_values(g_.values_size() - 1);
  const pto::v1::Value* src = Find(of);
  v->set_dtype(src->dtype());
  *v->mutable_shape() = src->shape();
  return id;
}

void GraphBuilder::SetShape(uint32_t id, const SymShape& shape) {
  for (pto::v1::Value& v : *g_.mutable_values()) {
    if (v.id() != id) continue;
    v.mutable_shape()->clear_dims();
    for (const SymExpr& d : shape) *v.mutable_shape()->add_dims() = SymExprToDim(d);
  }
}

std::vector<uint32_t> GraphBuilder::Control(
    const std::string& kind, const std::map<std::string, pto::v1::Attribute>& attrs,
    const std::vector<uint32_t>& carried, const std::vector<RegionFn>& bodies) {
  pto::v1::Op* op = AddOp();
  op->set_kind(kind);
  op->set_name(absl::StrCat(kind, op_count_++));
  for (uint32_t c : carried) op->add_inputs(c);
  for (const auto& [name, a] : attrs) (*op->mutable_attrs())[name] = a;
  for (const RegionFn& body : bodies) {
    pto::v1::Region* region = op->add_regions();
    std::vector<uint32_t> args;
    for (uint32_t c : carried) {
      args.push_back(SameType(c, "arg"));
      region->add_args(args.back());
    }
    scopes_.push_back(region);
    std::vector<uint32_t> results = body(args);
    scopes_.pop_back();
    for (uint32_t r : results) region->add_results(r);
  }
  std::vector<uint32_t> outs;
  for (uint32_t c : carried) {
    outs.push_back(SameType(c, "out"));
    op->add_outputs(outs.back());
  }
  return outs;
}

pto::v1::Attribute FloatExprAttr(const SymExpr& e) {
  pto::v1::Attribute a;
  if (std::optional<int64_t> c = e.AsConstant()) {
    a.set_f(static_cast<double>(*c));
  } else {
    *a.mutable_expr() = e.ToProto();
  }
  return a;
}

pto::v1::Attribute ExprAttr(const SymExpr& e) {
  pto::v1::Attribute a;
  if (std::optional<int64_t> c = e.AsConstant()) {
    a.set_i(*c);
  } else {
    *a.mutable_expr() = e.ToProto();
  }
  return a;
}

std::vector<uint32_t> GraphBuilder::Loop(const std::string& index,
                                         const SymExpr& start, const SymExpr& stop,
                                         int64_t step,
                                         const std::vector<uint32_t>& carried,
                                         const RegionFn& body) {
  std::map<std::string, pto::v1::Attribute> attrs;
  attrs["index"].set_s(index);
  attrs["start"] = ExprAttr(start);
  attrs["stop"] = ExprAttr(stop);
  attrs["step"].set_i(step);
  return Control("loop", attrs, carried, {body});
}

std::vector<uint32_t> GraphBuilder::If(const pto::v1::DimExpr& cond,
                                       const std::vector<uint32_t>& carried,
                                       const RegionFn& then_body,
                                       const RegionFn& else_body) {
  std::map<std::string, pto::v1::Attribute> attrs;
  *attrs["cond"].mutable_expr() = cond;
  return Control("if", attrs, carried, {then_body, else_body});
}

uint32_t GraphBuilder::View(uint32_t x, const SymShape& offsets,
                            const SymShape& shape, const std::vector<int64_t>& tile) {
  const uint32_t out = SymValue(Find(x)->dtype(), shape, absl::StrCat("t", op_count_));
  pto::v1::Op* op = AddOp();
  op->set_kind("view");
  op->set_name(absl::StrCat("view", op_count_++));
  op->add_inputs(x);
  op->add_outputs(out);
  for (const SymExpr& o : offsets) {
    *(*op->mutable_attrs())["offsets"].mutable_exprs()->add_values() = o.ToProto();
  }
  for (const SymExpr& d : shape) {
    *(*op->mutable_attrs())["shape"].mutable_exprs()->add_values() = d.ToProto();
  }
  for (int64_t t : tile) op->mutable_vec_tile()->add_dims(t);
  return out;
}

uint32_t GraphBuilder::Assemble(uint32_t src, uint32_t dst, const SymShape& offsets,
                                const std::vector<int64_t>& tile) {
  const uint32_t out = SameType(dst, absl::StrCat("t", op_count_));
  pto::v1::Op* op = AddOp();
  op->set_kind("assemble");
  op->set_name(absl::StrCat("assemble", op_count_++));
  op->add_inputs(src);
  op->add_inputs(dst);
  op->add_outputs(out);
  for (const SymExpr& o : offsets) {
    *(*op->mutable_attrs())["offsets"].mutable_exprs()->add_values() = o.ToProto();
  }
  for (int64_t t : tile) op->mutable_vec_tile()->add_dims(t);
  return out;
}

uint32_t RmsNormOps(GraphBuilder& b, uint32_t x, uint32_t gamma, int64_t n,
                    const std::vector<int64_t>& tile) {
  const uint32_t ss = b.Op("sum", {b.Op("mul", {x, x}, tile)}, tile, -1, true);
  const uint32_t ms = b.Op("muls", {ss}, tile, {{"scalar", 1.0 / n}});
  const uint32_t r = b.Op("rsqrt", {b.Op("adds", {ms}, tile, {{"scalar", 1e-6}})}, tile);
  return b.Op("mul", {b.Op("mul", {x, r}, tile), gamma}, tile);
}

pto::v1::Graph SoftmaxLoopGraph(const std::string& index, int64_t rows,
                                int64_t cols) {
  GraphBuilder b("softmax_loop");
  const SymExpr bs = SymExpr::Symbol("bs"), i = SymExpr::Symbol(index);
  const uint32_t inp = b.SymInput("inp", pto::v1::DT_FP32, {bs, rows, cols});
  const uint32_t out = b.SymValue(pto::v1::DT_FP32, {bs, rows, cols}, "out");
  const std::vector<int64_t> tile = {1, rows, cols};
  std::vector<uint32_t> outs = b.Loop(index, 0, bs, 1, {out}, [&](const auto& args) {
    const uint32_t x = b.View(inp, {i, 0, 0}, {1, rows, cols}, tile);
    const uint32_t m = b.Op("amax", {x}, tile);
    const uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, tile)}, tile);
    const uint32_t y = b.Op("div", {e, b.Op("sum", {e}, tile)}, tile);
    return std::vector<uint32_t>{b.Assemble(y, args[0], {i, 0, 0}, tile)};
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

pto::v1::DimExpr CompareExpr(pto::v1::DimOp op, const SymExpr& lhs,
                             const SymExpr& rhs) {
  pto::v1::DimExpr e;
  e.mutable_binary()->set_op(op);
  *e.mutable_binary()->mutable_lhs() = lhs.ToProto();
  *e.mutable_binary()->mutable_rhs() = rhs.ToProto();
  return e;
}

pto::v1::DimExpr SevenFactorProduct(const std::string& n) {
  auto plus = [&](int64_t k) {
    pto::v1::DimExpr e;
    e.mutable_binary()->set_op(pto::v1::DIM_OP_ADD);
    e.mutable_binary()->mutable_lhs()->set_symbol(n);
    e.mutable_binary()->mutable_rhs()->set_constant(k);
    return e;
  };
  pto::v1::DimExpr p = plus(1);
  for (int64_t k = 2; k <= 7; ++k) {
    pto::v1::DimExpr q;
    q.mutable_binary()->set_op(pto::v1::DIM_OP_MUL);
    *q.mutable_binary()->mutable_lhs() = p;
    *q.mutable_binary()->mutable_rhs() = plus(k);
    p = q;
  }
  return p;
}

pto::v1::Graph SymbolicProductGraph(const std::string& name) {
  GraphBuilder b(name);
  const SymExpr n = SymExpr::Symbol("n");
  b.SymInput("bind", pto::v1::DT_FP32, {n});
  uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {n, 8});
  uint32_t y = b.Op("exp", {x}, {4, 8});
  b.Output("out", y);
  pto::v1::Graph g = b.Build();
  const pto::v1::DimExpr p = SevenFactorProduct("n");
  for (pto::v1::Value& v : *g.mutable_values()) {
    if (v.id() == x || v.id() == y) {
      *v.mutable_shape()->mutable_dims(0)->mutable_expr() = p;
    }
  }
  return g;
}

absl::StatusOr<TensorGraph> VerifyAndImport(const pto::v1::Graph& graph) {
  absl::StatusOr<VerifiedGraph> verified = Verified(graph);
  if (!verified.ok()) return verified.status();
  return ImportGraph(*verified);
}

}  // namespace pto::compiler::testing
