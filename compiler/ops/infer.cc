#include "compiler/ops/infer.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/ir/dtype.h"
#include "compiler/ops/img2col.h"
#include "compiler/util/strings.h"

namespace pto::compiler {
namespace {

bool IsFloat(pto::v1::DataType t) { return IsFloatComputeDType(t); }

// What a data operand of `types` may be, for the error that names a wrong one.
const char* AcceptedText(OperandTypes types) {
  switch (types) {
    case OperandTypes::kFloat: return "DT_FP32, DT_FP16 or DT_BF16";
    case OperandTypes::kNumeric:
      return "DT_FP32, DT_FP16, DT_BF16, DT_INT32, DT_INT64 or DT_DOUBLE";
    case OperandTypes::kFloatOrDouble: return "DT_FP32, DT_FP16, DT_BF16 or DT_DOUBLE";
    case OperandTypes::kInteger: return "DT_INT32 or DT_INT64";
    case OperandTypes::kAny: break;
  }
  return "any dtype";
}

std::string TypeString(const SymValueType& v) {
  return absl::StrCat(DTypeShortName(v.dtype), FormatSymShape(v.shape));
}

bool IsOne(const SymExpr& e) { return e.AsConstant() == std::optional<int64_t>(1); }

// The im2col matrix [N, G, K, OH * OW] a matmul with attr "img2col" reads
// from its feature map b [N, C, H, W] (or [N, C, W]: H = 1), for a
// [G, M, K] (ops/img2col.h).
absl::StatusOr<SymShape> Img2ColShape(const SymShape& a, const SymShape& b,
                                      const InferAttrs& attrs) {
  absl::StatusOr<Img2Col> geo = ParseImg2Col(attrs.img2col);
  if (!geo.ok()) return geo.status();
  const std::string operands =
      absl::StrCat("a ", FormatSymShape(a), ", feature map b ", FormatSymShape(b));
  std::vector<int64_t> as, bs;
  for (const auto& [shape, out] : {std::pair{&a, &as}, std::pair{&b, &bs}}) {
    for (size_t d = out == &bs ? 1 : 0; d < shape->size(); ++d) {
      std::optional<int64_t> c = (*shape)[d].AsConstant();
      if (!c) break;
      out->push_back(*c);
    }
  }
  if (a.size() != 3 || (b.size() != 3 && b.size() != 4) || as.size() != 3 ||
      bs.size() != b.size() - 1 || attrs.a_trans || attrs.b_trans) {
    return absl::InvalidArgumentError(absl::StrCat(
        "matmul with img2col takes a [G, M, K] and a feature map b [N, C, H, W] or "
        "[N, C, W] (static but for N), neither transposed: ", operands));
  }
  if (bs.size() == 2) bs.insert(bs.begin() + 1, 1);  // [C, W]: H = 1
  const int64_t groups = as[0], k = as[2], c = bs[0];
  if (k % geo->Taps() != 0 || groups * (k / geo->Taps()) != c) {
    return absl::InvalidArgumentError(absl::StrCat(
        "matmul with img2col: ", operands, ": K ", k, " must be kh * kw (", geo->Taps(),
        ") times C / G (", c, " / ", groups, ")"));
  }
  const int64_t oh = geo->OutH(bs[1]), ow = geo->OutW(bs[2]);
  if (oh <= 0 || ow <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "matmul with img2col: feature map b ", FormatSymShape(b), " is smaller than the "
        "kernel's extent (output ", oh, " x ", ow, ")"));
  }
  return SymShape{b[0], SymExpr(groups), SymExpr(k), SymExpr(oh * ow)};
}

}  // namespace

pto::v1::DataType ReduceResultDType(absl::string_view kind,
                                    pto::v1::DataType input) {
  if (kind == "argmax" || kind == "argmin") return pto::v1::DT_INT64;
  const bool integral = !IsFloat(input) && input != pto::v1::DT_DOUBLE;
  if ((kind == "sum" || kind == "prod") && integral) return pto::v1::DT_INT64;
  return input;
}

absl::StatusOr<SymShape> BroadcastSymShapes(absl::Span<const SymShape> shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  SymShape out(rank, SymExpr(1));
  std::vector<int> from(rank, -1);  // which operand set out[d] (size != 1)
  for (size_t k = 0; k < shapes.size(); ++k) {
    const SymShape& s = shapes[k];
    for (size_t i = 0; i < s.size(); ++i) {
      const size_t d = rank - s.size() + i;
      if (IsOne(s[i])) continue;
      if (IsOne(out[d])) {
        out[d] = s[i];
        from[d] = static_cast<int>(k);
      } else if (out[d] != s[i]) {
        const int dim_from_end = static_cast<int>(d) - static_cast<int>(rank);
        return absl::InvalidArgumentError(absl::StrCat(
            "inputs ", from[d], " ", FormatSymShape(shapes[from[d]]), " and ",
            k, " ", FormatSymShape(s), " do not broadcast: dim ", dim_from_end,
            " is ", out[d].ToString(), " vs ", s[i].ToString(),
            " (numpy broadcasting: dims aligned from the last must be equal "
            "or 1; symbolic dims must be the same expression)"));
      }
    }
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> BroadcastShapes(
    absl::Span<const std::vector<int64_t>> shapes) {
  std::vector<SymShape> sym;
  for (const auto& s : shapes) sym.push_back(ToSymShape(s));
  absl::StatusOr<SymShape> out = BroadcastSymShapes(sym);
  if (!out.ok()) return out.status();
  return *StaticDims(*out);
}

absl::StatusOr<int> NormalizeDim(int64_t dim, int rank) {
  if (dim < -rank || dim >= rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attrs[\"dim\"]: dim ", dim, " is out of range for rank ", rank,
        " (valid: ", -rank, "..", rank - 1, ")"));
  }
  return static_cast<int>(dim < 0 ? dim + rank : dim);
}

absl::StatusOr<ValueType> InferResult(const OpInfo& info,
                                      absl::Span<const ValueType> inputs,
                                      const InferAttrs& attrs) {
  std::vector<SymValueType> sym;
  for (const ValueType& v : inputs) sym.push_back({v.dtype, ToSymShape(v.shape)});
  absl::StatusOr<SymValueType> out = InferSymResult(info, sym, attrs);
  if (!out.ok()) return out.status();
  return ValueType{out->dtype, *StaticDims(out->shape)};
}

absl::StatusOr<SymValueType> InferSymResult(const OpInfo& info,
                                            absl::Span<const SymValueType> inputs,
                                            const InferAttrs& attrs) {
  const pto::v1::DataType cast_to = attrs.cast_to;
  if (info.category == OpCategory::kLayout && attrs.sym_region) {
    return InferSymRegionResult(info, inputs, attrs);
  }
  if (info.category == OpCategory::kLayout) {
    std::vector<ValueType> static_inputs;
    for (size_t k = 0; k < inputs.size(); ++k) {
      std::optional<std::vector<int64_t>> dims = StaticDims(inputs[k].shape);
      if (!dims || !attrs.sym_shape.empty()) {
        return InferSymLayoutResult(info, inputs, attrs);  // symbolic dims
      }
      static_inputs.push_back({inputs[k].dtype, *dims});
    }
    absl::StatusOr<ValueType> out = InferLayoutResult(info, static_inputs, attrs);
    if (!out.ok()) return out.status();
    return SymValueType{out->dtype, ToSymShape(out->shape)};
  }
  if (info.category == OpCategory::kIndex) return InferIndexResult(info, inputs, attrs);
  if (info.category == OpCategory::kCreate) {
    if (!IsSupportedDType(cast_to)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attrs[\"dtype\"]: ", DTypeEnumName(cast_to), " is not supported"));
    }
    if (IsFp8DType(cast_to)) {  // a storage type: its values come from a cast
      return absl::InvalidArgumentError(absl::StrCat(
          "attrs[\"dtype\"]: ", info.kind, " does not create ", DTypeEnumName(cast_to),
          " tensors (create DT_FP32 and cast)"));
    }
    if (!attrs.sym_shape.empty()) {  // full of a symbolic size
      for (size_t d = 0; d < attrs.sym_shape.size(); ++d) {
        std::optional<int64_t> c = attrs.sym_shape[d].AsConstant();
        if (c && *c <= 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "attrs[\"shape\"] dim ", d, " is ", *c, ", not positive"));
        }
      }
      return SymValueType{cast_to, attrs.sym_shape};
    }
    // An empty shape is a rank-0 value (full(()) is one element).
    for (int64_t d : attrs.shape) {
      if (d <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "attrs[\"shape\"]: ", FormatDims(attrs.shape),
            " has a dim that is not positive"));
      }
    }
    if (info.kind == "arange" && attrs.shape.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attrs[\"shape\"]: ", FormatDims(attrs.shape),
          "; arange makes rank-1 tensors"));
    }
    if (info.kind == "philox" && (attrs.shape.size() != 1 || cast_to != pto::v1::DT_INT64)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attrs: shape ", FormatDims(attrs.shape), ", dtype ", DTypeEnumName(cast_to),
          "; philox makes rank-1 DT_INT64 tensors (its 32-bit words)"));
    }
    if (info.kind == "philox_normal" &&
        (attrs.shape.size() != 1 || cast_to != pto::v1::DT_FP32)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attrs: shape ", FormatDims(attrs.shape), ", dtype ", DTypeEnumName(cast_to),
          "; philox_normal makes rank-1 DT_FP32 tensors"));
    }
    return SymValueType{cast_to, ToSymShape(attrs.shape)};
  }
  if (info.category == OpCategory::kMatmul) {
    const SymValueType& a = inputs[0];
    SymValueType b = inputs[1];
    if (info.kind == "matmul" && !attrs.img2col.empty()) {
      absl::StatusOr<SymShape> cols = Img2ColShape(a.shape, b.shape, attrs);
      if (!cols.ok()) return cols.status();
      b.shape = *std::move(cols);
    }
    if (!IsFloat(a.dtype) || a.dtype != b.dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          "inputs have dtypes ", DTypeEnumName(a.dtype), " and ",
          DTypeEnumName(b.dtype), "; matmul takes two DT_FP32, DT_FP16 or "
          "DT_BF16 operands of the same dtype"));
    }
    if (attrs.out_dtype != pto::v1::DT_FP32 && attrs.out_dtype != a.dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attrs[\"out_dtype\"]: ", DTypeEnumName(attrs.out_dtype),
          "; matmul of ", DTypeEnumName(a.dtype), " gives DT_FP32 or ",
          DTypeEnumName(a.dtype)));
    }
    const std::string operands = absl::StrCat(
        "a ", FormatSymShape(a.shape), " (a_trans=",
        attrs.a_trans ? "true" : "false", "), b ", FormatSymShape(b.shape),
        " (b_trans=",
        attrs.b_trans ? "true" : "false", ")");
    if (a.shape.size() < 2 || b.shape.size() < 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "matmul operands must have rank 2 to 4: ", operands));
    }
    const size_t ar = a.shape.size(), br = b.shape.size();
    const SymExpr m = attrs.a_trans ? a.shape[ar - 1] : a.shape[ar - 2];
    const SymExpr ka = attrs.a_trans ? a.shape[ar - 2] : a.shape[ar - 1];
    const SymExpr kb = attrs.b_trans ? b.shape[br - 1] : b.shape[br - 2];
    const SymExpr n = attrs.b_trans ? b.shape[br - 2] : b.shape[br - 1];
    if (ka != kb) {
      return absl::InvalidArgumentError(absl::StrCat(
          "matmul K mismatch: ", operands, " have K ", ka.ToString(), " and ",
          kb.ToString(), " (valid: equal K)"));
    }
    const SymShape a_batch(a.shape.begin(), a.shape.end() - 2);
    const SymShape b_batch(b.shape.begin(), b.shape.end() - 2);
    absl::StatusOr<SymShape> batch = BroadcastSymShapes({a_batch, b_batch});
    if (!batch.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "matmul batch dims do not broadcast: ", operands));
    }
    SymShape shape = *batch;
    shape.push_back(m);
    shape.push_back(n);
    return SymValueType{attrs.out_dtype, shape};
  }
  if (info.category == OpCategory::kReduce) {
    if (!IsSupportedDType(inputs[0].dtype) || IsFp8DType(inputs[0].dtype)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input 0 has dtype ", DTypeEnumName(inputs[0].dtype), "; ",
          info.kind, " takes DT_FP32, DT_FP16, DT_BF16, DT_DOUBLE, DT_INT8, "
          "DT_INT16, DT_INT32, DT_INT64, DT_UINT8 or DT_BOOL (cast FP8 to DT_FP32 "
          "first)"));
    }
    const int rank = static_cast<int>(inputs[0].shape.size());
    absl::StatusOr<int> d = NormalizeDim(attrs.dim, rank);
    if (!d.ok()) return d.status();
    SymValueType out;
    out.dtype = ReduceResultDType(info.kind, inputs[0].dtype);
    out.shape = inputs[0].shape;
    if (attrs.keepdim) {
      out.shape[*d] = SymExpr(1);
    } else {
      out.shape.erase(out.shape.begin() + *d);
    }
    return out;
  }
  if (info.category == OpCategory::kScan) {
    if (!AcceptsOperand(info.operands, inputs[0].dtype)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input 0 has dtype ", DTypeEnumName(inputs[0].dtype), "; ", info.kind, " takes ",
          AcceptedText(info.operands), " (cast it first; torch's cumsum gives DT_INT64 for "
          "integer and DT_BOOL input)"));
    }
    absl::StatusOr<int> d = NormalizeDim(attrs.dim, static_cast<int>(inputs[0].shape.size()));
    if (!d.ok()) return d.status();
    return inputs[0];
  }
  if (info.category == OpCategory::kCast) {
    if (!IsSupportedDType(cast_to)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attrs[\"dtype\"]: cannot cast to ", DTypeEnumName(cast_to),
          " (supported: DT_FP32 DT_FP16 DT_BF16 DT_INT8 DT_INT16 DT_INT32 "
          "DT_INT64 DT_UINT8 DT_BOOL DT_DOUBLE DT_FP8E4M3 DT_FP8E5M2 "
          "DT_FP8E8M0)"));
    }
    if (info.kind == "bitcast" &&
        (inputs[0].dtype == pto::v1::DT_BOOL || cast_to == pto::v1::DT_BOOL ||
         DTypeBytes(inputs[0].dtype) != DTypeBytes(cast_to))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bitcast of ", DTypeEnumName(inputs[0].dtype), " to ", DTypeEnumName(cast_to),
          ": a bitcast keeps each element's bits, so both types must have the same size "
          "(FP32/INT32, FP16/BF16/INT16, INT8/UINT8, INT64/DOUBLE; not BOOL)"));
    }
    return SymValueType{cast_to, inputs[0].shape};
  }
  // Data operands: all but where's condition.
  const size_t first_data = info.category == OpCategory::kSelect ? 1 : 0;
  if (info.category == OpCategory::kSelect &&
      inputs[0].dtype != pto::v1::DT_BOOL) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input 0 (the condition) is ", TypeString(inputs[0]), "; ", info.kind,
        " needs a DT_BOOL condition (e.g. the result of a comparison)"));
  }
  for (size_t k = first_data; k < inputs.size(); ++k) {
    if (!AcceptsOperand(info.operands, inputs[k].dtype)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", k, " has dtype ", DTypeEnumName(inputs[k].dtype), "; ", info.kind,
          " takes ", AcceptedText(info.operands), " (cast it first)"));
    }
    if (k > first_data && inputs[k].dtype != inputs[first_data].dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", k, " ", TypeString(inputs[k]), " and input ", first_data,
          " ", TypeString(inputs[first_data]), " have different dtypes; ",
          info.kind, " needs equal dtypes (cast one of them)"));
    }
  }
  SymValueType out;
  out.dtype = info.bool_result ? pto::v1::DT_BOOL : inputs[first_data].dtype;
  std::vector<SymShape> shapes;
  for (const SymValueType& v : inputs) shapes.push_back(v.shape);
  absl::StatusOr<SymShape> shape = BroadcastSymShapes(shapes);
  if (!shape.ok()) return shape.status();
  out.shape = *std::move(shape);
  return out;
}

}  // namespace pto::compiler
