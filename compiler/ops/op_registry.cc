#include "compiler/ops/op_registry.h"

#include "compiler/ir/dtype.h"

namespace pto::compiler {
namespace {

using C = OpCategory;
using P = PtoOpcode;
using T = OperandTypes;

OpInfo Binary(const char* kind, P pto) {
  return {kind, C::kElementwiseBinary, 2, 1, {}, true, pto};
}
OpInfo Compare(const char* kind, P pto) {
  return {kind, C::kElementwiseBinary, 2, 1, {}, true, pto, T::kAny, true};
}
OpInfo WithScalar(const char* kind, P pto) {
  return {kind, C::kElementwiseScalar, 1, 1, {{"scalar", AttrType::kFloat, true, true}},
          true, pto};
}
OpInfo CompareScalar(const char* kind, P pto) {
  OpInfo info = WithScalar(kind, pto);
  info.operands = T::kAny;
  info.bool_result = true;
  return info;
}
OpInfo Unary(const char* kind, P pto) {
  return {kind, C::kElementwiseUnary, 1, 1, {}, true, pto};
}
// Also on INT32, INT64 and DOUBLE tensors (OperandTypes::kNumeric).
OpInfo Numeric(OpInfo info) {
  info.operands = T::kNumeric;
  return info;
}

// Only on INT32 and INT64 tensors (OperandTypes::kInteger).
OpInfo Integer(OpInfo info) {
  info.operands = T::kInteger;
  return info;
}

// Also on DOUBLE tensors (OperandTypes::kFloatOrDouble).
OpInfo OrDouble(OpInfo info) {
  info.operands = T::kFloatOrDouble;
  return info;
}

OpInfo Reduce(const char* kind, P pto) {
  return {kind, C::kReduce, 1, 1,
          {{"dim", AttrType::kInt}, {"keepdim", AttrType::kBool, false}},
          true, pto};
}

// Views and writes into regions: no arithmetic; they change how later loads
// and stores address GM (view: x[offsets : offsets + shape]; assemble(src,
// dst): dst with the region at offsets replaced by src; transpose swaps
// dim0 and dim1; permute: out dim k is input dim dims[k]; unsqueeze inserts
// a size-1 dim at dim; reshape keeps the elements in row-major order;
// concat joins its inputs (one or more) along dim).
std::vector<OpInfo> LayoutOps() {
  // (A view's and a reshape's shape may be exprs over symbols.)
  const AttrSpec sym_shape{"shape", AttrType::kInts, true, true};
  const AttrSpec sym_offsets{"offsets", AttrType::kInts, true, true};
  const AttrSpec dim{"dim", AttrType::kInt};
  return {
      {"view", C::kLayout, 1, 1, {sym_shape, sym_offsets}, true, P::kTLoad, T::kAny},
      {"assemble", C::kLayout, 2, 1, {sym_offsets}, true, P::kTStore, T::kAny},
      {"transpose", C::kLayout, 1, 1,
       {{"dim0", AttrType::kInt}, {"dim1", AttrType::kInt}}, true, P::kTLoad, T::kAny},
      {"permute", C::kLayout, 1, 1, {{"dims", AttrType::kInts}}, true, P::kTLoad,
       T::kAny},
      {"unsqueeze", C::kLayout, 1, 1, {dim}, true, P::kTLoad, T::kAny},
      {"reshape", C::kLayout, 1, 1, {sym_shape}, true, P::kTLoad, T::kAny},
      {"concat", C::kLayout, -1, 1, {dim}, true, P::kTStore, T::kAny},
  };
}

// Ops addressed by an index tensor (INT32 or INT64; input 1), along attr
// "dim" (negative counts from the end), and sort, which makes one. Each is a group of its own
// (expand_to_tiles.cc AppendIndexing); an index outside [0, size) of the
// dim it addresses reads 0 and writes nothing (the front end checks a
// parameter's indices at launch and raises there).
//   gather(x, index): out[p] = x[p with p[dim] = index[p]] (torch.gather);
//     index has x's rank and is no larger than x in the other dims; out has
//     index's shape and x's dtype.
//   index_select(x, index): index rank 1; out is x with dim's size
//     len(index), out[.., i, ..] = x[.., index[i], ..].
//   scatter(x, index, src): out = x, then for every p of index's shape
//     out[p with p[dim] = index[p]] = src[p] (attr "reduce": "none"; "add"
//     adds, "multiply" multiplies; torch.scatter). src has x's dtype and is
//     no smaller than index; index is no larger than x in the other dims.
//   index_copy(x, index, src) / index_add(x, index, src): index rank 1, src
//     is x with dim's size len(index): out = x, then
//     out[.., index[i], ..] = src[.., i, ..] (index_add: +=).
//   sort(x): the positions (INT64) that sort x along dim, stable (ties in
//     input order), NaN the largest (first with attr "descending", last
//     without; NaNs and -0.0/0.0 tie), cut to the first "k" (1 <= k <=
//     x's size along dim; 0: all of them): out is x with dim's size k
//     (argsort: k 0 or the size; topk: gather x through it). Its MSORT
//     reads whole rows of x; x's size along dim may be symbolic.
// scatter's, index_copy's and index_add's writes land tile by tile (the
// tiles of their space in row-major order, each tile's elements in
// row-major order; with tiles spanning whole rows, the index's row-major
// order): with repeated indices the last write wins.
std::vector<OpInfo> IndexOps() {
  const AttrSpec dim{"dim", AttrType::kInt};
  return {
      {"gather", C::kIndex, 2, 1, {dim}, true, P::kMGather, T::kAny},
      {"index_select", C::kIndex, 2, 1, {dim}, true, P::kMGather, T::kAny},
      {"scatter", C::kIndex, 3, 1, {dim, {"reduce", AttrType::kString, false}}, true,
       P::kMScatter, T::kAny},
      {"index_copy", C::kIndex, 3, 1, {dim}, true, P::kMScatter, T::kAny},
      {"index_add", C::kIndex, 3, 1, {dim}, true, P::kMScatter, T::kNumeric},
      {"sort", C::kIndex, 1, 1,
       {dim, {"k", AttrType::kInt}, {"descending", AttrType::kBool, false}}, true,
       P::kMSort, T::kAny},
  };
}

// Inclusive scans along attr "dim" (negative counts from the end), in
// torch's order and with torch's CPU accumulator (at::acc_type): out[i] =
// out[i - 1] (op) x[i] along dim, the running value DOUBLE for FP32 and
// DOUBLE, FP32 for FP16 and BF16, INT64 (wrapping) for INT32 and INT64,
// each output rounded to the dtype (the result keeps x's shape and dtype;
// torch's integer promotion to INT64 is the front end's cast). Each is a
// group of its own (expand_scan.h): TCUMSUM/TCUMPROD per tile, the tiles
// along dim in order, each seeded by the one before.
std::vector<OpInfo> ScanOps() {
  const AttrSpec dim{"dim", AttrType::kInt};
  return {
      {"cumsum", C::kScan, 1, 1, {dim}, true, P::kTCumSum, T::kNumeric},
      {"cumprod", C::kScan, 1, 1, {dim}, true, P::kTCumProd, T::kNumeric},
  };
}

std::vector<OpInfo>* MakeRegistry() {
  auto* ops = new std::vector<OpInfo>{
      // Tensor with tensor, numpy broadcasting.
      Numeric(Binary("add", P::kTAdd)),
      Numeric(Binary("sub", P::kTSub)),
      Numeric(Binary("mul", P::kTMul)),
      OrDouble(Binary("div", P::kTDiv)),
      OrDouble(Binary("pow", P::kTPow)),
      Numeric(Binary("maximum", P::kTMax)),  // NaN if either is NaN (numpy)
      Numeric(Binary("minimum", P::kTMin)),
      // torch.floor_divide / torch.remainder: floats as torch computes them
      // (fmod plus a correction; the remainder takes the divisor's sign),
      // integers exactly (a zero divisor gives 0, where torch raises).
      Numeric(Binary("floor_divide", P::kTFloorDiv)),
      Numeric(Binary("remainder", P::kTRem)),
      Compare("eq", P::kTCmpEq),
      Compare("ne", P::kTCmpNe),
      Compare("lt", P::kTCmpLt),
      Compare("le", P::kTCmpLe),
      Compare("gt", P::kTCmpGt),
      Compare("ge", P::kTCmpGe),
      // where(cond, a, b): inputs cond (BOOL), a, b; all three broadcast.
      {"where", C::kSelect, 3, 1, {}, true, P::kTSel, T::kAny},
      // Tensor with scalar (the front end records `s - x` as rsubs(x, s),
      // `s < x` as gts(x, s)).
      OrDouble(WithScalar("adds", P::kTAddS)),
      OrDouble(WithScalar("subs", P::kTSubS)),
      OrDouble(WithScalar("muls", P::kTMulS)),
      OrDouble(WithScalar("divs", P::kTDivS)),
      OrDouble(WithScalar("rsubs", P::kTRSubS)),  // scalar - x
      OrDouble(WithScalar("rdivs", P::kTRDivS)),  // scalar / x
      OrDouble(WithScalar("pows", P::kTPowS)),    // x ** scalar
      OrDouble(WithScalar("rpows", P::kTRPowS)),  // scalar ** x
      OrDouble(WithScalar("maximums", P::kTMaxS)),
      OrDouble(WithScalar("minimums", P::kTMinS)),
      CompareScalar("eqs", P::kTCmpEqS),
      CompareScalar("nes", P::kTCmpNeS),
      CompareScalar("lts", P::kTCmpLtS),
      CompareScalar("les", P::kTCmpLeS),
      CompareScalar("gts", P::kTCmpGtS),
      CompareScalar("ges", P::kTCmpGeS),
      // Unary.
      Unary("exp", P::kTExp),
      Unary("exp2", P::kTExp2),
      Unary("expm1", P::kTExpM1),
      Unary("log", P::kTLog),
      Unary("log2", P::kTLog2),
      Unary("log10", P::kTLog10),
      Unary("log1p", P::kTLog1P),
      Unary("sqrt", P::kTSqrt),
      Unary("rsqrt", P::kTRsqrt),
      Unary("reciprocal", P::kTRecip),
      Numeric(Unary("neg", P::kTNeg)),
      Numeric(Unary("abs", P::kTAbs)),
      Unary("relu", P::kTRelu),
      Unary("sigmoid", P::kTSigmoid),
      Unary("tanh", P::kTTanh),
      Unary("erf", P::kTErf),
      Unary("erfc", P::kTErfc),
      Numeric(Unary("sign", P::kTSign)),
      Unary("floor", P::kTFloor),
      Unary("ceil", P::kTCeil),
      Unary("round", P::kTRound),  // half to even (numpy, torch)
      Unary("trunc", P::kTTrunc),
      Unary("sin", P::kTSin),
      Unary("cos", P::kTCos),
      // Computed in double, rounded once to the dtype.
      Unary("tan", P::kTTan),
      Unary("asin", P::kTAsin),
      Unary("acos", P::kTAcos),
      Unary("atan", P::kTAtan),
      Binary("atan2", P::kTAtan2),  // atan2(input, other): the angle of (other, input)
      Unary("sinh", P::kTSinh),
      Unary("cosh", P::kTCosh),
      Unary("asinh", P::kTAsinh),
      Unary("acosh", P::kTAcosh),
      Unary("atanh", P::kTAtanh),
      Unary("cbrt", P::kTCbrt),
      Binary("hypot", P::kTHypot),
      // C fmod (the dividend's sign; integers: a zero divisor gives 0).
      Numeric(Binary("fmod", P::kTFmod)),
      // The sign bit of a float (-0.0, -inf, -NaN: true), DT_BOOL.
      [] {
        OpInfo info = Unary("signbit", P::kTSignbit);
        info.bool_result = true;
        return info;
      }(),
      // Integers (two's complement, torch's shifts).
      Integer(Binary("gcd", P::kTGcd)),
      Integer(Binary("bitwise_and", P::kTAnd)),
      Integer(Binary("bitwise_or", P::kTOr)),
      Integer(Binary("bitwise_xor", P::kTXor)),
      Integer(Unary("bitwise_not", P::kTNot)),
      Integer(Binary("bitwise_left_shift", P::kTShl)),
      Integer(Binary("bitwise_right_shift", P::kTShr)),
      // clip(x, min, max) = minimum(maximum(x, min), max); -inf/inf for an
      // absent bound.
      Numeric({"clip", C::kElementwiseUnary, 1, 1,
               {{"min", AttrType::kFloat, true, true}, {"max", AttrType::kFloat, true, true}},
               true, P::kTClip}),
      // cast(x, dtype): between every supported dtype (torch's rules).
      {"cast", C::kCast, 1, 1, {{"dtype", AttrType::kDType}}, true, P::kTCvt,
       T::kAny},
      // bitcast(x, dtype): each element's bits read as `dtype`, of the same
      // size (torch's x.view(dtype), little-endian; BOOL excluded).
      {"bitcast", C::kCast, 1, 1, {{"dtype", AttrType::kDType}}, true, P::kTReshape,
       T::kAny},
      // Reductions over one dim (attr "dim", negative counts from the end;
      // "keepdim" keeps it as size 1). argmax/argmin give INT64 indices
      // (the first occurrence; NaN counts as the largest, as torch).
      Reduce("sum", P::kTRedSum),
      Reduce("amax", P::kTRedMax),
      Reduce("amin", P::kTRedMin),
      Reduce("prod", P::kTRedProd),
      Reduce("argmax", P::kTRedMax),
      Reduce("argmin", P::kTRedMin),
      // Creation (no inputs): full(shape, value, dtype) (zeros, ones; its
      // shape may be exprs over symbols) and arange: start + step * i along
      // a rank-1 shape.
      {"full", C::kCreate, 0, 1,
       {{"shape", AttrType::kInts, true, true}, {"dtype", AttrType::kDType},
        {"value", AttrType::kFloat, true, true}},
       true, P::kTFill, T::kAny},
      {"arange", C::kCreate, 0, 1,
       {{"shape", AttrType::kInts}, {"dtype", AttrType::kDType},
        {"start", AttrType::kFloat, true, true}, {"step", AttrType::kFloat}},
       true, P::kTArange, T::kAny},
      // philox: the words of Philox4x32-10 blocks (Random123's constants),
      // DT_INT64 values in [0, 2**32) along a rank-1 shape; element e is
      // word e % 4 of the block at counter + e / 4 (a 128-bit sum) under
      // the key. key0, key1 and counter0..counter3 are 32-bit words, low
      // first (integers in [0, 2**32), as floats: the instruction's
      // immediates). pypto.uniform and pypto.normal build on it.
      {"philox", C::kCreate, 0, 1,
       {{"shape", AttrType::kInts}, {"dtype", AttrType::kDType},
        {"key0", AttrType::kFloat}, {"key1", AttrType::kFloat},
        {"counter0", AttrType::kFloat}, {"counter1", AttrType::kFloat},
        {"counter2", AttrType::kFloat}, {"counter3", AttrType::kFloat}},
       true, P::kTPhilox, T::kAny},
      // philox_normal: N(0, 1) values of the same blocks, DT_FP32 along a
      // rank-1 shape: Box-Muller of each block's words in pairs (w0, w1)
      // and (w2, w3), element e z(e % 4) of the block at counter + e / 4
      // (docs/pto-isa.md, TPHILOXNORMAL). pypto.normal's generator.
      {"philox_normal", C::kCreate, 0, 1,
       {{"shape", AttrType::kInts}, {"dtype", AttrType::kDType},
        {"key0", AttrType::kFloat}, {"key1", AttrType::kFloat},
        {"counter0", AttrType::kFloat}, {"counter1", AttrType::kFloat},
        {"counter2", AttrType::kFloat}, {"counter3", AttrType::kFloat}},
       true, P::kTPhiloxNormal, T::kAny},
      // matmul(a, b): [..., M, K] @ [..., K, N] -> [..., M, N] (a_trans:
      // a is [..., K, M]; b_trans: b is [..., N, K]); FP32/FP16/BF16 inputs
      // accumulate in FP32; out_dtype FP32 or the inputs' dtype; batch dims
      // broadcast. With "img2col" (ops/img2col.h: kh, kw, sh, sw, ph, pw,
      // dh, dw) b is a feature map [N, C, H, W] or [N, C, W] read as its im2col matrix
      // [N, G, K, OH * OW] (a conv; the TIMG2COL instruction), a is
      // [G, M, K], neither transposed.
      {"matmul", C::kMatmul, 2, 1,
       {{"out_dtype", AttrType::kDType},
        {"a_trans", AttrType::kBool, false},
        {"b_trans", AttrType::kBool, false},
        {"img2col", AttrType::kInts, false}},
       false, P::kTMatmul},
      // Identity; the front end records `out[:] = param` as a copy.
      {"copy", C::kElementwiseUnary, 1, 1, {}, true, P::kTMov, T::kAny},
      {"clone", C::kElementwiseUnary, 1, 1, {}, true, P::kTMov, T::kAny},
      // Layout ops (compiler/ops/infer_layout.cc, compiler/lower/layout.h).
  };
  for (OpInfo& info : LayoutOps()) ops->push_back(std::move(info));
  for (OpInfo& info : IndexOps()) ops->push_back(std::move(info));
  for (OpInfo& info : ScanOps()) ops->push_back(std::move(info));
  // Control flow (graph.proto "Region"): inputs are the
  // carried tensors, outputs their values after; the regions and their
  // types are checked by the verifier, not by InferSymResult. "start",
  // "stop" and "cond" are an i or an expr.
  ops->push_back({"loop", C::kControl, -1, -1,
                  {{"index", AttrType::kString},
                   {"start", AttrType::kInt, true, true},
                   {"stop", AttrType::kInt, true, true},
                   {"step", AttrType::kInt},
                   {"unroll", AttrType::kInt, false}},
                  false, P::kTMov});
  ops->push_back({"if", C::kControl, -1, -1,
                  {{"cond", AttrType::kInt, true, true}}, false, P::kTMov});
  return ops;
}

}  // namespace

const char* AttrTypeName(AttrType type) {
  switch (type) {
    case AttrType::kInt: return "i";
    case AttrType::kFloat: return "f";
    case AttrType::kString: return "s";
    case AttrType::kBool: return "b";
    case AttrType::kDType: return "dtype";
    case AttrType::kInts: return "ints";
    case AttrType::kExpr: return "expr";
    case AttrType::kExprs: return "exprs";
  }
  return "?";
}

bool AcceptsOperand(OperandTypes types, pto::v1::DataType dtype) {
  const bool float_type = IsFloatComputeDType(dtype);
  const bool int_tile = dtype == pto::v1::DT_INT32 || dtype == pto::v1::DT_INT64;
  switch (types) {
    case OperandTypes::kFloat: return float_type;
    case OperandTypes::kAny: return true;
    // The float types and those with int64 or double UB tiles (INT8, INT16
    // and UINT8 tiles are f32, where a product is not exact).
    case OperandTypes::kNumeric: return float_type || int_tile || dtype == pto::v1::DT_DOUBLE;
    case OperandTypes::kFloatOrDouble: return float_type || dtype == pto::v1::DT_DOUBLE;
    case OperandTypes::kInteger: return int_tile;
  }
  return false;
}

const char* OpCategoryName(OpCategory category) {
  switch (category) {
    case OpCategory::kElementwiseBinary: return "elementwise_binary";
    case OpCategory::kElementwiseScalar: return "elementwise_scalar";
    case OpCategory::kElementwiseUnary: return "elementwise_unary";
    case OpCategory::kSelect: return "select";
    case OpCategory::kCast: return "cast";
    case OpCategory::kReduce: return "reduce";
    case OpCategory::kCreate: return "create";
    case OpCategory::kMatmul: return "matmul";
    case OpCategory::kLayout: return "layout";
    case OpCategory::kIndex: return "index";
    case OpCategory::kScan: return "scan";
    case OpCategory::kControl: return "control";
  }
  return "?";
}

const char* OperandTypesName(OperandTypes types) {
  switch (types) {
    case OperandTypes::kFloat: return "float";
    case OperandTypes::kAny: return "any";
    case OperandTypes::kNumeric: return "numeric";
    case OperandTypes::kFloatOrDouble: return "float_or_double";
    case OperandTypes::kInteger: return "integer";
  }
  return "?";
}

const std::vector<OpInfo>& AllOps() {
  static const std::vector<OpInfo>* ops = MakeRegistry();
  return *ops;
}

const OpInfo* FindOp(absl::string_view kind) {
  for (const OpInfo& info : AllOps()) {
    if (info.kind == kind) return &info;
  }
  return nullptr;
}

}  // namespace pto::compiler
