#include "tests/kernels/typed_builder.h"

#include "client/ptoc/check.h"
#include "compiler/compile.h"
#include "gtest/gtest.h"
#include "runtime/kernel.h"

namespace pto::testing {

using pto::v1::DataType;

TypedBuilder::TypedBuilder(const std::string& name) {
  g_.set_schema_version(pto::v1::SCHEMA_VERSION_1);
  g_.set_name(name);
}

uint32_t TypedBuilder::Input(const std::string& name, DataType dtype,
                             const std::vector<int64_t>& shape) {
  const uint32_t id = NewValue(dtype, shape);
  pto::v1::Parameter* p = g_.add_params();
  p->set_name(name);
  p->set_role(pto::v1::PARAM_ROLE_IN);
  p->set_value_id(id);
  return id;
}

uint32_t TypedBuilder::AddOp(const std::string& kind,
                             const std::vector<uint32_t>& inputs,
                             const compiler::InferAttrs& infer,
                             pto::v1::Op** op) {
  std::vector<compiler::ValueType> types;
  for (uint32_t v : inputs) types.push_back(types_.at(v));
  const compiler::OpInfo* info = compiler::FindOp(kind);
  EXPECT_NE(info, nullptr) << "unknown op kind " << kind;
  compiler::ValueType out_type = types.empty() ? compiler::ValueType{} : types[0];
  if (info != nullptr) {
    auto inferred = compiler::InferResult(*info, types, infer);
    EXPECT_TRUE(inferred.ok()) << kind << ": " << inferred.status();
    if (inferred.ok()) out_type = *inferred;
  }
  const uint32_t out = NewValue(out_type.dtype, out_type.shape);
  *op = g_.add_ops();
  (*op)->set_kind(kind);
  for (uint32_t v : inputs) (*op)->add_inputs(v);
  (*op)->add_outputs(out);
  return out;
}

uint32_t TypedBuilder::Op(const std::string& kind,
                          const std::vector<uint32_t>& inputs,
                          const std::vector<int64_t>& tile,
                          const std::map<std::string, double>& attrs) {
  pto::v1::Op* op = nullptr;
  const uint32_t out = AddOp(kind, inputs, {}, &op);
  for (const auto& [name, value] : attrs) (*op->mutable_attrs())[name].set_f(value);
  const size_t rank = types_.at(out).shape.size();
  for (size_t d = 0; d < rank && d < tile.size(); ++d) {
    op->mutable_vec_tile()->add_dims(tile[tile.size() - rank + d]);
  }
  return out;
}

uint32_t TypedBuilder::Op(const std::string& kind,
                          const std::vector<uint32_t>& inputs,
                          const std::vector<int64_t>& tile, int64_t dim,
                          bool keepdim) {
  compiler::InferAttrs infer;
  infer.dim = dim;
  infer.keepdim = keepdim;
  pto::v1::Op* op = nullptr;
  const uint32_t out = AddOp(kind, inputs, infer, &op);
  (*op->mutable_attrs())["dim"].set_i(dim);
  (*op->mutable_attrs())["keepdim"].set_b(keepdim);
  for (int64_t t : tile) op->mutable_vec_tile()->add_dims(t);
  return out;
}

uint32_t TypedBuilder::Matmul(uint32_t a, uint32_t b, DataType out_dtype,
                              bool a_trans, bool b_trans,
                              const std::vector<int64_t>& cube) {
  compiler::InferAttrs infer;
  infer.out_dtype =
      out_dtype == pto::v1::DT_UNSPECIFIED ? types_.at(a).dtype : out_dtype;
  infer.a_trans = a_trans;
  infer.b_trans = b_trans;
  pto::v1::Op* op = nullptr;
  const uint32_t out = AddOp("matmul", {a, b}, infer, &op);
  (*op->mutable_attrs())["out_dtype"].set_dtype(infer.out_dtype);
  (*op->mutable_attrs())["a_trans"].set_b(a_trans);
  (*op->mutable_attrs())["b_trans"].set_b(b_trans);
  pto::v1::CubeTileShape* t = op->mutable_cube_tile();
  if (cube.size() == 6) {
    t->add_m(cube[0]);
    t->add_m(cube[1]);
    t->add_k(cube[2]);
    t->add_k(cube[3]);
    t->add_n(cube[4]);
    t->add_n(cube[5]);
  }
  return out;
}

uint32_t TypedBuilder::Cast(uint32_t input, DataType to,
                            const std::vector<int64_t>& tile) {
  const uint32_t out = NewValue(to, types_.at(input).shape);
  pto::v1::Op* op = g_.add_ops();
  op->set_kind("cast");
  op->add_inputs(input);
  op->add_outputs(out);
  (*op->mutable_attrs())["dtype"].set_dtype(to);
  for (int64_t t : tile) op->mutable_vec_tile()->add_dims(t);
  return out;
}

uint32_t TypedBuilder::Create(const std::string& kind, DataType dtype,
                              const std::vector<int64_t>& shape,
                              const std::map<std::string, double>& attrs) {
  const uint32_t out = NewValue(dtype, shape);
  pto::v1::Op* op = g_.add_ops();
  op->set_kind(kind);
  op->add_outputs(out);
  auto* a = op->mutable_attrs();
  for (int64_t d : shape) (*a)["shape"].mutable_ints()->add_values(d);
  (*a)["dtype"].set_dtype(dtype);
  for (const auto& [name, value] : attrs) (*a)[name].set_f(value);
  op->mutable_vec_tile()->add_dims(32);
  return out;
}

uint32_t TypedBuilder::InOut(const std::string& name, DataType dtype,
                             const std::vector<int64_t>& shape) {
  const uint32_t id = Input(name, dtype, shape);
  g_.mutable_params(g_.params_size() - 1)->set_role(pto::v1::PARAM_ROLE_INOUT);
  return id;
}

uint32_t TypedBuilder::Layout(
    const std::string& kind, const std::vector<uint32_t>& inputs,
    const std::vector<int64_t>& tile,
    const std::map<std::string, std::vector<int64_t>>& lists,
    const std::map<std::string, int64_t>& ints) {
  compiler::InferAttrs infer;
  for (const auto& [name, v] : lists) {
    if (name == "offsets") infer.offsets = v;
    if (name == "shape") infer.shape = v;
    if (name == "dims") infer.dims = v;
  }
  for (const auto& [name, v] : ints) {
    if (name == "dim") infer.dim = v;
    if (name == "dim0") infer.dim0 = v;
    if (name == "dim1") infer.dim1 = v;
  }
  pto::v1::Op* op = nullptr;
  const uint32_t out = AddOp(kind, inputs, infer, &op);
  auto* a = op->mutable_attrs();
  for (const auto& [name, v] : lists) {
    auto* values = (*a)[name].mutable_ints();
    for (int64_t x : v) values->add_values(x);
  }
  for (const auto& [name, v] : ints) (*a)[name].set_i(v);
  // The tile covers the result (an assemble's: its src).
  const size_t rank = types_.at(kind == "assemble" ? inputs[0] : out).shape.size();
  for (size_t d = 0; d < rank && d < tile.size(); ++d) {
    op->mutable_vec_tile()->add_dims(tile[tile.size() - rank + d]);
  }
  return out;
}

void TypedBuilder::Output(const std::string& name, uint32_t value) {
  for (pto::v1::Parameter& p : *g_.mutable_params()) {
    if (p.name() == name && p.role() == pto::v1::PARAM_ROLE_INOUT) {
      p.set_result_value_id(value);
      return;
    }
  }
  pto::v1::Parameter* p = g_.add_params();
  p->set_name(name);
  p->set_role(pto::v1::PARAM_ROLE_OUT);
  p->set_value_id(value);
}

uint32_t TypedBuilder::NewValue(DataType dtype,
                                const std::vector<int64_t>& shape) {
  pto::v1::Value* v = g_.add_values();
  v->set_id(next_id_);
  v->set_dtype(dtype);
  for (int64_t d : shape) v->mutable_shape()->add_dims()->set_size(d);
  types_[next_id_] = {dtype, shape};
  return next_id_++;
}

void CompileRunAndCheck(const pto::v1::Graph& graph, int seeds,
                        const ptoc::Tolerance* tolerance, const std::string& target) {
  auto compiled = compiler::Compile(graph, target, {});
  ASSERT_TRUE(compiled.ok()) << graph.name() << ": " << compiled.status();
  auto kernel = runtime::Kernel::Load(compiled->binary);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  for (int seed = 1; seed <= seeds; ++seed) {
    ptoc::CheckOptions options;
    options.seed = seed;
    // Wider than [-2, 2] so exp overflows and log sees negatives sometimes.
    options.low = -4;
    options.high = 4;
    options.tolerance = tolerance;
    auto report = ptoc::RunAndCheck(graph, **kernel, options);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->pass()) << graph.name() << " seed " << seed << "\n"
                                << report->Summary();
  }
}

}  // namespace pto::testing
