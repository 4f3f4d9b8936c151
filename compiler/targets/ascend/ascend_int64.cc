#include "compiler/targets/ascend/ascend_int64.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/targets/ascend/ascend_int64_arith.h"
#include "compiler/targets/ascend/ascend_math.h"

namespace pto::compiler::ascend {
namespace {

// The most values a sum's f32 byte sums stay exact over: 255 n <= 2^24.
constexpr int64_t kMaxSummed = (int64_t{1} << 24) / 255;

std::string Str(int64_t v) { return absl::StrCat(v); }

// d = a >> n (arithmetic) or a << n over int32 tiles, the count in `count`
// (a tile of a's shape: the CPU simulation has no scalar shift).
void Shift(Int64Code& code, const char* op, const std::string& d, const std::string& a,
           int n, const std::string& count) {
  code.Line(Op("TEXPANDS", count, Str(n)));
  code.Line(Op(op, d, a, count));
}

// The source's low and high words in full int32 tiles (words sources:
// TGATHER of storage elements 2i and 2i + 1 for element i).
struct Words {
  std::string lo, hi;
};
Words SplitWords(Int64Code& code, const Int64Reduction& r) {
  const Words w{code.IntScratchK(4), code.IntScratchK(5)};
  const std::string i = code.IntScratchK(6);
  code.FullIndex(i);
  code.Line(Op("TMULS", i, i, "2"));
  code.Line(Op("TGATHER", w.lo, r.src, i));
  code.Line(Op("TADDS", i, i, "1"));
  code.Line(Op("TGATHER", w.hi, r.src, i));
  return w;
}

// The words tile's gather index (element f reads storage element
// (f >> shift) * mul of its value's tile) and the word's parity f & 1.
void WordsGatherIndex(Int64Code& code, Int64Shape s, int64_t mul, const std::string& idx,
                      const std::string& parity) {
  const std::string count = code.WordsInt(s, 3);
  code.WordsIndex(s, idx);
  code.Line(Op("TANDS", parity, idx, "1"));
  Shift(code, "TSHR", idx, idx, s == Int64Shape::kRow ? 3 : 1, count);
  if (mul != 1) code.Line(Op("TMULS", idx, idx, Str(mul)));
}

// dst = lo + (hi - lo) * parity: the low word at even positions, the high
// one at odd ones (wrapping int32 arithmetic, exact bits). hi is clobbered.
void JoinWords(Int64Code& code, const std::string& dst, const std::string& lo,
               const std::string& hi, const std::string& parity) {
  code.Line(Op("TSUB", hi, hi, lo));
  code.Line(Op("TMUL", hi, hi, parity));
  code.Line(Op("TADD", dst, lo, hi));
}

// The sum along the dim of byte k of each value into the f32 tile `sum`
// of the result's shape (exact: |sum| <= 255 n < 2^24).
void SumByte(Int64Code& code, const Int64Reduction& r, const Words* w, int k,
             const std::string& sum) {
  const std::string part = code.IntScratchK(2), count = code.IntScratchK(7);
  const std::string fpart = code.Scratch(2);
  const std::string& word = w == nullptr ? r.src : k < 4 ? w->lo : w->hi;
  const int byte = k % 4;
  if (byte == 0) {
    code.Line(Op("TANDS", part, word, "255"));
  } else {
    Shift(code, "TSHR", part, word, 8 * byte, count);
    // INT32's top byte keeps its sign; INT64's bytes are all unsigned (the
    // sum wraps modulo 2^64, where the top byte's sign does not matter).
    if (w != nullptr || byte < 3) code.Line(Op("TANDS", part, part, "255"));
  }
  code.Line(Op("TCVT", fpart, part, "RoundMode::CAST_RINT"));
  code.Line(r.along_row ? absl::StrCat("TROWSUM(", sum, ", ", fpart, ", ", code.Scratch(1), ");")
                        : Op("TCOLSUM", sum, fpart));
}

// Sum: K byte sums s_k (K = 4 for INT32, 8 for INT64), carried from the
// lowest: t_0 = s_0, t_k = s_k + (t_(k-1) >> 8) (|t_k| < 2^25), byte e_k =
// t_k & 255 below the top; the value is sum_k e_k 2^(8k) + t_(K-1)
// 2^(8(K-1)): INT32's low word e_0 + e_1 2^8 + e_2 2^16 + t_3 2^24 (mod
// 2^32) and high word t_3 >> 8 (the value's floor division by 2^32, as
// e_0..e_2 < 2^24), INT64's words e_0..e_3 and e_4..e_6 plus t_7 2^24 (mod
// 2^64, torch's wrap). Computed in the words tile's shape, both words of a
// value alike until they are joined.
void EmitSum(Int64Code& code, const Int64Reduction& r) {
  const Int64Shape s = r.result;
  const std::string idx = code.WordsInt(s, 1), parity = code.WordsInt(s, 2),
                    count = code.WordsInt(s, 3), lo = code.WordsInt(s, 4),
                    hi = code.WordsInt(s, 5), t = code.WordsInt(s, 6), sk = code.WordsInt(s, 7),
                    e = code.WordsInt(s, 8), fw = code.WordsF32(s);
  WordsGatherIndex(code, s, 1, idx, parity);
  Words split;
  if (r.words) split = SplitWords(code, r);
  const int limbs = r.words ? 8 : 4;
  const std::string sum = code.ReducedF32(s);
  for (int k = 0; k < limbs; ++k) {
    SumByte(code, r, r.words ? &split : nullptr, k, sum);
    code.Line(Op("TGATHER", fw, sum, idx));
    code.Line(Op("TCVT", sk, fw, "RoundMode::CAST_RINT"));
    if (k == 0) {
      code.Line(Op("TADDS", t, sk, "0"));
    } else {
      Shift(code, "TSHR", e, t, 8, count);
      code.Line(Op("TADD", t, sk, e));
    }
    if (k == limbs - 1) break;
    const std::string& into = k < 4 ? lo : hi;
    if (k % 4 == 0) {
      code.Line(Op("TANDS", into, t, "255"));
    } else {
      code.Line(Op("TANDS", e, t, "255"));
      Shift(code, "TSHL", e, e, 8 * (k % 4), count);
      code.Line(Op("TADD", into, into, e));
    }
  }
  Shift(code, "TSHL", e, t, 24, count);
  if (limbs == 4) {
    code.Line(Op("TADD", lo, lo, e));
    Shift(code, "TSHR", hi, t, 8, count);
  } else {
    code.Line(Op("TADD", hi, hi, e));
  }
  JoinWords(code, r.dst, lo, hi, parity);
}

// Prod: the limbs (INT32 sign-extended: x & 65535, (x >> 16) & 65535, and
// twice (x >> 31) & 65535; INT64: the words' halves), then while w > 1
// values remain along the dim, each position p < w - h (h = ceil(w / 2))
// times the one at p + h (TGATHER at the storage index plus h, or h rows),
// the others times 1 (TCMPS of the position, TSEL); the product ends at
// position 0, whose words are gathered into the result.
void EmitProd(Int64Code& code, const Int64Reduction& r) {
  const std::vector<std::string> a = {code.IntScratchK(8), code.IntScratchK(9),
                                      code.IntScratchK(10), code.IntScratchK(11)};
  const std::string b = code.IntScratchK(12), count = code.IntScratchK(7);
  Words split;
  if (r.words) split = SplitWords(code, r);
  auto half = [&](const std::string& d, const std::string& x, int shift) {
    if (shift == 0) {
      code.Line(Op("TANDS", d, x, "65535"));
      return;
    }
    Shift(code, "TSHR", d, x, shift, count);
    code.Line(Op("TANDS", d, d, "65535"));
  };
  if (r.words) {
    half(a[0], split.lo, 0);
    half(a[1], split.lo, 16);
    half(a[2], split.hi, 0);
    half(a[3], split.hi, 16);
  } else {
    half(a[0], r.src, 0);
    half(a[1], r.src, 16);
    half(a[2], r.src, 31);
    code.Line(Op("TADDS", a[3], a[2], "0"));
  }
  // Each element's position along the dim: its row floor((i + 1/2) /
  // cols8) (exact: i < 2^22), or its column i - row cols8.
  const std::string i = code.IntScratchK(6), pos = code.IntScratchK(18),
                    at = code.IntScratchK(17), one = code.IntScratchK(19);
  const std::string fi = code.Scratch(2);
  code.FullIndex(i);
  code.Line(Op("TCVT", fi, i, "RoundMode::CAST_RINT"));
  code.Line(Op("TADDS", fi, fi, "0.5f"));
  code.Line(Op("TMULS", fi, fi, FloatLiteral(1.0 / static_cast<double>(r.cols_pad))));
  code.Line(Op("TCVT", pos, fi, "RoundMode::CAST_FLOOR"));
  if (r.along_row) {
    code.Line(Op("TMULS", pos, pos, Str(r.cols_pad)));
    code.Line(Op("TSUB", pos, i, pos));
  }
  const std::string step = r.along_row ? "h" : absl::StrCat("h * ", r.cols_pad);
  code.Line(absl::StrCat("for (int32_t w = ", r.n, "; w > 1; w = (w + 1) / 2) {"));
  code.Line("  const int32_t h = (w + 1) / 2;");
  code.Line(Op("TADDS", at, i, step));
  code.Line(Op("TMINS", at, at, Str(r.flat - 1)));
  MulLimbs(
      code, a,
      [&](int j) {
        code.Line(Op("TGATHER", b, a[j], at));
        code.Line(Op("TEXPANDS", one, j == 0 ? "1" : "0"));
        code.IntSelect(b, pos, "LT", "w - h", b, one);
        return b;
      },
      code.IntScratchK(2), code.IntScratchK(3), code.IntScratchK(7),
      {code.IntScratchK(13), code.IntScratchK(14), code.IntScratchK(15), code.IntScratchK(16)});
  code.Line("}");
  // lo = a0 + a1 2^16, hi = a2 + a3 2^16 (wrapping), gathered from position
  // 0 of each row (column).
  const Int64Shape s = r.result;
  const std::string lo = a[0], hi = a[2];
  Shift(code, "TSHL", a[1], a[1], 16, count);
  code.Line(Op("TADD", lo, lo, a[1]));
  Shift(code, "TSHL", a[3], a[3], 16, count);
  code.Line(Op("TADD", hi, hi, a[3]));
  const std::string idx = code.WordsInt(s, 1), parity = code.WordsInt(s, 2),
                    wlo = code.WordsInt(s, 4), whi = code.WordsInt(s, 5);
  WordsGatherIndex(code, s, s == Int64Shape::kRow ? r.cols_pad : 1, idx, parity);
  code.Line(Op("TGATHER", wlo, lo, idx));
  code.Line(Op("TGATHER", whi, hi, idx));
  JoinWords(code, r.dst, wlo, whi, parity);
}

}  // namespace

absl::Status EmitInt64Reduction(Int64Code& code, const Int64Reduction& r) {
  if (r.op == PtoOpcode::kTRedSum) {
    if (r.n_max > kMaxSummed) {
      return absl::UnimplementedError(absl::StrCat(
          "into DT_INT64 over ", r.n_max, " values along the dim: its f32 byte sums are "
          "exact for up to ", kMaxSummed, " (255 n <= 2^24)"));
    }
    EmitSum(code, r);
    return absl::OkStatus();
  }
  if (r.op == PtoOpcode::kTRedProd) {
    EmitProd(code, r);
    return absl::OkStatus();
  }
  return absl::InternalError("EmitInt64Reduction: not TREDSUM or TREDPROD");
}

}  // namespace pto::compiler::ascend
