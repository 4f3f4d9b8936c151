#include "client/python/native/dim_binding.h"

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "compiler/ir/sym_expr.h"
#include "pto/v1/graph.pb.h"
#include "runtime/dim_expr.h"
#include "runtime/dim_ops.h"

namespace py = pybind11;

namespace pto::python {
namespace {

// `value` as an int64, or nullopt where it is no Python int in int64's range.
std::optional<int64_t> Int64Of(const py::handle& value) {
  if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr())) return std::nullopt;
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return std::nullopt;
  }
  return static_cast<int64_t>(v);
}

pto::v1::DimExpr ParseExpr(const py::bytes& expr_bytes) {
  pto::v1::DimExpr expr;
  if (!expr.ParseFromString(std::string(expr_bytes))) {
    throw py::value_error("expression bytes do not parse as a pto.v1.DimExpr");
  }
  return expr;
}

// a `op` b (runtime/dim_ops.h), or None where the result is no int64 (an
// operand outside int64, overflow, a division by zero, INT64_MIN // -1).
py::object ApplyDimOp(int op, const py::handle& a, const py::handle& b) {
  if (!pto::v1::DimOp_IsValid(op)) {
    throw py::value_error(absl::StrCat("apply_dim_op: ", op, " is no pto.v1.DimOp"));
  }
  const std::optional<int64_t> x = Int64Of(a), y = Int64Of(b);
  int64_t out = 0;
  if (!x || !y ||
      !runtime::ApplyDimOp(static_cast<pto::v1::DimOp>(op), *x, *y, &out)) {
    return py::none();
  }
  return py::int_(out);
}

int64_t EvaluateDimExpr(const py::bytes& expr_bytes, const py::dict& values) {
  runtime::SymbolValues bound;
  for (const auto& [name, value] : values) {
    const std::optional<int64_t> v = Int64Of(value);
    const std::string symbol = py::str(name);
    if (!v) {
      throw py::value_error(absl::StrCat("symbol ", symbol, ": ",
                                         std::string(py::repr(value)),
                                         " is no int64"));
    }
    bound[symbol] = *v;
  }
  absl::StatusOr<int64_t> v = runtime::EvaluateDimExpr(ParseExpr(expr_bytes), bound);
  if (!v.ok()) throw py::value_error(std::string(v.status().message()));
  return *v;
}

// (canonical text, constant value or None) of the compiler's SymExpr.
py::tuple FoldDimExpr(const py::bytes& expr_bytes) {
  absl::StatusOr<compiler::SymExpr> e = compiler::SymExprFromProto(ParseExpr(expr_bytes));
  if (!e.ok()) throw py::value_error(std::string(e.status().message()));
  const std::optional<int64_t> constant = e->AsConstant();
  return py::make_tuple(e->ToString(),
                        constant ? py::object(py::int_(*constant)) : py::object(py::none()));
}

}  // namespace

void BindDimOps(py::module_& m) {
  m.def("apply_dim_op", &ApplyDimOp, py::arg("op"), py::arg("a"), py::arg("b"),
        "a op b for a pto.v1.DimOp number as the compiler and the runtime compute "
        "it (runtime/dim_ops.h: // and % round toward negative infinity, "
        "comparisons and and/or give 1 or 0); None where the result is no int64.");
  m.def("evaluate_dim_expr", &EvaluateDimExpr, py::arg("expr"), py::arg("values"),
        "The runtime's value of serialized pto.v1.DimExpr bytes for {symbol: "
        "int}; ValueError naming an unbound symbol, a division by zero or an "
        "overflow.");
  m.def("fold_dim_expr", &FoldDimExpr, py::arg("expr"),
        "The compiler's canonical form of serialized pto.v1.DimExpr bytes: "
        "(text, constant value or None); ValueError where it does not parse.");
}

}  // namespace pto::python
