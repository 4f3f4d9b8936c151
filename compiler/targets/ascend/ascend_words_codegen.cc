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
  if (in.op == PtoOpcode::kTRedMax || in.op == PtoOpcode::kTRedMin) return EmitWordsExtremum(in);
  if (PtoIsScan(in.op) || in.op == PtoOpcode::kTRedLast) return EmitWordsScan(in);
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

// TREDMAX/TREDMIN of a full words tile along the last dim (dim 0): a tree
// as TREDPROD's (ascend_int64.h), in the full words shape: while w > 1
// values remain, the value at position p < w - h (h = ceil(w / 2)) takes
// the larger (smaller) of itself and the one at p + h (TGATHER at the
// storage index plus 2h, or h rows), by Int64Words::Less and a select;
// position 0's words are gathered into the result.
absl::Status FunctionEmitter::EmitWordsExtremum(const PtoInstr& in) {
  const int x = in.srcs[0];
  if (kind_[x] != Kind::kFull || elem_[x] != Elem::kWords || elem_[in.dst] != Elem::kWords) {
    return Unsupported(in.op, "of DT_INT64 values other than a full tile into INT64");
  }
  const bool row = in.reduce_dim == rank_ - 1;
  if (kind_[in.dst] == Kind::kFull) {  // one value along the dim
    if ((row ? cols_ : rows_) != 1) return Unsupported(in.op, "of DT_INT64 values into a full tile");
    Line(Op("TADDS", T(in.dst), T(x), "0"));
    return absl::OkStatus();
  }
  const int64_t cols_pad = RoundUp(cols_, kUbAlign / 4), wcols = 2 * cols_pad;
  const int64_t flat = RoundUp(rows_, kUbAlign / 4) * wcols;
  const std::string n = !fn_.runtime_extents
                            ? absl::StrCat(row ? cols_ : rows_)
                            : absl::StrCat("static_cast<int32_t>(", row ? ValidCols() : ValidRows(), ")");
  ascend::Int64Words w(*this, ascend::Int64Shape::kFull);
  const std::string v = w.Tile(16), b = w.Tile(17), pos = w.Tile(14), at = w.Tile(15);
  const std::string fw = WordsF32(ascend::Int64Shape::kFull);
  Line(Op("TADDS", v, T(x), "0"));
  // Each word's position along the dim: its row floor((f + 1/2) / wcols)
  // (exact: f < 2^22), or its value's column (f - row wcols) >> 1.
  Line(Op("TADD", at, w.Even(), w.Parity()));  // f
  Line(Op("TCVT", fw, at, "RoundMode::CAST_RINT"));
  Line(Op("TADDS", fw, fw, "0.5f"));
  Line(Op("TMULS", fw, fw, FloatLiteral(1.0 / static_cast<double>(wcols))));
  Line(Op("TCVT", pos, fw, "RoundMode::CAST_FLOOR"));
  if (row) {
    Line(Op("TMULS", pos, pos, absl::StrCat(wcols)));
    Line(Op("TSUB", pos, at, pos));
    w.Shift("TSHR", pos, pos, 1);
  }
  const bool max = in.op == PtoOpcode::kTRedMax;
  Line(absl::StrCat("for (int32_t w = ", n, "; w > 1; w = (w + 1) / 2) {"));
  Line("  const int32_t h = (w + 1) / 2;");
  Line(Op("TADD", at, w.Even(), w.Parity()));
  Line(Op("TADDS", at, at, row ? "2 * h" : absl::StrCat("h * ", wcols)));
  Line(Op("TMINS", at, at, absl::StrCat(flat - 1)));
  Line(Op("TGATHER", b, v, at));
  // Positions without a partner keep their own value: m = -1 where
  // pos < w - h.
  const std::string keep = w.Tile(13);
  Line(Op("TADDS", keep, pos, "h - w"));
  w.TopBit(keep);
  w.Select(b, keep, b, v);
  const Pair pv = w.Split(v, 9), pb = w.Split(b, 11);
  const std::string m = max ? w.Less(pv, pb, 13) : w.Less(pb, pv, 13);
  w.Select(v, m, b, v);
  Line("}");
  // The result: word f of a row's value reads storage row wcols + (f & 1)
  // (a row tile's words tile: row f >> 3), of a column's f.
  const ascend::Int64Shape s = ShapeOf(kind_[in.dst]);
  const std::string idx = WordsInt(s, 1);
  WordsIndex(s, idx);
  if (s == ascend::Int64Shape::kRow) {
    const std::string parity = WordsInt(s, 2), count = WordsInt(s, 3);
    Line(Op("TANDS", parity, idx, "1"));
    Line(Op("TEXPANDS", count, "3"));
    Line(Op("TSHR", idx, idx, count));
    Line(Op("TMULS", idx, idx, absl::StrCat(wcols)));
    Line(Op("TADD", idx, idx, parity));
  }
  Line(Op("TGATHER", T(in.dst), v, idx));
  return absl::OkStatus();
}

// TCUMSUM/TCUMPROD into INT64 along the last dim (ascend_scan.h's loop in
// the full words shape): the carry's words expanded over its row (TGATHER
// of row tile element row * 8 + (f & 1)), column 0 carry op a, then for
// j = 1 .. cols - 1 the value before (TGATHER at the word's position - 2)
// op a where the value's column >= j (a mask, selected); TREDLAST gathers
// the last valid column's words into the row tile.
absl::Status FunctionEmitter::EmitWordsScan(const PtoInstr& in) {
  const bool last = in.op == PtoOpcode::kTRedLast;
  const bool product = in.op == PtoOpcode::kTCumProd;
  ascend::Int64Words w(*this, ascend::Int64Shape::kFull);
  const std::string d = T(in.dst);
  auto pair_of = [&](int t, int at) -> absl::StatusOr<Pair> {
    if (elem_[t] == Elem::kWords) return w.Split(T(t), at);
    if (kind_[t] != Kind::kFull) {
      return Unsupported(in.op, "of INT64 running values from a row tile of other values");
    }
    if (elem_[t] == Elem::kI32) return w.FromInt32(T(t), at);
    // BOOL, INT8, INT16, UINT8 values: integers in an f32 tile, exact in int32.
    const std::string i = IntTmpK(2);
    Line(Op("TCVT", i, T(t), "RoundMode::CAST_RINT"));
    return w.FromInt32(i, at);
  };
  auto apply = [&](const Pair& acc, const Pair& a) {
    if (product) {
      w.Mul(acc, a);
    } else {
      w.Add(acc, acc, a);
    }
  };
  if (cols_ == 1) {  // one column: the row tiles are full ones (PlanTiles)
    if (last) {
      Line(Op("TADDS", d, T(in.srcs[0]), "0"));
      return absl::OkStatus();
    }
    absl::StatusOr<Pair> a = pair_of(in.srcs[0], 9), c = pair_of(in.srcs[1], 11);
    if (!a.ok()) return a.status();
    if (!c.ok()) return c.status();
    apply(*c, *a);
    w.Join(d, *c);
    return absl::OkStatus();
  }
  if (kind_[in.srcs[0]] != Kind::kFull || kind_[in.dst] != (last ? Kind::kRow : Kind::kFull) ||
      (!last && (kind_[in.srcs[1]] != Kind::kRow || elem_[in.srcs[1]] != Elem::kWords)) ||
      (last && elem_[in.srcs[0]] != Elem::kWords)) {
    return Unsupported(in.op, "of other than a full tile with a row tile's carry");
  }
  const int64_t cols_pad = RoundUp(cols_, kUbAlign / 4), wcols = 2 * cols_pad;
  if (last) {
    const ascend::Int64Shape s = ascend::Int64Shape::kRow;
    const std::string idx = WordsInt(s, 1), parity = WordsInt(s, 2), count = WordsInt(s, 3);
    const std::string valid = fn_.runtime_extents
                                  ? absl::StrCat("static_cast<int32_t>(", ValidCols(), ")")
                                  : absl::StrCat(cols_);
    WordsIndex(s, idx);
    Line(Op("TANDS", parity, idx, "1"));
    Line(Op("TEXPANDS", count, "3"));
    Line(Op("TSHR", idx, idx, count));
    Line(Op("TMULS", idx, idx, absl::StrCat(wcols)));
    Line(Op("TADD", idx, idx, parity));
    Line(Op("TADDS", idx, idx, absl::StrCat("2 * (", valid, " - 1)")));
    Line(Op("TGATHER", d, T(in.srcs[0]), idx));
    return absl::OkStatus();
  }
  // Each word's row (floor((f + 1/2) / wcols)) and value column.
  const std::string row = w.Tile(14), col = w.Tile(15), g = w.Tile(16);
  const std::string fw = WordsF32(ascend::Int64Shape::kFull);
  Line(Op("TADD", col, w.Even(), w.Parity()));  // f
  Line(Op("TCVT", fw, col, "RoundMode::CAST_RINT"));
  Line(Op("TADDS", fw, fw, "0.5f"));
  Line(Op("TMULS", fw, fw, FloatLiteral(1.0 / static_cast<double>(wcols))));
  Line(Op("TCVT", row, fw, "RoundMode::CAST_FLOOR"));
  Line(Op("TMULS", g, row, absl::StrCat(wcols)));
  Line(Op("TSUB", col, col, g));
  w.Shift("TSHR", col, col, 1);
  // The carry over its row: row tile words at row * 8 + (f & 1).
  Line(Op("TMULS", g, row, absl::StrCat(ascend::kRowWordsCols)));
  Line(Op("TADD", g, g, w.Parity()));
  const Pair c{w.Tile(11), w.Tile(12)};
  const std::string carry = row;  // (the row index no longer needed)
  Line(Op("TGATHER", carry, T(in.srcs[1]), g));
  absl::StatusOr<Pair> a = pair_of(in.srcs[0], 9);
  if (!a.ok()) return a.status();
  Line(Op("TGATHER", c.lo, carry, w.Even()));
  Line(Op("TGATHER", c.hi, carry, w.Tile(3)));
  apply(c, *a);
  w.Join(d, c);
  Line(absl::StrCat("for (int32_t j = 1; j < ", cols_, "; ++j) {"));
  // The value before: words at the low word's position - 2 and - 1
  // (clamped at 0; column 0 never takes it).
  Line(Op("TADDS", g, w.Even(), "-2"));
  Line(Op("TMAXS", g, g, "0"));
  Line(Op("TGATHER", c.lo, d, g));
  Line(Op("TADDS", g, g, "1"));
  Line(Op("TGATHER", c.hi, d, g));
  apply(c, *a);
  w.Join(g, c);
  // Where col >= j: (j - 1 - col) < 0.
  const std::string m = w.Tile(13);
  Line(absl::StrCat("TMULS(", m, ", ", col, ", -1);"));
  Line(Op("TADDS", m, m, "j - 1"));
  w.TopBit(m);
  w.Select(d, m, g, d);
  Line("}");
  return absl::OkStatus();
}

}  // namespace pto::compiler::ascend
