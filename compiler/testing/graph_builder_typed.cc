// GraphBuilder's typed forms (the kernel tests): ops whose attributes decide
// the result's type (a reduction's dim, a layout op's lists, matmul's
// transposes) get the type the compiler infers from them, as Op does for
// the elementwise kinds, so a test names only its inputs' types.
#include "absl/strings/str_cat.h"
#include "compiler/ops/infer.h"
#include "compiler/testing/graph_builder.h"

namespace pto::compiler::testing {

uint32_t GraphBuilder::Op(const std::string& kind,
                          const std::vector<uint32_t>& inputs,
                          const std::vector<int64_t>& tile,
                          const std::map<std::string, double>& attrs) {
  const uint32_t out = Op(kind, inputs, tile);
  pto::v1::Op* op = LastOp();
  for (const auto& [name, value] : attrs) (*op->mutable_attrs())[name].set_f(value);
  return out;
}

uint32_t GraphBuilder::Op(const std::string& kind,
                          const std::vector<uint32_t>& inputs,
                          const std::vector<int64_t>& tile, int64_t dim,
                          bool keepdim) {
  InferAttrs infer;
  infer.dim = dim;
  infer.keepdim = keepdim;
  uint32_t out = 0;
  pto::v1::Op* op = AddInferred(kind, inputs, infer, "", &out);
  (*op->mutable_attrs())["dim"].set_i(dim);
  (*op->mutable_attrs())["keepdim"].set_b(keepdim);
  SetVecTile(op, tile, RankOf(inputs.at(0)));
  return out;
}

uint32_t GraphBuilder::Sort(uint32_t x, int64_t dim, int64_t k, bool descending,
                            const std::vector<int64_t>& tile) {
  InferAttrs infer;
  infer.dim = dim;
  infer.k = k;
  uint32_t out = 0;
  pto::v1::Op* op = AddInferred("sort", {x}, infer, "", &out);
  (*op->mutable_attrs())["dim"].set_i(dim);
  (*op->mutable_attrs())["k"].set_i(k);
  (*op->mutable_attrs())["descending"].set_b(descending);
  SetVecTile(op, tile, RankOf(out));
  return out;
}

uint32_t GraphBuilder::Layout(
    const std::string& kind, const std::vector<uint32_t>& inputs,
    const std::vector<int64_t>& tile,
    const std::map<std::string, std::vector<int64_t>>& lists,
    const std::map<std::string, int64_t>& ints) {
  InferAttrs infer;
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
  uint32_t out = 0;
  pto::v1::Op* op = AddInferred(kind, inputs, infer, "", &out);
  auto* a = op->mutable_attrs();
  for (const auto& [name, v] : lists) {
    auto* values = (*a)[name].mutable_ints();
    for (int64_t x : v) values->add_values(x);
  }
  for (const auto& [name, v] : ints) (*a)[name].set_i(v);
  SetVecTile(op, tile, RankOf(kind == "assemble" ? inputs.at(0) : out));
  return out;
}

uint32_t GraphBuilder::Create(const std::string& kind, pto::v1::DataType dtype,
                              const std::vector<int64_t>& shape,
                              const std::map<std::string, double>& attrs) {
  const uint32_t out = Value(dtype, shape, absl::StrCat("t", op_count_));
  pto::v1::Op* op = AddOp();
  op->set_kind(kind);
  op->set_name(absl::StrCat(kind, op_count_++));
  op->add_outputs(out);
  auto* a = op->mutable_attrs();
  for (int64_t d : shape) (*a)["shape"].mutable_ints()->add_values(d);
  (*a)["dtype"].set_dtype(dtype);
  for (const auto& [name, value] : attrs) (*a)[name].set_f(value);
  op->mutable_vec_tile()->add_dims(32);
  return out;
}

uint32_t GraphBuilder::Matmul(uint32_t a, uint32_t b, pto::v1::DataType out_dtype,
                              bool a_trans, bool b_trans,
                              const std::vector<int64_t>& cube) {
  InferAttrs infer;
  infer.out_dtype =
      out_dtype == pto::v1::DT_UNSPECIFIED ? Find(a)->dtype() : out_dtype;
  infer.a_trans = a_trans;
  infer.b_trans = b_trans;
  uint32_t out = 0;
  pto::v1::Op* op = AddInferred("matmul", {a, b}, infer, "", &out);
  (*op->mutable_attrs())["out_dtype"].set_dtype(infer.out_dtype);
  if (a_trans) (*op->mutable_attrs())["a_trans"].set_b(true);
  if (b_trans) (*op->mutable_attrs())["b_trans"].set_b(true);
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

uint32_t GraphBuilder::InOut(const std::string& name, pto::v1::DataType dtype,
                             const std::vector<int64_t>& shape) {
  return AddParam(name, pto::v1::PARAM_ROLE_INOUT, Value(dtype, shape, name));
}

}  // namespace pto::compiler::testing
