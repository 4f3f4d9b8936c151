// FunctionEmitter's INT64 values computed on (ascend_function_emitter.h):
// instructions on words tiles (ascend_int64.h), through the word-pair
// arithmetic of ascend_int64_arith.h. TREDSUM and TREDPROD into INT64 are
// EmitInt64Reduce's (ascend_int_codegen.cc).
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/targets/ascend/ascend_function_emitter.h"
#include "compiler/targets/ascend/ascend_int64_arith.h"
#include "compiler/targets/ascend/ascend_math.h"

namespace pto::compiler::ascend {
namespace {

using Pair = ascend::Int64Words::Pair;

ascend::Int64Shape ShapeOf(Kind k) {
  return k == Kind::kRow   ? ascend::Int64Shape::kRow
         : k == Kind::kCol ? ascend::Int64Shape::kCol
                           : ascend::Int64Shape::kFull;
}

// An int32 value as a C++ expression (INT32_MIN has no literal).
std::string Int32Literal(int32_t v) {
  return v == INT32_MIN ? "(-2147483647 - 1)" : absl::StrCat(v);
}

}  // namespace

bool FunctionEmitter::UsesWords(const PtoInstr& in) const {
  if (in.dst >= 0 && elem_[in.dst] == Elem::kWords) return true;
  for (int s : in.srcs) {
    if (elem_[s] == Elem::kWords) return true;
  }
  return false;
}

absl::StatusOr<std::pair<std::string, std::string>> FunctionEmitter::Int64ScalarWords(
    const PtoInstr& in, size_t j) const {
  const int dynamic = j < in.scalar_dynamic.size() ? in.scalar_dynamic[j] : -1;
  if (dynamic >= 0) {
    const std::string v = absl::StrCat("args[", rank_ + dynamic, "]");
    return std::make_pair(absl::StrCat("static_cast<int32_t>(static_cast<uint32_t>(", v, "))"),
                          absl::StrCat("static_cast<int32_t>(", v, " >> 32)"));
  }
  const double v = j < in.scalars.size() ? in.scalars[j] : 0.0;
  if (v != std::floor(v) || v < -0x1p63 || v >= 0x1p63) {
    return Unsupported(in.op, absl::StrCat("of DT_INT64 values with the scalar ", v,
                                           " (not an int64 value)"));
  }
  const int64_t i = static_cast<int64_t>(v);
  return std::make_pair(Int32Literal(static_cast<int32_t>(static_cast<uint32_t>(i))),
                        Int32Literal(static_cast<int32_t>(i >> 32)));
}

absl::Status FunctionEmitter::EmitWordsCompute(const PtoInstr& in) {
  const bool into_words = elem_[in.dst] == Elem::kWords;
  // Elementwise: every tile of one shape (a full result from row tiles is
  // not mapped), computed in the words shape of it.
  const Kind kind = kind_[in.dst];
  for (int s : in.srcs) {
    if (kind_[s] != kind) {
      return Unsupported(in.op, "of DT_INT64 values mixing row and full tiles");
    }
  }
  ascend::Int64Words w(*this, ShapeOf(kind));
  // Operand k's pair into scratch `at`, at + 1.
  auto operand = [&](int k, int at) -> absl::StatusOr<Pair> {
    const int t = in.srcs[k];
    if (elem_[t] == Elem::kWords) return w.Split(T(t), at);
    if (kind != Kind::kFull) {
      return Unsupported(in.op, "of DT_INT64 values from a row tile of other values");
    }
    if (elem_[t] == Elem::kI32) return w.FromInt32(T(t), at);
    if (elem_[t] == Elem::kF32 && in.op == PtoOpcode::kTCvt) return WordsFromF32(w, t, at);
    return Unsupported(in.op, "of DT_INT64 values from an int64 tile");
  };
  if (Compares(in.op)) return EmitWordsCompare(in, w);
  if (!into_words) {
    if (in.op != PtoOpcode::kTCvt) {
      return Unsupported(in.op, absl::StrCat("of DT_INT64 values into DT_",
                                             pto::v1::DataType_Name(in.dtype).substr(3)));
    }
    if (elem_[in.dst] == Elem::kI32 && kind == Kind::kFull) {  // the low word: INT32's wrap
      const std::string i = IntTmpK(2), x = T(in.srcs[0]);
      FullIndex(i);
      Line(Op("TMULS", i, i, "2"));
      Line(Op("TGATHER", T(in.dst), x, i));
      return absl::OkStatus();
    }
    return Unsupported(in.op, absl::StrCat("of DT_INT64 values to ",
                                           pto::v1::DataType_Name(in.dtype),
                                           " (the target converts INT64 to INT32 only)"));
  }
  const std::string d = T(in.dst);
  switch (in.op) {
    case PtoOpcode::kTFill: {
      absl::StatusOr<std::pair<std::string, std::string>> c = Int64ScalarWords(in, 0);
      if (!c.ok()) return c.status();
      w.Join(d, w.Constant(c->first, c->second, 9));
      return absl::OkStatus();
    }
    case PtoOpcode::kTMov:
      Line(Op("TADDS", d, T(in.srcs[0]), "0"));
      return absl::OkStatus();
    case PtoOpcode::kTCvt: {
      if (elem_[in.srcs[0]] == Elem::kWords) {
        Line(Op("TADDS", d, T(in.srcs[0]), "0"));
        return absl::OkStatus();
      }
      absl::StatusOr<Pair> a = operand(0, 9);
      if (!a.ok()) return a.status();
      w.Join(d, *a);
      return absl::OkStatus();
    }
    default:
      break;
  }
  absl::StatusOr<Pair> a = operand(0, 9);
  if (!a.ok()) return a.status();
  Pair b;
  switch (in.op) {
    case PtoOpcode::kTAdd: case PtoOpcode::kTSub: case PtoOpcode::kTMul:
    case PtoOpcode::kTMax: case PtoOpcode::kTMin: {
      absl::StatusOr<Pair> s = operand(1, 11);
      if (!s.ok()) return s.status();
      b = *s;
      break;
    }
    case PtoOpcode::kTAddS: case PtoOpcode::kTSubS: case PtoOpcode::kTMulS:
    case PtoOpcode::kTMaxS: case PtoOpcode::kTMinS: case PtoOpcode::kTRSubS: {
      absl::StatusOr<std::pair<std::string, std::string>> c = Int64ScalarWords(in, 0);
      if (!c.ok()) return c.status();
      b = w.Constant(c->first, c->second, 11);
      break;
    }
    case PtoOpcode::kTNeg: case PtoOpcode::kTAbs:
      b = w.Constant("0", "0", 11);
      break;
    default:
      return Unsupported(in.op, "of DT_INT64 values has no PTO-ISA mapping in this target yet");
  }
  switch (in.op) {
    case PtoOpcode::kTAdd: case PtoOpcode::kTAddS:
      w.Add(*a, *a, b);
      break;
    case PtoOpcode::kTSub: case PtoOpcode::kTSubS:
      w.Sub(*a, *a, b);
      break;
    case PtoOpcode::kTRSubS: case PtoOpcode::kTNeg:
      w.Sub(*a, b, *a);
      break;
    case PtoOpcode::kTMul: case PtoOpcode::kTMulS:
      w.Mul(*a, b);
      break;
    case PtoOpcode::kTMax: case PtoOpcode::kTMaxS: case PtoOpcode::kTMin: case PtoOpcode::kTMinS:
    case PtoOpcode::kTAbs: {
      // max: b where a < b; min: b where b < a; abs: -a where a < 0.
      const bool max = in.op == PtoOpcode::kTMax || in.op == PtoOpcode::kTMaxS;
      const bool abs = in.op == PtoOpcode::kTAbs;
      const std::string m = max ? w.Less(*a, b, 13) : w.Less(abs ? *a : b, abs ? b : *a, 13);
      if (abs) w.Sub(b, b, *a);
      w.Select(a->lo, m, b.lo, a->lo);
      w.Select(a->hi, m, b.hi, a->hi);
      break;
    }
    default:
      break;
  }
  w.Join(d, *a);
  return absl::OkStatus();
}

// A comparison of INT64 values (a words tile with another, or with an
// INT64 scalar) into 1.0/0.0 in a full f32 tile: a mask in the words shape
// (Int64Words::Less, Equal), its low words' gathered (TGATHER at 2i) and
// converted. With an immediate scalar s: x < s is x < ceil(s), x <= s is
// x < floor(s) + 1, x > s and x >= s the negations of those; a threshold
// beyond int64 gives all or nothing, a NaN scalar false (NE true).
absl::Status FunctionEmitter::EmitWordsCompare(const PtoInstr& in, ascend::Int64Words& w) {
  if (kind_[in.dst] != Kind::kFull) return Unsupported(in.op, "into a row tile");
  std::string mode;
  switch (in.op) {
    case PtoOpcode::kTCmpEq: case PtoOpcode::kTCmpEqS: mode = "EQ"; break;
    case PtoOpcode::kTCmpNe: case PtoOpcode::kTCmpNeS: mode = "NE"; break;
    case PtoOpcode::kTCmpLt: case PtoOpcode::kTCmpLtS: mode = "LT"; break;
    case PtoOpcode::kTCmpLe: case PtoOpcode::kTCmpLeS: mode = "LE"; break;
    case PtoOpcode::kTCmpGt: case PtoOpcode::kTCmpGtS: mode = "GT"; break;
    default: mode = "GE"; break;
  }
  const std::string d = T(in.dst);
  auto pair_of = [&](int t, int at) -> absl::StatusOr<Pair> {
    if (elem_[t] == Elem::kWords) return w.Split(T(t), at);
    if (elem_[t] == Elem::kI32) return w.FromInt32(T(t), at);
    return Unsupported(in.op, "of DT_INT64 values with an f32 tile");
  };
  absl::StatusOr<Pair> a = pair_of(in.srcs[0], 9);
  if (!a.ok()) return a.status();
  Pair b;
  bool swap = mode == "GT" || mode == "LE";  // a > b is b < a; a <= b is !(b < a)
  if (in.srcs.size() == 2) {
    absl::StatusOr<Pair> s = pair_of(in.srcs[1], 11);
    if (!s.ok()) return s.status();
    b = *s;
  } else if (!in.scalar_dynamic.empty() && in.scalar_dynamic[0] >= 0) {
    absl::StatusOr<std::pair<std::string, std::string>> c = Int64ScalarWords(in, 0);
    if (!c.ok()) return c.status();
    b = w.Constant(c->first, c->second, 11);
  } else {
    const double s = in.scalars[0];
    auto constant = [&](bool v) {
      Line(absl::StrCat("TEXPANDS(", d, ", ", v ? "1.0f" : "0.0f", ");"));
      return absl::OkStatus();
    };
    if (std::isnan(s)) return constant(mode == "NE");
    double c = s;
    if (mode != "EQ" && mode != "NE") {
      c = mode == "LT" || mode == "GE" ? std::ceil(s) : std::floor(s) + 1;
      // x < c or its negation (GE, and GT as !(x < floor(s) + 1)).
      mode = mode == "LT" || mode == "LE" ? "LT" : "GE";
      swap = false;
      if (c >= 0x1p63) return constant(mode == "LT");
      if (c <= -0x1p63) return constant(mode == "GE");
    } else if (s != std::floor(s) || s < -0x1p63 || s >= 0x1p63) {
      return constant(mode == "NE");
    }
    const int64_t i = static_cast<int64_t>(c);
    b = w.Constant(Int32Literal(static_cast<int32_t>(static_cast<uint32_t>(i))),
                   Int32Literal(static_cast<int32_t>(i >> 32)), 11);
  }
  std::string m;
  if (mode == "EQ" || mode == "NE") {
    m = w.Equal(*a, b, 13);
  } else {
    m = swap ? w.Less(b, *a, 13) : w.Less(*a, b, 13);
  }
  if (mode == "NE" || mode == "GE" || mode == "LE") Line(Op("TNOT", m, m));
  // The mask at each value's low word, 1 or 0, as f32.
  const std::string i = IntTmpK(2), bit = IntTmpK(3);
  FullIndex(i);
  Line(Op("TMULS", i, i, "2"));
  Line(Op("TGATHER", bit, m, i));
  Line(Op("TANDS", bit, bit, "1"));
  Line(Op("TCVT", d, bit, "RoundMode::CAST_RINT"));
  return absl::OkStatus();
}

// FP32 (and BOOL, INT8, INT16, UINT8 in f32) to INT64 as the host converts:
// toward zero, NaN and values beyond int64 giving INT64_MIN. |x| < 2^31:
// TCVT CAST_TRUNC to int32, sign-extended. Beyond, x is an integer: its
// high word floor(x 2^-32) (TCVT CAST_FLOOR: exact within int32 for |x| <
// 2^63) and its low word x - hi 2^32 in [0, 2^32) (exact in f32: x's own
// low bits), less 2^31 (exact) converted and wrapped back by adding
// INT32_MIN. The three cases chosen by masks from |x| (TCMPS, TSEL), in
// full tiles; the words gathered into the words shape.
absl::StatusOr<ascend::Int64Words::Pair> FunctionEmitter::WordsFromF32(ascend::Int64Words& w,
                                                                       int t, int at) {
  const std::string x = T(t);
  const std::string small = IntTmpK(2), lo = IntTmpK(3), hi = IntTmpK(4), m = IntTmpK(5),
                    x2 = IntTmpK(6);
  const std::string ax = Scratch(2), f = Scratch(3), one = Scratch(4), zero = Scratch(5);
  Line(Op("TCVT", small, x, "RoundMode::CAST_TRUNC"));
  Line(Op("TMULS", f, x, FloatLiteral(0x1p-32)));
  Line(Op("TCVT", hi, f, "RoundMode::CAST_FLOOR"));
  Line(Op("TCVT", f, hi, "RoundMode::CAST_RINT"));
  Line(Op("TMULS", f, f, FloatLiteral(0x1p32)));
  Line(Op("TSUB", f, x, f));
  Line(Op("TADDS", f, f, FloatLiteral(-0x1p31)));
  Line(Op("TCVT", lo, f, "RoundMode::CAST_RINT"));
  Line(Op("TADDS", lo, lo, Int32Literal(INT32_MIN)));
  // m = -1 where |x| < 2^31: the int32 conversion's words instead.
  Line(Op("TABS", ax, x));
  Line(Op("TEXPANDS", one, "-1.0f"));
  Line(Op("TEXPANDS", zero, "0.0f"));
  Select(f, ax, "LT", FloatLiteral(0x1p31), one, zero);
  Line(Op("TCVT", m, f, "RoundMode::CAST_RINT"));
  auto select = [&](const std::string& dst, const std::string& a) {  // dst = m ? a : dst
    Line(absl::StrCat("TXOR(", x2, ", ", a, ", ", dst, ", ", IntTmpK(7), ");"));
    Line(Op("TAND", x2, x2, m));
    Line(absl::StrCat("TXOR(", dst, ", ", dst, ", ", x2, ", ", IntTmpK(7), ");"));
  };
  select(lo, small);
  Line(Op("TEXPANDS", IntTmpK(8), "31"));
  Line(Op("TSHR", small, small, IntTmpK(8)));
  select(hi, small);
  // NaN and |x| >= 2^63: INT64_MIN's words.
  Select(f, ax, "LT", FloatLiteral(0x1p63), zero, one);
  Line(Op("TCVT", m, f, "RoundMode::CAST_RINT"));
  Line(Op("TEXPANDS", small, "0"));
  select(lo, small);
  Line(Op("TEXPANDS", small, Int32Literal(INT32_MIN)));
  select(hi, small);
  const Pair v{w.Tile(at), w.Tile(at + 1)};
  const std::string idx = w.Tile(7);  // each word's value: f >> 1
  w.Shift("TSHR", idx, w.Even(), 1);
  Line(Op("TGATHER", v.lo, lo, idx));
  Line(Op("TGATHER", v.hi, hi, idx));
  return v;
}

}  // namespace pto::compiler::ascend
