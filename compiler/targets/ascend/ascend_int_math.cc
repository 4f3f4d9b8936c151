#include "compiler/targets/ascend/ascend_int_math.h"

#include "absl/strings/str_cat.h"

namespace pto::compiler::ascend {
namespace {

// q = trunc(a / b) and r = a - q b (C's / and %), exact for every int32 a
// and nonzero b; MIN / -1 wraps to MIN with r = 0. Garbage where b is 0
// (callers select). q or r may be empty (not wanted); a, b stay intact.
//
// q1 = trunc(fl(a) / fl(b)), the quotient clamped below 2^31 (fl: rounded to
// f32; relative error of the quotient < 3 * 2^-24), r1 = a - q1 b in
// wrapping int32: |r1| = |b| |a/b - q1| < |b| + 2^-22 |a| < 2^31, except for
// |b| > 2^30 where q1 is -1, 0 or 1 and r1 is a or +-(|a| - |b|): r1 is
// exact. q2 = trunc(fl(r1) / fl(b)) (|r1 / b| < 385), q = q1 + q2, r = r1 -
// q2 b: r / b lies in (-1 - 2^-13, 1 + 2^-13), and r is exact as r1 was.
// Then t = r sa (sa = a < 0 ? -1 : 1) is brought into [0, |b|) by two
// rounds of: t < 0: t += |b|, q -= sa sb; else t - |b| >= 0: t -= |b|, q +=
// sa sb (sb = b < 0 ? -1 : 1), each sum exact in wrapping int32 (|b| wraps to
// MIN for b = MIN, and t + MIN, t - MIN are still t +- 2^31 there); then r
// = t sa. MIN / -1: q1 = 2^31 - 128, r1 = -128, q2 = 128, q wraps to MIN.
void TruncDivRem(IntVectorCode& code, const std::string& q, const std::string& r,
                 const std::string& a, const std::string& b) {
  const std::string fa = code.Scratch(1), fb = code.Scratch(2), fq = code.Scratch(3);
  const std::string q1 = code.IntScratchK(2), r1 = code.IntScratchK(3), p = code.IntScratchK(4),
                    s = code.IntScratchK(5), sa = code.IntScratchK(6), ab = code.IntScratchK(7),
                    t = code.IntScratchK(8), k = code.IntScratchK(9), u = code.IntScratchK(10);
  code.Line(Op("TCVT", fa, a, "RoundMode::CAST_RINT"));
  code.Line(Op("TCVT", fb, b, "RoundMode::CAST_RINT"));
  code.Line(Op("TDIV", fq, fa, fb));
  code.Line(Op("TMAXS", fq, fq, "-2147483648.0f"));
  code.Line(Op("TMINS", fq, fq, "2147483520.0f"));
  code.Line(Op("TCVT", q1, fq, "RoundMode::CAST_TRUNC"));
  code.Line(Op("TMUL", p, q1, b));
  code.Line(Op("TSUB", r1, a, p));
  code.Line(Op("TCVT", fa, r1, "RoundMode::CAST_RINT"));
  code.Line(Op("TDIV", fq, fa, fb));
  code.Line(Op("TMAXS", fq, fq, "-1024.0f"));  // (b = 0: inf, NaN)
  code.Line(Op("TMINS", fq, fq, "1024.0f"));
  code.Line(Op("TCVT", p, fq, "RoundMode::CAST_TRUNC"));  // q2
  code.Line(Op("TADD", q1, q1, p));                       // q1 + q2
  code.Line(Op("TMUL", p, p, b));
  code.Line(Op("TSUB", r1, r1, p));  // r
  // sa, sb = (x >> 31) | 1; s = sa sb; ab = max(b, -b).
  code.Line(Op("TEXPANDS", p, "31"));
  code.Line(Op("TSHR", sa, a, p));
  code.Line(Op("TORS", sa, sa, "1"));
  code.Line(Op("TSHR", s, b, p));
  code.Line(Op("TORS", s, s, "1"));
  code.Line(Op("TMUL", s, s, sa));
  code.Line(Op("TNEG", ab, b));
  code.Line(Op("TMAX", ab, ab, b));
  code.Line(Op("TMUL", t, r1, sa));
  code.Line(Op("TEXPANDS", k, "0"));
  for (int round = 0; round < 2; ++round) {
    code.Line(Op("TADD", u, t, ab));
    code.Line(Op("TADDS", p, k, "-1"));
    code.IntSelect(k, t, "LT", "0", p, k);
    code.IntSelect(t, t, "LT", "0", u, t);
    code.Line(Op("TSUB", u, t, ab));  // t - |b|, meaningful where t >= 0
    code.Line(Op("TMIN", p, t, u));
    code.Line(Op("TADDS", r1, k, "1"));
    code.IntSelect(k, p, "GE", "0", r1, k);
    code.IntSelect(t, p, "GE", "0", u, t);
  }
  if (!q.empty()) {
    code.Line(Op("TMUL", k, k, s));
    code.Line(Op("TADD", q, q1, k));
  }
  if (!r.empty()) code.Line(Op("TMUL", r, t, sa));
}

// d = (b == 0) ? 0 : v.
void ZeroWhereDivisorIsZero(IntVectorCode& code, const std::string& d, const std::string& b,
                            const std::string& v) {
  const std::string z = code.IntScratchK(10);
  code.Line(Op("TEXPANDS", z, "0"));
  code.IntSelect(d, b, "EQ", "0", z, v);
}

// floor_divide: q - 1 where r != 0 and r, b differ in sign ((r ^ b) < 0);
// torch's remainder: r + b there (no overflow: opposite signs). A zero
// divisor gives 0.
void FloorDivOrRemainder(IntVectorCode& code, const std::string& d, const std::string& a,
                         const std::string& b, bool quotient) {
  const std::string q = code.IntScratchK(12), r = code.IntScratchK(11),
                    x = code.IntScratchK(2), v = code.IntScratchK(3), w = code.IntScratchK(4);
  TruncDivRem(code, quotient ? q : "", r, a, b);
  code.Line(absl::StrCat("TXOR(", x, ", ", r, ", ", b, ", ", w, ");"));
  if (quotient) {
    code.Line(Op("TADDS", v, q, "-1"));
    code.IntSelect(v, x, "LT", "0", v, q);
    code.IntSelect(v, r, "EQ", "0", q, v);
  } else {
    code.Line(Op("TADD", v, r, b));
    code.IntSelect(v, x, "LT", "0", v, r);
    code.IntSelect(v, r, "EQ", "0", r, v);
  }
  ZeroWhereDivisorIsZero(code, d, b, v);
}

// gcd(|a|, |b|) as the host's: Euclid's loop on the magnitudes (up to 2^31,
// the result wrapped to int32: gcd(MIN, 0) is MIN), carried as their
// negations, -|x| = min(x, -x), which int32 holds for all of them: C's
// remainder of two non-positive numbers is minus the magnitudes' remainder.
// GcdSteps() rounds of (n, m) -> (m % n, n) where n != 0, as a loop in the
// generated code; the result is -m.
void Gcd(IntVectorCode& code, const std::string& d, const std::string& a, const std::string& b) {
  const std::string n = code.IntScratchK(12), m = code.IntScratchK(11),
                    rem = code.IntScratchK(2), next = code.IntScratchK(3);
  code.Line(Op("TNEG", n, a));
  code.Line(Op("TMIN", n, n, a));
  code.Line(Op("TNEG", m, b));
  code.Line(Op("TMIN", m, m, b));
  code.Line(absl::StrCat("for (int step = 0; step < ", GcdSteps(), "; ++step) {"));
  TruncDivRem(code, "", rem, m, n);
  code.IntSelect(next, n, "EQ", "0", m, n);
  code.IntSelect(n, n, "EQ", "0", n, rem);
  code.Line(Op("TADDS", m, next, "0"));
  code.Line("}");
  code.Line(Op("TNEG", d, m));
}

}  // namespace

int GcdSteps() {
  // Consecutive Fibonacci numbers take the most steps (Lame): F(45), F(46)
  // = 1134903170, 1836311903, the largest pair within 2^31, take 45 with
  // the first round's swap; one more to spare.
  return 46;
}

bool IsAscendIntComposition(PtoOpcode op) {
  return op == PtoOpcode::kTFloorDiv || op == PtoOpcode::kTRem || op == PtoOpcode::kTFmod ||
         op == PtoOpcode::kTGcd;
}

void EmitAscendIntComposition(IntVectorCode& code, PtoOpcode op, const std::string& d,
                              const std::string& a, const std::string& b) {
  switch (op) {
    case PtoOpcode::kTFloorDiv: FloorDivOrRemainder(code, d, a, b, true); return;
    case PtoOpcode::kTRem: FloorDivOrRemainder(code, d, a, b, false); return;
    case PtoOpcode::kTFmod: {
      const std::string r = code.IntScratchK(12);
      TruncDivRem(code, "", r, a, b);
      ZeroWhereDivisorIsZero(code, d, b, r);
      return;
    }
    case PtoOpcode::kTGcd: Gcd(code, d, a, b); return;
    default: return;
  }
}

}  // namespace pto::compiler::ascend
