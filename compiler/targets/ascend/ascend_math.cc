#include "compiler/targets/ascend/ascend_math.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pto::compiler::ascend {
namespace {

std::string F(double v) { return FloatLiteral(v); }

// d = EmitRoundIntegral(x), a zero result with x's sign (floor(-0.0),
// ceil(-0.5), round(-0.4), trunc(-0.7) are -0.0: a sum of opposite values
// is +0). Scratch 1 to 3.
void RoundIntegral(VectorCode& code, const std::string& d, const std::string& x,
                   const char* mode) {
  const std::string r = code.Scratch(1), f = code.Scratch(2), z = code.Scratch(3);
  code.Line(Op("TMULS", z, x, "0.0f"));  // the zero of x's sign
  EmitRoundIntegral(code, d, x, mode, r, f);
  code.Line(Op("TABS", r, d));
  code.Select(d, r, "LE", "0.0f", z, d);
}

// d = x where x is +-0 (its sign kept: sin, tan, tanh, log1p of -0.0 are
// -0.0, where their sums give +0), else v. Scratch a (not x).
void KeepZeros(VectorCode& code, const std::string& d, const std::string& x,
               const std::string& v, const std::string& a) {
  code.Line(Op("TABS", a, x));
  code.Select(d, a, "LE", "0.0f", x, v);
}

// p = c[0] z^n + c[1] z^(n-1) + ... + c[n] (Horner; p distinct from z).
void Horner(VectorCode& code, const std::string& p, const std::string& z,
            const std::vector<double>& c) {
  code.Line(Op("TEXPANDS", p, F(c[0])));
  for (size_t k = 1; k < c.size(); ++k) {
    code.Line(Op("TMUL", p, p, z));
    code.Line(Op("TADDS", p, p, F(c[k])));
  }
}

// log1p: u = 1 + x; log(u) + c / max(u, FLT_MIN), c = x - (min(u, 2^24) -
// 1) capped at 1: what rounding 1 + x lost (exactly x where u == 1; 0 where
// u == 0, so log1p(-1) is -inf; from 2^24 on 1, so c / u is 1/u,
// log1p(1/x)'s first term, and 0 at +inf). A few ulp; +inf at +inf.
// Scratch 1, 2 (d not one of them).
void Log1p(VectorCode& code, const std::string& d, const std::string& x) {
  const std::string u = code.Scratch(1), c = code.Scratch(2);
  code.Line(Op("TADDS", u, x, "1.0f"));
  code.Line(Op("TMINS", c, u, "16777216.0f"));
  code.Line(Op("TADDS", c, c, "-1.0f"));
  code.Line(Op("TSUB", c, x, c));
  code.Line(Op("TMINS", c, c, "1.0f"));
  code.Line(Op("TLOG", d, u));
  code.Line(Op("TMAXS", u, u, F(0x1p-126)));
  code.Line(Op("TDIV", c, c, u));
  code.Line(Op("TADD", d, d, c));
}

// tanh: a = sign(x) (1 - e) / (1 + e), e = exp(-2 |x|), accurate where
// |x| >= 0.25 (1 - e cancels below); b = xc + xc z P(z), xc = x clamped to
// +-0.3125, z = xc^2, P tanh's Taylor series to x^11 (truncation < 1e-8
// relative there); tanh = b + w (a - b), w = clamp(16 (|x| - 0.25), 0, 1);
// a zero x itself (KeepZeros). A few ulp. Scratch 1 to 4.
void Tanh(VectorCode& code, const std::string& d, const std::string& x) {
  const std::string a = code.Scratch(1), xc = code.Scratch(2), z = code.Scratch(3),
                    p = code.Scratch(4);
  code.Line(Op("TABS", a, x));
  code.Line(Op("TMULS", a, a, "-2.0f"));
  code.Line(Op("TEXP", a, a));
  code.Line(Op("TADDS", z, a, "1.0f"));
  code.Line(Op("TNEG", a, a));
  code.Line(Op("TADDS", a, a, "1.0f"));
  code.Line(Op("TDIV", a, a, z));
  EmitSign(code, xc, x);
  code.Line(Op("TMUL", a, a, xc));
  code.Line(Op("TMAXS", xc, x, "-0.3125f"));
  code.Line(Op("TMINS", xc, xc, "0.3125f"));
  code.Line(Op("TMUL", z, xc, xc));
  Horner(code, p, z,
         {-1382.0 / 155925.0, 62.0 / 2835.0, -17.0 / 315.0, 2.0 / 15.0, -1.0 / 3.0});
  code.Line(Op("TMUL", p, p, z));
  code.Line(Op("TMUL", p, p, xc));
  code.Line(Op("TADD", p, p, xc));  // b
  code.Line(Op("TSUB", a, a, p));   // a - b
  code.Line(Op("TABS", z, x));
  code.Line(Op("TADDS", z, z, "-0.25f"));
  code.Line(Op("TMULS", z, z, "16.0f"));
  code.Line(Op("TMAXS", z, z, "0.0f"));
  code.Line(Op("TMINS", z, z, "1.0f"));  // w
  code.Line(Op("TMUL", a, a, z));
  code.Line(Op("TADD", p, p, a));
  KeepZeros(code, d, x, p, a);
}

// exp2(x) = e * s * e with n = rint(clamp(x, +-200)), e = exp(n ln2_hi / 2)
// (ln2_hi = 0.693359375: n ln2_hi / 2 is exact) and s = exp(n ln2_lo + (x -
// n) ln2) (ln2_lo = ln 2 - ln2_hi, the argument small): the argument's
// rounding does not grow with x as exp(x ln 2)'s does. Within 4 ulp;
// overflow and underflow where 2^x does; NaN stays NaN. Scratch 1 to 4.
void Exp2(VectorCode& code, const std::string& d, const std::string& x) {
  const std::string n = code.Scratch(1), f = code.Scratch(2), e = code.Scratch(3),
                    s = code.Scratch(4);
  constexpr double kLn2Hi = 0.693359375;
  code.Line(Op("TMAXS", e, x, "-200.0f"));
  code.Line(Op("TMINS", e, e, "200.0f"));
  EmitRoundIntegral(code, n, e, "CAST_RINT", f, s);
  code.Line(Op("TSUB", f, x, n));
  code.Line(Op("TMULS", e, n, F(kLn2Hi / 2)));
  code.Line(Op("TEXP", e, e));
  code.Line(Op("TMULS", n, n, F(std::log(2.0) - kLn2Hi)));
  code.Line(Op("TMULS", f, f, F(std::log(2.0))));
  code.Line(Op("TADD", s, n, f));
  code.Line(Op("TEXP", s, s));
  code.Line(Op("TMUL", d, e, s));
  code.Line(Op("TMUL", d, d, e));
}

// expm1: |x| < 0.5: xc + xc^2/2! + ... + xc^11/11! (Horner, truncation
// below 2e-10 relative); elsewhere exp(x) - 1 (the cancellation at most
// 2.6x). Within 3 ulp; -1 at -inf, NaN stays NaN. Scratch 1 to 4.
void Expm1(VectorCode& code, const std::string& d, const std::string& x) {
  const std::string a = code.Scratch(1), xc = code.Scratch(2), p = code.Scratch(3),
                    ax = code.Scratch(4);
  code.Line(Op("TEXP", a, x));
  code.Line(Op("TADDS", a, a, "-1.0f"));
  code.Line(Op("TMAXS", xc, x, "-0.5f"));
  code.Line(Op("TMINS", xc, xc, "0.5f"));
  std::vector<double> c;
  double fact = 1;
  for (int k = 1; k <= 11; ++k) fact *= k;
  for (int k = 11; k >= 1; --k) {  // 1/11!, ..., 1/1!
    c.push_back(1.0 / fact);
    fact /= k;
  }
  Horner(code, p, xc, c);
  code.Line(Op("TMUL", p, p, xc));
  code.Line(Op("TABS", ax, x));
  code.Select(d, ax, "LT", "0.5f", p, a);
}

// sin, cos, tan: k = rint(x 2/pi); r = x - k pi/2 in three parts
// (Cody-Waite: k * part exact for |k| < 2^16), |r| <= pi/4; sin r = r + r
// z S(z), cos r = 1 - z/2 + z^2 C(z), z = r^2 (Cephes' sinf/cosf minimax
// polynomials); sin, cos: quadrant q = (k [+ 1 for cos]) mod 4 picks sin r,
// cos r, -sin r, -cos r; tan: sin r / cos r for an even k, -cos r / sin r
// for an odd one. sin, cos within 2 ulp, tan within 3, plus the
// reduction's absolute error (about |x| 2^-40) for |x| < 10^5; NaN for
// infinities and NaN; sin and tan of a zero are the zero (KeepZeros).
// Scratch 1 to 8.
enum class Trig { kSin, kCos, kTan };
void SinCosTan(VectorCode& code, const std::string& d, const std::string& x, Trig fn) {
  const std::string k = code.Scratch(1), r = code.Scratch(2), z = code.Scratch(3),
                    q = code.Scratch(4), s = code.Scratch(5), c = code.Scratch(6),
                    t = code.Scratch(7);
  constexpr double kP1 = 1.5703125, kP2 = 4.837512969970703125e-4;
  const double kP3 = M_PI / 2 - kP1 - kP2;
  code.Line(Op("TMULS", t, x, F(2.0 / M_PI)));
  EmitRoundIntegral(code, k, t, "CAST_RINT", r, z);
  code.Line(Op("TMULS", r, k, F(-kP1)));
  code.Line(Op("TADD", r, x, r));
  code.Line(Op("TMULS", t, k, F(-kP2)));
  code.Line(Op("TADD", r, r, t));
  code.Line(Op("TMULS", t, k, F(-kP3)));
  code.Line(Op("TADD", r, r, t));
  // q = k' - m floor(k' / m): k' = k (+ 1 for cos), m = 4; tan: k, m = 2.
  const bool tan = fn == Trig::kTan;
  if (fn == Trig::kCos) code.Line(Op("TADDS", k, k, "1.0f"));
  code.Line(Op("TMULS", t, k, tan ? "0.5f" : "0.25f"));
  EmitRoundIntegral(code, q, t, "CAST_FLOOR", s, c);
  code.Line(Op("TMULS", q, q, tan ? "-2.0f" : "-4.0f"));
  code.Line(Op("TADD", q, k, q));
  code.Line(Op("TMUL", z, r, r));
  Horner(code, s, z, {-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1});
  code.Line(Op("TMUL", s, s, z));
  code.Line(Op("TMUL", s, s, r));
  code.Line(Op("TADD", s, s, r));  // sin r
  Horner(code, c, z, {2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2});
  code.Line(Op("TMUL", c, c, z));
  code.Line(Op("TMUL", c, c, z));
  code.Line(Op("TMULS", t, z, "-0.5f"));
  code.Line(Op("TADD", c, c, t));
  code.Line(Op("TADDS", c, c, "1.0f"));  // cos r
  if (tan) {
    const std::string odd = code.Scratch(8);
    code.Line(Op("TDIV", t, s, c));
    code.Line(Op("TDIV", odd, c, s));
    code.Line(Op("TNEG", odd, odd));
    code.Select(t, q, "GT", "0.5f", odd, t);
    KeepZeros(code, d, x, t, odd);
    return;
  }
  // sg = -sign(q - 1.5): +1 for q in {0, 1}, -1 for {2, 3}; q + sg - 1 is
  // q mod 2.
  code.Line(Op("TADDS", t, q, "-1.5f"));
  EmitSign(code, t, t);
  code.Line(Op("TNEG", t, t));
  code.Line(Op("TADD", q, q, t));
  code.Line(Op("TADDS", q, q, "-1.0f"));
  code.Select(k, q, "GT", "0.5f", c, s);
  if (fn == Trig::kCos) {
    code.Line(Op("TMUL", d, k, t));
    return;
  }
  code.Line(Op("TMUL", k, k, t));
  KeepZeros(code, d, x, k, t);
}

// atan: a = |x| reduced to u = a (a <= tan(pi/8)), (a - 1) / (a + 1) plus
// pi/4 (a <= tan(3pi/8)), -1/a plus pi/2 (beyond); u + u z P(z), z = u^2
// (Cephes' atanf polynomial), times sign(x). Within 3 ulp; +-pi/2 at the
// infinities, NaN stays NaN. Scratch 1 to 5 (x may be any of them).
void Atan(VectorCode& code, const std::string& d, const std::string& x) {
  const std::string a = code.Scratch(1), r1 = code.Scratch(2), u = code.Scratch(3),
                    off = code.Scratch(4), w = code.Scratch(5);
  const std::string lo = F(std::tan(M_PI / 8)), hi = F(std::tan(3 * M_PI / 8));
  code.Line(Op("TABS", a, x));
  code.Line(Op("TDIVS", r1, "-1.0f", a));
  code.Line(Op("TADDS", u, a, "-1.0f"));
  code.Line(Op("TADDS", w, a, "1.0f"));
  code.Line(Op("TDIV", u, u, w));
  code.Select(u, a, "GT", lo, u, a);
  code.Select(u, a, "GT", hi, r1, u);
  code.Line(Op("TEXPANDS", off, F(M_PI / 4)));
  code.Line(Op("TEXPANDS", w, "0.0f"));
  code.Select(off, a, "GT", lo, off, w);
  code.Line(Op("TEXPANDS", w, F(M_PI / 2)));
  code.Select(off, a, "GT", hi, w, off);
  EmitSign(code, a, x);  // a: sign(x) from here
  code.Line(Op("TMUL", w, u, u));
  Horner(code, r1, w, {8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1,
                       -3.33329491539e-1});
  code.Line(Op("TMUL", r1, r1, w));
  code.Line(Op("TMUL", r1, r1, u));
  code.Line(Op("TADD", r1, r1, u));
  code.Line(Op("TADD", r1, r1, off));
  code.Line(Op("TMUL", d, r1, a));
}

// atan2(y, x) = atan(y / x) (y / x taken as y where y is +-0, and as
// clamp(y) / clamp(x), +-1, where both are infinite; clamp to +-FLT_MAX),
// plus +-pi (in two parts, the sign of y's, -0 and -inf included) where x's
// sign bit is set (min(x, 1/x) < 0); NaN where x is NaN. Within 3 ulp; C's values at zeros and infinities
// (+-pi/4, +-3pi/4 for two infinities). Scratch 1 to 10.
void Atan2(VectorCode& code, const std::string& d, const std::string& y, const std::string& x) {
  const std::string q = code.Scratch(6), xs = code.Scratch(7), ys = code.Scratch(8),
                    p = code.Scratch(9), e = code.Scratch(10);
  const double pi_hi = static_cast<float>(M_PI);
  const std::string big = F(0x1.fffffep127), inf = F(INFINITY);
  code.Line(Op("TDIV", q, y, x));
  code.Line(Op("TABS", xs, y));
  code.Select(q, xs, "LE", "0.0f", y, q);
  code.Line(Op("TMAXS", p, y, F(-0x1.fffffep127)));
  code.Line(Op("TMINS", p, p, big));
  code.Line(Op("TMAXS", e, x, F(-0x1.fffffep127)));
  code.Line(Op("TMINS", e, e, big));
  code.Line(Op("TDIV", p, p, e));
  code.Select(p, xs, "GE", inf, p, q);
  code.Line(Op("TABS", xs, x));
  code.Select(q, xs, "GE", inf, p, q);
  code.Select(q, x, "LE", inf, q, x);  // NaN where x is NaN (y +-0 too)
  Atan(code, q, q);
  // The sign bits of x and y: min(v, 1/v) < 0 (-0 and -inf too).
  code.Line(Op("TDIVS", xs, "1.0f", x));
  code.Line(Op("TMIN", xs, xs, x));
  code.Line(Op("TDIVS", ys, "1.0f", y));
  code.Line(Op("TMIN", ys, ys, y));
  code.Line(Op("TEXPANDS", p, F(pi_hi)));
  code.Line(Op("TEXPANDS", e, F(-pi_hi)));
  code.Select(p, ys, "LT", "0.0f", e, p);
  code.Line(Op("TMULS", e, p, F((M_PI - pi_hi) / pi_hi)));
  code.Line(Op("TADD", e, q, e));
  code.Line(Op("TADD", e, e, p));
  code.Select(d, xs, "LT", "0.0f", e, q);
}

// asin(x) = atan(x / sqrt((1 - |x|)(1 + |x|))): 1 - |x| exact from 1/2 on;
// within 4 ulp; +-pi/2 at +-1, NaN beyond. Scratch 1 to 7.
void Asin(VectorCode& code, const std::string& d, const std::string& x) {
  const std::string a = code.Scratch(6), b = code.Scratch(7);
  code.Line(Op("TABS", a, x));
  code.Line(Op("TADDS", b, a, "1.0f"));
  code.Line(Op("TNEG", a, a));
  code.Line(Op("TADDS", a, a, "1.0f"));
  code.Line(Op("TMUL", a, a, b));
  code.Line(Op("TSQRT", a, a));
  code.Line(Op("TDIV", a, x, a));
  Atan(code, d, a);
}

// acos(x) = 2 atan(sqrt((1 - x) / (1 + x))): within 4 ulp; pi at -1, NaN
// beyond +-1. Scratch 1 to 7.
void Acos(VectorCode& code, const std::string& d, const std::string& x) {
  const std::string a = code.Scratch(6), b = code.Scratch(7);
  code.Line(Op("TNEG", a, x));
  code.Line(Op("TADDS", a, a, "1.0f"));
  code.Line(Op("TADDS", b, x, "1.0f"));
  code.Line(Op("TDIV", a, a, b));
  code.Line(Op("TSQRT", a, a));
  Atan(code, a, a);
  code.Line(Op("TMULS", d, a, "2.0f"));
}

// h = exp(|x| / 2); e^|x| / 2 = (h / 2) h, e^-|x| / 2 = (1/2 / h) / h, so
// nothing overflows before the result does. Scratch a, b, h (distinct).
void HalfExps(VectorCode& code, const std::string& a, const std::string& b, const std::string& h,
              const std::string& x) {
  code.Line(Op("TABS", h, x));
  code.Line(Op("TMULS", h, h, "0.5f"));
  code.Line(Op("TEXP", h, h));
  code.Line(Op("TMULS", a, h, "0.5f"));
  code.Line(Op("TMUL", a, a, h));
  code.Line(Op("TDIVS", b, "0.5f", h));
  code.Line(Op("TDIV", b, b, h));
}

// sinh: for |x| < 1 its Taylor series to x^13 (truncation below 1e-12
// relative), else sign(x) (e^|x| - e^-|x|) / 2 (HalfExps; the difference
// loses at most a factor 1.16). Within 3 ulp; +-inf at the infinities.
// Scratch 1 to 5.
void Sinh(VectorCode& code, const std::string& d, const std::string& x) {
  const std::string a = code.Scratch(1), b = code.Scratch(2), h = code.Scratch(3),
                    xc = code.Scratch(4), p = code.Scratch(5);
  HalfExps(code, a, b, h, x);
  code.Line(Op("TSUB", a, a, b));
  EmitSign(code, b, x);
  code.Line(Op("TMUL", a, a, b));
  code.Line(Op("TMAXS", xc, x, "-1.0f"));
  code.Line(Op("TMINS", xc, xc, "1.0f"));
  code.Line(Op("TMUL", b, xc, xc));
  std::vector<double> c;
  for (int k = 13; k >= 3; k -= 2) {
    double fact = 1;
    for (int j = 2; j <= k; ++j) fact *= j;
    c.push_back(1.0 / fact);
  }
  Horner(code, p, b, c);
  code.Line(Op("TMUL", p, p, b));
  code.Line(Op("TMUL", p, p, xc));
  code.Line(Op("TADD", p, p, xc));
  code.Line(Op("TABS", h, x));
  code.Select(d, h, "LT", "1.0f", p, a);
}

// cosh = (e^|x| + e^-|x|) / 2 (HalfExps). Within 3 ulp. Scratch 1 to 3.
void Cosh(VectorCode& code, const std::string& d, const std::string& x) {
  const std::string a = code.Scratch(1), b = code.Scratch(2), h = code.Scratch(3);
  HalfExps(code, a, b, h, x);
  code.Line(Op("TADD", d, a, b));
}

// asinh = sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); from |x| = 2^12
// on, sign(x) (log|x| + ln 2). Within 2 ulp. Scratch 1 to 5.
void Asinh(VectorCode& code, const std::string& d, const std::string& x) {
  const std::string a = code.Scratch(3), t = code.Scratch(4), s = code.Scratch(5);
  code.Line(Op("TABS", a, x));
  code.Line(Op("TMUL", t, a, a));
  code.Line(Op("TADDS", s, t, "1.0f"));
  code.Line(Op("TSQRT", s, s));
  code.Line(Op("TADDS", s, s, "1.0f"));
  code.Line(Op("TDIV", t, t, s));
  code.Line(Op("TADD", t, t, a));
  Log1p(code, t, t);
  code.Line(Op("TLOG", s, a));
  code.Line(Op("TADDS", s, s, F(std::log(2.0))));
  code.Select(t, a, "GE", "4096.0f", s, t);
  EmitSign(code, s, x);
  code.Line(Op("TMUL", d, t, s));
}

// acosh = log1p(t + sqrt(t (t + 2))), t = x - 1 (exact up to x = 2); from
// x = 2^12 on, log x + ln 2. Within 3 ulp; NaN below 1. Scratch 1 to 5.
void Acosh(VectorCode& code, const std::string& d, const std::string& x) {
  const std::string t = code.Scratch(3), u = code.Scratch(4), l = code.Scratch(5);
  code.Line(Op("TADDS", t, x, "-1.0f"));
  code.Line(Op("TADDS", u, t, "2.0f"));
  code.Line(Op("TMUL", u, u, t));
  code.Line(Op("TSQRT", u, u));
  code.Line(Op("TADD", u, u, t));
  Log1p(code, u, u);
  code.Line(Op("TLOG", l, x));
  code.Line(Op("TADDS", l, l, F(std::log(2.0))));
  code.Select(d, x, "GE", "4096.0f", l, u);
}

// atanh = sign(x) log1p(2|x| / (1 - |x|)) / 2: within 2 ulp; +-inf at
// +-1, NaN beyond. Scratch 1 to 4.
void Atanh(VectorCode& code, const std::string& d, const std::string& x) {
  const std::string a = code.Scratch(3), b = code.Scratch(4);
  code.Line(Op("TABS", a, x));
  code.Line(Op("TNEG", b, a));
  code.Line(Op("TADDS", b, b, "1.0f"));
  code.Line(Op("TMULS", a, a, "2.0f"));
  code.Line(Op("TDIV", a, a, b));
  Log1p(code, a, a);
  code.Line(Op("TMULS", a, a, "0.5f"));
  EmitSign(code, b, x);
  code.Line(Op("TMUL", d, a, b));
}

// cbrt: y = sign(x) exp(log|x| / 3) (error about |ln x| / 3 ulp), then one
// Newton step y + (x / y^2 - y) / 3 (the error squared, plus the step's
// roundings): within 1 ulp. Zeros, infinities and NaN pass through.
// Scratch 1 to 3.
void Cbrt(VectorCode& code, const std::string& d, const std::string& x) {
  const std::string a = code.Scratch(1), y = code.Scratch(2), t = code.Scratch(3);
  code.Line(Op("TABS", a, x));
  code.Line(Op("TLOG", y, a));
  code.Line(Op("TMULS", y, y, F(1.0 / 3)));
  code.Line(Op("TEXP", y, y));
  EmitSign(code, t, x);
  code.Line(Op("TMUL", y, y, t));
  code.Line(Op("TMUL", t, y, y));
  code.Line(Op("TDIV", t, x, t));
  code.Line(Op("TSUB", t, t, y));
  code.Line(Op("TMULS", t, t, F(1.0 / 3)));
  code.Line(Op("TADD", t, y, t));
  code.Select(t, a, "GT", "0.0f", t, x);
  code.Select(d, a, "LT", F(INFINITY), t, x);
}

// hypot = m sqrt(1 + (n / m)^2), m = max(|x|, |y|), n = min: within 2
// ulp, nothing overflows before the result does; 0 where m is 0; +inf where either is
// infinite (NaN or not), else NaN where either is NaN. Scratch 1 to 5.
void Hypot(VectorCode& code, const std::string& d, const std::string& x, const std::string& y) {
  const std::string ax = code.Scratch(1), ay = code.Scratch(2), m = code.Scratch(3),
                    n = code.Scratch(4), z = code.Scratch(5);
  code.Line(Op("TABS", ax, x));
  code.Line(Op("TABS", ay, y));
  code.Line(Op("TMAX", m, ax, ay));
  code.Line(Op("TMIN", n, ax, ay));
  code.Line(Op("TDIV", n, n, m));
  code.Line(Op("TMUL", n, n, n));
  code.Line(Op("TADDS", n, n, "1.0f"));
  code.Line(Op("TSQRT", n, n));
  code.Line(Op("TMUL", n, n, m));
  code.Select(n, m, "GT", "0.0f", n, m);
  code.Line(Op("TADD", z, ax, ay));  // 0, or NaN where either is NaN
  code.Line(Op("TMULS", z, z, "0.0f"));
  code.Line(Op("TADD", n, n, z));
  code.Select(n, ax, "GE", F(INFINITY), ax, n);
  code.Select(d, ay, "GE", F(INFINITY), ay, n);
  code.Line(Op("TADDS", d, d, "0.0f"));  // +0 (the CPU simulation's TABS keeps -0.0)
}

// erfc(|x|) = t exp(P(t) - x^2), t = 1 / (1 + |x| / 2), P Numerical
// Recipes' erfcc Chebyshev fit (fractional error < 1.2e-7); erfc(x) = 2 -
// erfc(|x|) for x < 0. erf: for |x| < 0.5 its Taylor series to x^13
// (relative, truncation below 1e-9), else sign(x) (1 - erfc(|x|)). Within
// 4 ulp relative plus 2^-23 absolute (the reference's bound for both);
// +-1, 0 and 2 at the infinities, NaN stays NaN. Scratch 1 to 5.
void ErfErfc(VectorCode& code, const std::string& d, const std::string& x, bool erfc) {
  const std::string ax = code.Scratch(1), t = code.Scratch(2), p = code.Scratch(3),
                    y = code.Scratch(4), w = code.Scratch(5);
  code.Line(Op("TABS", ax, x));
  code.Line(Op("TMULS", t, ax, "0.5f"));
  code.Line(Op("TADDS", t, t, "1.0f"));
  code.Line(Op("TDIVS", t, "1.0f", t));
  Horner(code, p, t,
         {0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806,
          0.09678418, 0.37409196, 1.00002368, -1.26551223});
  code.Line(Op("TMUL", y, ax, ax));
  code.Line(Op("TSUB", p, p, y));
  code.Line(Op("TEXP", p, p));
  code.Line(Op("TMUL", p, p, t));  // erfc(|x|)
  if (erfc) {
    code.Line(Op("TNEG", y, p));
    code.Line(Op("TADDS", y, y, "2.0f"));
    code.Select(d, x, "LT", "0.0f", y, p);
    return;
  }
  code.Line(Op("TNEG", p, p));
  code.Line(Op("TADDS", p, p, "1.0f"));
  EmitSign(code, y, x);
  code.Line(Op("TMUL", p, p, y));  // sign(x) (1 - erfc(|x|))
  // 2/sqrt(pi) (x - x^3/3 + x^5/10 - ...): the k-th term (-1)^k / (k! (2k + 1)).
  code.Line(Op("TMAXS", w, x, "-0.5f"));
  code.Line(Op("TMINS", w, w, "0.5f"));
  code.Line(Op("TMUL", t, w, w));
  std::vector<double> c;
  for (int k = 6; k >= 0; --k) {
    double fact = 1;
    for (int j = 2; j <= k; ++j) fact *= j;
    c.push_back((k % 2 ? -1.0 : 1.0) * 2.0 / std::sqrt(M_PI) / (fact * (2 * k + 1)));
  }
  Horner(code, y, t, c);
  code.Line(Op("TMUL", y, y, w));
  code.Select(d, ax, "LT", "0.5f", y, p);
}

// hi + lo == a exactly, hi with 12 significant bits (Veltkamp: hi = k - (k
// - a), k = 4097 a; |a| below 2^116). Scratch k.
void Split(VectorCode& code, const std::string& hi, const std::string& lo, const std::string& a,
           const std::string& k) {
  code.Line(Op("TMULS", k, a, "4097.0f"));
  code.Line(Op("TSUB", hi, k, a));
  code.Line(Op("TSUB", hi, k, hi));
  code.Line(Op("TSUB", lo, a, hi));
}

// m = 1 - 4 |c/2 - rint(c/2)|, c = b clamped to +-2^25: -1 for an odd
// integer b, 1 for an even one (+-inf too: C's pow(-a, +-inf) is
// pow(a, +-inf)); NaN where b is not an integer. pow's sign for a negative
// base. Scratch h, t, r, f (distinct from m and b).
void ParityFactor(VectorCode& code, const std::string& m, const std::string& b,
                  const std::string& h, const std::string& t, const std::string& r,
                  const std::string& f) {
  code.Line(Op("TMAXS", h, b, F(-0x1p25)));
  code.Line(Op("TMINS", h, h, F(0x1p25)));  // c
  code.Line(Op("TMULS", m, h, "0.5f"));
  EmitRoundIntegral(code, t, m, "CAST_RINT", r, f);
  code.Line(Op("TSUB", t, m, t));
  code.Line(Op("TABS", t, t));
  code.Line(Op("TMULS", m, t, "-4.0f"));
  code.Line(Op("TADDS", m, m, "1.0f"));
  EmitRoundIntegral(code, t, h, "CAST_RINT", r, f);
  code.Line(Op("TSUB", t, h, t));
  code.Line(Op("TABS", t, t));
  code.Line(Op("TEXPANDS", r, "__builtin_nanf(\"\")"));
  code.Select(m, t, "GT", "0.0f", r, m);
}

// ph + pl == a b exactly (Dekker's product of Split halves; |a|, |b| below
// 2^116, no underflow in the partial products). Scratch a1, a2, b1, b2, k.
void TwoProduct(VectorCode& code, const std::string& ph, const std::string& pl,
                const std::string& a, const std::string& b, const std::string& a1,
                const std::string& a2, const std::string& b1, const std::string& b2,
                const std::string& k) {
  Split(code, a1, a2, a, k);
  Split(code, b1, b2, b, k);
  code.Line(Op("TMUL", ph, a, b));
  code.Line(Op("TMUL", pl, a1, b1));
  code.Line(Op("TSUB", pl, pl, ph));
  code.Line(Op("TMUL", k, a1, b2));
  code.Line(Op("TADD", pl, pl, k));
  code.Line(Op("TMUL", k, a2, b1));
  code.Line(Op("TADD", pl, pl, k));
  code.Line(Op("TMUL", k, a2, b2));
  code.Line(Op("TADD", pl, pl, k));
}

// log x as lh + ll, for x finite and positive (callers clamp): x is scaled
// by 2^-+64 where it is beyond 2^+-60 (exactly; e0 the exponent that
// undoes it), then by 2^-k, k = rint(TLOG(x) / ln 2), into m in about
// [0.7, 1.42]: 2^-k is TEXP(-k ln 2) rounded to two significant bits
// (Veltkamp: 2^-k exactly, TEXP's error being far below a bit), so the
// scaling is exact and so is f = m - 1. log m = 2 atanh(s), s = f / (2 +
// f) carried as sh + sl (2 + f as qh + ql, the division's remainder from
// Dekker's product): 2 sh + 2 sl + 2 sh^3 P(sh^2), P atanh's series to
// s^12 (truncation below 2^-36 for |s| <= 0.172), plus sl's share of the
// cubic term (2 sl sh^2). k' = k + e0 times ln 2 in
// three parts (16, 16 and 24 significant bits: k' c1 and k' c2 exact).
// The sum k' c1 + 2 sh is exact as a Fast2Sum pair; the small terms are
// added to its low part, then lh + ll by Fast2Sum. Error: the cubic
// term's roundings, about 2^-31 absolute where |log x| >= 0.35 and 2^-30
// relative below. lh, ll and scratch: 1 to 7, 9 to 13 (not 8).
void ExtendedLog(VectorCode& code, const std::string& lh, const std::string& ll,
                 const std::string& x) {
  const std::string m = code.Scratch(1), sc = code.Scratch(2), t = code.Scratch(3),
                    e0 = code.Scratch(4), k = code.Scratch(5), p = code.Scratch(6),
                    u = code.Scratch(7), v = code.Scratch(9), w = code.Scratch(10),
                    a2 = code.Scratch(11), b1 = code.Scratch(12), b2 = code.Scratch(13);
  constexpr double kLn2 = 0.69314718055994530942;
  auto bits = [](double v, int n) {
    int e = 0;
    const double mant = std::frexp(v, &e);
    return std::ldexp(std::rint(std::ldexp(mant, n)), e - n);
  };
  const double c1 = bits(kLn2, 16), c2 = bits(kLn2 - c1, 16), c3 = kLn2 - c1 - c2;
  code.Line(Op("TMULS", m, x, "1.0f"));
  code.Line(Op("TEXPANDS", sc, "1.0f"));
  code.Line(Op("TEXPANDS", e0, "0.0f"));
  code.Line(Op("TEXPANDS", t, F(0x1p64)));
  code.Select(sc, m, "LT", F(0x1p-60), t, sc);
  code.Line(Op("TEXPANDS", t, "-64.0f"));
  code.Select(e0, m, "LT", F(0x1p-60), t, e0);
  code.Line(Op("TEXPANDS", t, F(0x1p-64)));
  code.Select(sc, m, "GT", F(0x1p60), t, sc);
  code.Line(Op("TEXPANDS", t, "64.0f"));
  code.Select(e0, m, "GT", F(0x1p60), t, e0);
  code.Line(Op("TMUL", m, m, sc));  // exact
  code.Line(Op("TLOG", t, m));
  code.Line(Op("TMULS", t, t, F(1 / kLn2)));
  EmitRoundIntegral(code, k, t, "CAST_RINT", p, u);
  code.Line(Op("TMULS", p, k, F(-kLn2)));
  code.Line(Op("TEXP", p, p));
  code.Line(Op("TMULS", u, p, "4194305.0f"));  // 2^22 + 1: two bits kept
  code.Line(Op("TSUB", v, u, p));
  code.Line(Op("TSUB", p, u, v));  // 2^-k
  code.Line(Op("TMUL", m, m, p));  // exact
  code.Line(Op("TADD", k, k, e0));  // k'
  code.Line(Op("TADDS", m, m, "-1.0f"));  // f, exact
  // sh = f / qh; sl = ((f - ph) - pl - sh ql) / qh, ph + pl = sh qh.
  const std::string qh = sc, ql = e0, sh = t, sl = p;
  code.Line(Op("TADDS", qh, m, "2.0f"));
  code.Line(Op("TADDS", ql, qh, "-2.0f"));
  code.Line(Op("TSUB", ql, m, ql));
  code.Line(Op("TDIV", sh, m, qh));
  TwoProduct(code, u, v, sh, qh, w, a2, b1, b2, sl);
  code.Line(Op("TSUB", m, m, u));
  code.Line(Op("TSUB", m, m, v));
  code.Line(Op("TMUL", u, sh, ql));
  code.Line(Op("TSUB", m, m, u));
  code.Line(Op("TDIV", sl, m, qh));
  // The cubic term 2 sh^3 P(sh^2) into u.
  code.Line(Op("TMUL", v, sh, sh));
  Horner(code, u, v, {1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3});
  code.Line(Op("TMUL", u, u, v));
  code.Line(Op("TMUL", u, u, sh));
  code.Line(Op("TMULS", u, u, "2.0f"));
  // sl's share of it: the cubic term's derivative, 2 s^2 / (1 - s^2), times
  // sl (the 1 - s^2 dropped: below 2^-40 of the term).
  code.Line(Op("TMUL", v, v, sl));
  code.Line(Op("TMULS", v, v, "2.0f"));
  code.Line(Op("TADD", u, u, v));
  // hi = k' c1 + 2 sh (Fast2Sum: k' c1 is 0 or the larger), lo its error.
  code.Line(Op("TMULS", w, k, F(c1)));
  code.Line(Op("TMULS", sh, sh, "2.0f"));
  code.Line(Op("TADD", qh, w, sh));
  code.Line(Op("TSUB", v, qh, w));
  code.Line(Op("TSUB", v, sh, v));
  code.Line(Op("TMULS", sl, sl, "2.0f"));
  code.Line(Op("TMULS", w, k, F(c3)));
  code.Line(Op("TADD", sl, sl, w));
  code.Line(Op("TMULS", w, k, F(c2)));
  code.Line(Op("TADD", sl, sl, w));
  code.Line(Op("TADD", sl, sl, u));
  code.Line(Op("TADD", v, v, sl));  // lo
  code.Line(Op("TADD", lh, qh, v));
  code.Line(Op("TSUB", w, lh, qh));
  code.Line(Op("TSUB", ll, v, w));
}

// pow(a, b) = m exp(b log|a|), m = 1 for a >= +0, else (a's sign bit set:
// min(a, 1/a) < 0) ParityFactor(b); 1 where b == 0, a == 1, or |a| == 1 and
// b is infinite. For finite non-zero a
// and finite b, b log|a| is carried in two floats as PowOfConstant's
// x ln|c| is: log|a| as ExtendedLog's lh + ll, b (clamped to +-2^100,
// beyond which |b log|a|| overflows exp anyway where a != 1) times lh as
// Dekker's exact product, plus b ll; yh + yl by Fast2Sum; e + e yl, e =
// TEXP(yh) (e itself where it is infinite). Error: exp's rounding, the last
// two operations' and |b| times ExtendedLog's: within 3 ulp
// (ascend_accuracy_test's sweeps). A zero, infinite or NaN a or b takes
// TEXP(b TLOG(|a|)); with m (-0.0 and -inf as +0 and +inf for a non-integer
// b) and the cases of 1, C's pow for every special value. Scratch 1 to 7
// and 9 to 16 (a and b may be scratch 8).
void Pow(VectorCode& code, const std::string& d, const std::string& a, const std::string& b) {
  const std::string y = code.Scratch(14), g = code.Scratch(15), lh = code.Scratch(16),
                    ll = code.Scratch(9);
  {
    code.Line(Op("TABS", y, a));
    code.Line(Op("TMAXS", y, y, F(0x1p-149)));
    code.Line(Op("TMINS", y, y, F(0x1.fffffep127)));
    ExtendedLog(code, lh, ll, y);
    const std::string bc = code.Scratch(1), ph = code.Scratch(2), pl = code.Scratch(3);
    code.Line(Op("TMAXS", bc, b, F(-0x1p100)));
    code.Line(Op("TMINS", bc, bc, F(0x1p100)));
    TwoProduct(code, ph, pl, bc, lh, code.Scratch(4), code.Scratch(5), code.Scratch(6),
               code.Scratch(7), code.Scratch(10));
    code.Line(Op("TMUL", y, bc, ll));
    code.Line(Op("TADD", pl, pl, y));
    code.Line(Op("TADD", y, ph, pl));  // yh
    code.Line(Op("TSUB", ph, y, ph));
    code.Line(Op("TSUB", pl, pl, ph));  // yl
    code.Line(Op("TABS", ph, pl));
    code.Line(Op("TEXPANDS", bc, "0.0f"));
    code.Select(pl, ph, "LT", "1.0f", pl, bc);  // 0 for an infinite yh
    code.Line(Op("TEXP", y, y));
    code.Line(Op("TMUL", pl, y, pl));
    code.Line(Op("TADD", pl, y, pl));
    code.Select(y, y, "LT", F(INFINITY), pl, y);  // e + e yl; e where it overflowed
    // g = 0 where a is finite and not 0 and b finite, else NaN: those take
    // the plain form.
    code.Line(Op("TABS", g, a));
    code.Line(Op("TLOG", g, g));
    code.Line(Op("TMUL", lh, g, b));
    code.Line(Op("TEXP", lh, lh));
    code.Line(Op("TMULS", g, g, "0.0f"));
    code.Line(Op("TMULS", ph, b, "0.0f"));
    code.Line(Op("TADD", g, g, ph));
    code.Select(y, g, "LE", "0.0f", y, lh);
  }
  const std::string h = code.Scratch(2), t = code.Scratch(3), m = code.Scratch(4),
                    one = code.Scratch(5), r = code.Scratch(6), f = code.Scratch(7);
  const std::string inf = F(INFINITY);
  ParityFactor(code, m, b, h, t, r, f);
  code.Line(Op("TEXPANDS", one, "1.0f"));
  // A zero or infinite a: -1 for an odd integer b, else 1 (pow(-0, 0.5) is
  // +0, pow(-inf, 0.5) +inf).
  code.Select(t, m, "LT", "0.0f", m, one);
  code.Line(Op("TABS", h, a));
  code.Select(m, h, "LE", "0.0f", t, m);
  code.Select(m, h, "GE", inf, t, m);
  // m where a's sign bit is set: min(a, 1/a) < 0 (-0 and -inf too).
  code.Line(Op("TDIVS", h, "1.0f", a));
  code.Line(Op("TMIN", h, h, a));
  code.Select(m, h, "LT", "0.0f", m, one);
  code.Line(Op("TMUL", y, y, m));
  code.Line(Op("TABS", h, b));
  code.Select(y, h, "LE", "0.0f", one, y);
  // 1 where a == 1, or |a| == 1 and b is infinite.
  code.Line(Op("TABS", t, a));
  code.Select(t, h, "GE", inf, t, a);
  code.Line(Op("TADDS", h, t, "-1.0f"));
  code.Line(Op("TABS", h, h));
  code.Select(d, h, "LE", "0.0f", one, y);
}

// Whether pow(x, b) for the constant b is PowByProducts's: b a multiple of
// 1/2 with -2 <= b <= 4.
bool IsProductExponent(double b) {
  return b >= -2 && b <= 4 && std::rint(2 * b) == 2 * b;
}

// pow(x, b) for IsProductExponent(b): u^n sqrt(u)^(2b mod 2), u = x for b
// >= 0, 1 / x for b < 0, n = floor(|b|), the powers by products (u^4 as
// (u^2)^2). Each rounding adds half an ulp and u's error is raised to |b|:
// within 3 ulp (ascend_accuracy_test's sweeps). 1 for b == 0 (NaN x too);
// for a non-integer b, x is first taken as +0 where it is -0 and +inf where
// it is -inf (C's pow there), and sqrt of a negative x is NaN as pow's is.
// Scratch 1 to 3.
void PowByProducts(VectorCode& code, const std::string& d, const std::string& x, double b) {
  if (b == 0) {
    code.Line(Op("TEXPANDS", d, "1.0f"));
    return;
  }
  const std::string u = code.Scratch(1), p = code.Scratch(2), s = code.Scratch(3);
  const int n = static_cast<int>(std::floor(std::fabs(b)));
  const bool half = std::fabs(b) != n;
  if (half) {
    code.Line(Op("TADDS", u, x, "0.0f"));  // -0 to +0
    code.Line(Op("TEXPANDS", p, F(INFINITY)));
    code.Select(u, u, "LT", F(-0x1.fffffep127), p, u);
    if (b < 0) code.Line(Op("TDIVS", u, "1.0f", u));
  } else if (b < 0) {
    code.Line(Op("TDIVS", u, "1.0f", x));
  } else {
    code.Line(Op("TMULS", u, x, "1.0f"));
  }
  switch (n) {
    case 0: code.Line(Op("TSQRT", d, u)); return;
    case 1: code.Line(Op("TMULS", p, u, "1.0f")); break;
    case 2: code.Line(Op("TMUL", p, u, u)); break;
    case 3: code.Line(Op("TMUL", p, u, u)); code.Line(Op("TMUL", p, p, u)); break;
    default: code.Line(Op("TMUL", p, u, u)); code.Line(Op("TMUL", p, p, p)); break;
  }
  if (!half) {
    code.Line(Op("TMULS", d, p, "1.0f"));
    return;
  }
  code.Line(Op("TSQRT", s, u));
  code.Line(Op("TMUL", d, p, s));
}

// pow(c, x) for a constant c, finite, not 0 and |c| != 1: exp(y) with y =
// x ln|c| carried in two floats. ln|c| = lh + ll (lh: 12 significant bits,
// ll the rest rounded to f32); x (clamped to +-2^31, beyond which |y| >=
// 128 anyway) split in two 12-bit halves (Veltkamp: x1 = k - (k - x), k =
// 4097 x; x2 = x - x1), so x1 lh and x2 lh are exact; their sum and the
// small terms (x ll, the clamped remainder times ln|c|) become yh + yl
// (Fast2Sum twice), |yl| <= ulp(yh) / 2; pow = exp(yh) (1 + yl) (yl where
// |yl| < 1: 0 for yh infinite). Error: exp's rounding, 1 + yl's and the
// product's: within 2 ulp for any x (measured in ascend_accuracy_test),
// where exp(x ln|c|)'s error grows with |x ln|c||. A negative c multiplies
// by ParityFactor(x). Infinities and NaN x give C's pow values. Scratch 1
// to 8.
void PowOfConstant(VectorCode& code, const std::string& d, double c, const std::string& x) {
  const double l = std::log(std::fabs(c));
  int e = 0;
  const double mant = std::frexp(l, &e);
  const double lh = std::ldexp(std::rint(mant * 4096), e - 12);
  const double ll = l - lh;
  const std::string xc = code.Scratch(1), t = code.Scratch(2), x1 = code.Scratch(3),
                    x2 = code.Scratch(4), s1 = code.Scratch(5), lo = code.Scratch(6),
                    yh = code.Scratch(7), yl = code.Scratch(8);
  code.Line(Op("TMAXS", xc, x, "-2147483648.0f"));
  code.Line(Op("TMINS", xc, xc, "2147483648.0f"));
  code.Line(Op("TSUB", t, x, xc));  // 0; what clamping cut off; inf, NaN
  code.Line(Op("TMULS", x1, xc, "4097.0f"));
  code.Line(Op("TSUB", x2, x1, xc));
  code.Line(Op("TSUB", x1, x1, x2));  // x1 = k - (k - x)
  code.Line(Op("TSUB", x2, xc, x1));
  code.Line(Op("TMULS", x1, x1, F(lh)));
  code.Line(Op("TMULS", x2, x2, F(lh)));
  code.Line(Op("TADD", s1, x1, x2));
  code.Line(Op("TSUB", lo, s1, x1));
  code.Line(Op("TSUB", lo, x2, lo));  // x1 lh + x2 lh == s1 + lo exactly
  code.Line(Op("TMULS", x1, xc, F(ll)));
  code.Line(Op("TADD", lo, lo, x1));
  code.Line(Op("TMULS", x1, t, F(l)));
  code.Line(Op("TADD", lo, lo, x1));
  code.Line(Op("TADD", yh, s1, lo));
  code.Line(Op("TSUB", yl, yh, s1));
  code.Line(Op("TSUB", yl, lo, yl));
  code.Line(Op("TABS", x2, yl));
  code.Line(Op("TEXPANDS", x1, "0.0f"));
  code.Select(yl, x2, "LT", "1.0f", yl, x1);
  code.Line(Op("TADDS", yl, yl, "1.0f"));
  code.Line(Op("TEXP", yh, yh));
  if (c > 0) {
    code.Line(Op("TMUL", d, yh, yl));
    return;
  }
  code.Line(Op("TMUL", yh, yh, yl));
  ParityFactor(code, yl, x, x1, x2, s1, lo);
  code.Line(Op("TMUL", d, yh, yl));
}

// fmod(x, y), exact (C's fmod, the sign of x) where |x / y| < 2^67 and |y|
// is a normal float; beyond, the quotient's own rounding. x and y are
// scaled by 2^-64 where |y| > 2^60 (2^64 where |y| < 2^-60), then three
// stages reduce r by Y = y 2^44, y 2^22, y: each takes q = trunc(r / Y)
// (within one of the true quotient below 2^23), q Y as ph + pl exactly
// (Dekker's product from Split halves), r - ph (exact, Sterbenz), one step
// of +-Y where the estimate r - ph - pl has the wrong sign or reaches |Y|,
// and then subtracts pl: the remainder is a float, so its rounding is
// exact. A stage keeps r where |r| < |Y| (Y infinite too). A zero takes x's
// sign; x itself where |x| < |y|; NaN for an infinite x, a zero y or NaN.
// Scratch 1 to 15.
void Fmod(VectorCode& code, const std::string& d, const std::string& x, const std::string& y) {
  std::vector<std::string> sc;
  for (int k = 1; k <= 15; ++k) sc.push_back(code.Scratch(k));
  const std::string &s = sc[0], &ys = sc[1], &ay = sc[2], &sx = sc[3], &r = sc[4], &yk = sc[5],
                    &q = sc[6], &ph = sc[7], &pl = sc[8], &a1 = sc[9], &a2 = sc[10],
                    &b1 = sc[11], &b2 = sc[12], &t = sc[13], &f = sc[14];
  code.Line(Op("TABS", ay, y));
  code.Line(Op("TEXPANDS", s, "1.0f"));
  code.Line(Op("TEXPANDS", t, F(0x1p-64)));
  code.Select(s, ay, "GT", F(0x1p60), t, s);
  code.Line(Op("TEXPANDS", t, F(0x1p64)));
  code.Select(s, ay, "LT", F(0x1p-60), t, s);
  code.Line(Op("TMUL", r, x, s));
  code.Line(Op("TMUL", ys, y, s));
  EmitSign(code, sx, x);
  for (double scale : {0x1p44, 0x1p22, 1.0}) {
    code.Line(Op("TMULS", yk, ys, F(scale)));
    code.Line(Op("TDIV", q, r, yk));
    EmitRoundIntegral(code, q, q, "CAST_TRUNC", t, f);
    TwoProduct(code, ph, pl, q, yk, a1, a2, b1, b2, t);  // q Y == ph + pl
    code.Line(Op("TSUB", ph, r, ph));  // exact
    code.Line(Op("TSUB", t, ph, pl));  // the estimate
    code.Line(Op("TABS", b2, yk));
    code.Line(Op("TMUL", a1, b2, sx));  // |Y| toward x's sign
    code.Line(Op("TMUL", f, t, sx));
    code.Line(Op("TADD", a2, ph, a1));
    code.Select(b1, f, "LT", "0.0f", a2, ph);
    code.Line(Op("TABS", f, t));
    code.Line(Op("TSUB", f, f, b2));
    code.Line(Op("TSUB", a2, ph, a1));
    code.Select(b1, f, "GE", "0.0f", a2, b1);
    code.Line(Op("TSUB", t, b1, pl));
    code.Line(Op("TABS", f, r));
    code.Line(Op("TSUB", f, f, b2));
    code.Select(r, f, "LT", "0.0f", r, t);
  }
  code.Line(Op("TDIV", r, r, s));
  code.Line(Op("TMULS", t, x, "0.0f"));
  code.Line(Op("TABS", f, r));
  code.Select(r, f, "LE", "0.0f", t, r);
  code.Line(Op("TABS", f, x));
  code.Line(Op("TSUB", f, f, ay));
  code.Select(d, f, "LT", "0.0f", x, r);
}

// remainder (torch's, the sign of y): m = fmod(x, y), plus y where m is
// not zero and its sign differs from y's; the same float operations as the
// host's, so the same results. Scratch 1 to 16.
void Remainder(VectorCode& code, const std::string& d, const std::string& x,
               const std::string& y) {
  const std::string m = code.Scratch(16), a = code.Scratch(1), b = code.Scratch(2);
  Fmod(code, m, x, y);
  EmitSign(code, a, m);
  EmitSign(code, b, y);
  code.Line(Op("TMUL", a, a, b));
  code.Line(Op("TADD", b, m, y));
  code.Select(d, a, "LT", "0.0f", b, m);
}

// floor_divide (torch's div_floor_floating, as the host computes it): m =
// fmod(x, y); v = (x - m) / y, minus 1 where m is not zero and its sign
// differs from y's; floor(v), plus 1 where v - floor(v) > 1/2; a zero v
// gives the zero of x / y's sign, a zero y gives x / y. Scratch 1 to 17.
void FloorDiv(VectorCode& code, const std::string& d, const std::string& x,
              const std::string& y) {
  const std::string m = code.Scratch(16), v = code.Scratch(17), a = code.Scratch(1),
                    b = code.Scratch(2), z = code.Scratch(3), fl = code.Scratch(4),
                    u = code.Scratch(5), w = code.Scratch(6);
  Fmod(code, m, x, y);
  code.Line(Op("TSUB", v, x, m));
  code.Line(Op("TDIV", v, v, y));
  EmitSign(code, a, m);
  EmitSign(code, b, y);
  code.Line(Op("TMUL", a, a, b));
  code.Line(Op("TADDS", b, v, "-1.0f"));
  code.Select(v, a, "LT", "0.0f", b, v);
  code.Line(Op("TDIV", z, x, y));
  code.Line(Op("TMULS", z, z, "0.0f"));  // the zero of x / y's sign
  EmitRoundIntegral(code, fl, v, "CAST_FLOOR", u, w);
  code.Line(Op("TSUB", u, v, fl));
  code.Line(Op("TADDS", w, fl, "1.0f"));
  code.Select(fl, u, "GT", "0.5f", w, fl);
  code.Line(Op("TABS", a, v));
  code.Select(fl, a, "LE", "0.0f", z, fl);
  code.Line(Op("TDIV", u, x, y));
  code.Line(Op("TABS", a, y));
  code.Select(d, a, "LE", "0.0f", u, fl);
}

}  // namespace

std::string FloatLiteral(double v) {
  if (std::isnan(v)) return "__builtin_nanf(\"\")";
  if (std::isinf(v)) return v > 0 ? "__builtin_inff()" : "(-__builtin_inff())";
  return absl::StrFormat("static_cast<float>(%a)", v);
}

// x * 2^127 * 2^127 is beyond +-1 for every non-zero x (denormals
// included), +-inf for infinities and +-0 for zeros; clamped to [-1, 1] it
// is the sign.
void EmitSign(VectorCode& code, const std::string& dst, const std::string& src) {
  code.Line(Op("TMULS", dst, src, F(0x1p127)));
  code.Line(Op("TMULS", dst, dst, F(0x1p127)));
  code.Line(Op("TMAXS", dst, dst, "-1.0f"));
  code.Line(Op("TMINS", dst, dst, "1.0f"));
}

// r = TCVT to int32 in the rounding mode (of x clamped to +-2^30, in range)
// and back; x + clamp(r - x, -1, 1) * f with f = clamp(4 (2^23 - |x|), 0,
// 1): r where |x| < 2^23 (r - x is exact there), x itself from 2^23 on
// (already integral; inf too), NaN stays NaN.
void EmitRoundIntegral(VectorCode& code, const std::string& dst, const std::string& src,
                       const char* mode, const std::string& r, const std::string& f) {
  const std::string n = code.IntScratch();
  code.Line(Op("TMAXS", r, src, "-1073741824.0f"));
  code.Line(Op("TMINS", r, r, "1073741824.0f"));
  code.Line(Op("TCVT", n, r, absl::StrCat("RoundMode::", mode)));
  code.Line(Op("TCVT", r, n, "RoundMode::CAST_NONE"));
  code.Line(Op("TSUB", r, r, src));
  code.Line(Op("TMAXS", r, r, "-1.0f"));
  code.Line(Op("TMINS", r, r, "1.0f"));
  code.Line(Op("TABS", f, src));
  code.Line(Op("TNEG", f, f));
  code.Line(Op("TADDS", f, f, "8388608.0f"));
  code.Line(Op("TMULS", f, f, "4.0f"));
  code.Line(Op("TMAXS", f, f, "0.0f"));
  code.Line(Op("TMINS", f, f, "1.0f"));
  code.Line(Op("TMUL", r, r, f));
  code.Line(Op("TADD", dst, src, r));
}

bool IsAscendComposition(PtoOpcode op) {
  switch (op) {
    case PtoOpcode::kTLog1P: case PtoOpcode::kTFloor: case PtoOpcode::kTCeil:
    case PtoOpcode::kTRound: case PtoOpcode::kTTrunc: case PtoOpcode::kTTanh:
    case PtoOpcode::kTSign: case PtoOpcode::kTExp2: case PtoOpcode::kTExpM1:
    case PtoOpcode::kTSin: case PtoOpcode::kTCos: case PtoOpcode::kTErf:
    case PtoOpcode::kTErfc: case PtoOpcode::kTPow: case PtoOpcode::kTPowS:
    case PtoOpcode::kTRPowS: case PtoOpcode::kTTan: case PtoOpcode::kTAtan:
    case PtoOpcode::kTAtan2: case PtoOpcode::kTAsin: case PtoOpcode::kTAcos:
    case PtoOpcode::kTSinh: case PtoOpcode::kTCosh: case PtoOpcode::kTAsinh:
    case PtoOpcode::kTAcosh: case PtoOpcode::kTAtanh: case PtoOpcode::kTCbrt:
    case PtoOpcode::kTHypot: case PtoOpcode::kTFmod: case PtoOpcode::kTRem:
    case PtoOpcode::kTFloorDiv:
      return true;
    default:
      return false;
  }
}

void EmitAscendComposition(VectorCode& code, PtoOpcode op, const std::string& d,
                           const std::string& x, const std::string& src1,
                           const std::string& scalar, const double* constant) {
  switch (op) {
    case PtoOpcode::kTLog1P:  // (Asinh, Acosh, Atanh's Log1p need no -0.0)
      Log1p(code, code.Scratch(3), x);
      KeepZeros(code, d, x, code.Scratch(3), code.Scratch(1));
      return;
    case PtoOpcode::kTFloor: RoundIntegral(code, d, x, "CAST_FLOOR"); return;
    case PtoOpcode::kTCeil: RoundIntegral(code, d, x, "CAST_CEIL"); return;
    case PtoOpcode::kTRound: RoundIntegral(code, d, x, "CAST_RINT"); return;
    case PtoOpcode::kTTrunc: RoundIntegral(code, d, x, "CAST_TRUNC"); return;
    case PtoOpcode::kTTanh: Tanh(code, d, x); return;
    case PtoOpcode::kTSign:  // + 0: sign(-0.0) is +0.0 (numpy, torch)
      EmitSign(code, d, x);
      code.Line(Op("TADDS", d, d, "0.0f"));
      return;
    case PtoOpcode::kTExp2: Exp2(code, d, x); return;
    case PtoOpcode::kTExpM1: Expm1(code, d, x); return;
    case PtoOpcode::kTSin: SinCosTan(code, d, x, Trig::kSin); return;
    case PtoOpcode::kTCos: SinCosTan(code, d, x, Trig::kCos); return;
    case PtoOpcode::kTTan: SinCosTan(code, d, x, Trig::kTan); return;
    case PtoOpcode::kTAtan: Atan(code, d, x); return;
    case PtoOpcode::kTAtan2: Atan2(code, d, x, src1); return;
    case PtoOpcode::kTAsin: Asin(code, d, x); return;
    case PtoOpcode::kTAcos: Acos(code, d, x); return;
    case PtoOpcode::kTSinh: Sinh(code, d, x); return;
    case PtoOpcode::kTCosh: Cosh(code, d, x); return;
    case PtoOpcode::kTAsinh: Asinh(code, d, x); return;
    case PtoOpcode::kTAcosh: Acosh(code, d, x); return;
    case PtoOpcode::kTAtanh: Atanh(code, d, x); return;
    case PtoOpcode::kTCbrt: Cbrt(code, d, x); return;
    case PtoOpcode::kTHypot: Hypot(code, d, x, src1); return;
    case PtoOpcode::kTFmod: Fmod(code, d, x, src1); return;
    case PtoOpcode::kTRem: Remainder(code, d, x, src1); return;
    case PtoOpcode::kTFloorDiv: FloorDiv(code, d, x, src1); return;
    case PtoOpcode::kTErf: ErfErfc(code, d, x, false); return;
    case PtoOpcode::kTErfc: ErfErfc(code, d, x, true); return;
    case PtoOpcode::kTPow: Pow(code, d, x, src1); return;
    case PtoOpcode::kTPowS: {  // x ** s
      if (constant != nullptr && IsProductExponent(*constant)) {
        PowByProducts(code, d, x, *constant);
        return;
      }
      const std::string s = code.Scratch(8);
      code.Line(Op("TEXPANDS", s, scalar));
      Pow(code, d, x, s);
      return;
    }
    case PtoOpcode::kTRPowS: {  // s ** x
      if (constant != nullptr && std::isfinite(*constant) && *constant != 0 &&
          std::fabs(*constant) != 1) {
        PowOfConstant(code, d, *constant, x);
        return;
      }
      const std::string s = code.Scratch(8);
      code.Line(Op("TEXPANDS", s, scalar));
      Pow(code, d, s, x);
      return;
    }
    default:
      return;
  }
}

std::string Op(const char* op, const std::string& d, const std::string& a) {
  return absl::StrCat(op, "(", d, ", ", a, ");");
}
std::string Op(const char* op, const std::string& d, const std::string& a, const std::string& b) {
  return absl::StrCat(op, "(", d, ", ", a, ", ", b, ");");
}

}  // namespace pto::compiler::ascend
