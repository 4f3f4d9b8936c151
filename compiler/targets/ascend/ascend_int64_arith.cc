#include "compiler/targets/ascend/ascend_int64_arith.h"

#include "absl/strings/str_cat.h"
#include "compiler/targets/ascend/ascend_math.h"

namespace pto::compiler::ascend {

// The products a_i b_j (i + j <= 3; int32 TMUL gives the 32 bits of a 16 x
// 16-bit product) split into 16-bit halves and summed per limb (at most 7
// halves and a carry: < 2^19), then carried (c_k = acc_k + (c_(k-1) >>
// 16), limb c_k & 65535).
void MulLimbs(Int64Code& code, const std::vector<std::string>& a,
              const std::function<std::string(int)>& limb, const std::string& p,
              const std::string& h, const std::string& count,
              const std::vector<std::string>& acc) {
  std::vector<bool> set(4, false);
  auto add = [&](int k, const std::string& v) {
    code.Line(set[k] ? Op("TADD", acc[k], acc[k], v) : Op("TADDS", acc[k], v, "0"));
    set[k] = true;
  };
  code.Line(Op("TEXPANDS", count, "16"));
  for (int j = 0; j < 4; ++j) {
    const std::string b = limb(j);
    for (int i = 0; i + j < 4; ++i) {
      code.Line(Op("TMUL", p, a[i], b));
      code.Line(Op("TANDS", h, p, "65535"));
      add(i + j, h);
      if (i + j + 1 < 4) {
        code.Line(Op("TSHR", h, p, count));
        code.Line(Op("TANDS", h, h, "65535"));
        add(i + j + 1, h);
      }
    }
  }
  for (int k = 0; k < 4; ++k) {
    if (k > 0) {
      code.Line(Op("TSHR", h, acc[k - 1], count));
      code.Line(Op("TADD", acc[k], acc[k], h));
    }
    code.Line(Op("TANDS", a[k], acc[k], "65535"));
  }
}

void Int64Words::Shift(const char* op, const std::string& d, const std::string& x, int n) {
  const std::string count = Tile(4);
  code_.Line(Op("TEXPANDS", count, absl::StrCat(n)));
  code_.Line(Op(op, d, x, count));
}

void Int64Words::Xor(const std::string& d, const std::string& a, const std::string& b) {
  code_.Line(absl::StrCat("TXOR(", d, ", ", a, ", ", b, ", ", Tile(5), ");"));
}

void Int64Words::Positions() {
  if (positions_) return;
  positions_ = true;
  const std::string parity = Tile(1), even = Tile(2), odd = Tile(3);
  code_.WordsIndex(shape_, even);
  code_.Line(Op("TANDS", parity, even, "1"));
  code_.Line(Op("TSUB", even, even, parity));
  code_.Line(Op("TADDS", odd, even, "1"));
}

Int64Words::Pair Int64Words::Split(const std::string& words, int k) {
  Positions();
  const Pair v{Tile(k), Tile(k + 1)};
  code_.Line(Op("TGATHER", v.lo, words, Tile(2)));
  code_.Line(Op("TGATHER", v.hi, words, Tile(3)));
  return v;
}

Int64Words::Pair Int64Words::FromInt32(const std::string& values, int k) {
  Positions();
  const Pair v{Tile(k), Tile(k + 1)};
  Shift("TSHR", v.hi, Tile(2), 1);  // the value's element: f >> 1
  code_.Line(Op("TGATHER", v.lo, values, v.hi));
  Shift("TSHR", v.hi, v.lo, 31);
  return v;
}

Int64Words::Pair Int64Words::Constant(const std::string& lo, const std::string& hi, int k) {
  const Pair v{Tile(k), Tile(k + 1)};
  code_.Line(Op("TEXPANDS", v.lo, lo));
  code_.Line(Op("TEXPANDS", v.hi, hi));
  return v;
}

void Int64Words::Join(const std::string& dst, const Pair& v) {
  Positions();
  code_.Line(Op("TSUB", v.hi, v.hi, v.lo));
  code_.Line(Op("TMUL", v.hi, v.hi, Tile(1)));
  code_.Line(Op("TADD", dst, v.lo, v.hi));
}

void Int64Words::Add(const Pair& d, const Pair& a, const Pair& b) {
  const std::string s = Tile(6), c = Tile(7), t = Tile(8), ns = Tile(5);
  code_.Line(Op("TADD", s, a.lo, b.lo));
  code_.Line(Op("TAND", c, a.lo, b.lo));
  code_.Line(Op("TOR", t, a.lo, b.lo));
  code_.Line(Op("TNOT", ns, s));
  code_.Line(Op("TAND", t, t, ns));
  code_.Line(Op("TOR", c, c, t));
  TopBit(c);  // -1 where the low words carry
  code_.Line(Op("TADD", d.hi, a.hi, b.hi));
  code_.Line(Op("TSUB", d.hi, d.hi, c));
  code_.Line(Op("TADDS", d.lo, s, "0"));
}

void Int64Words::Sub(const Pair& d, const Pair& a, const Pair& b) {
  const std::string diff = Tile(6), u = Tile(7), na = Tile(8), t = Tile(5);
  code_.Line(Op("TSUB", diff, a.lo, b.lo));
  code_.Line(Op("TNOT", na, a.lo));
  code_.Line(Op("TOR", t, na, b.lo));
  code_.Line(Op("TAND", u, t, diff));
  code_.Line(Op("TAND", na, na, b.lo));
  code_.Line(Op("TOR", na, na, u));
  TopBit(na);  // -1 where the low words borrow
  code_.Line(Op("TSUB", d.hi, a.hi, b.hi));
  code_.Line(Op("TADD", d.hi, d.hi, na));
  code_.Line(Op("TADDS", d.lo, diff, "0"));
}

void Int64Words::Mul(const Pair& a, const Pair& b) {
  const std::vector<std::string> limbs = {Tile(17), Tile(18), Tile(19), Tile(20)};
  const std::string bl = Tile(21);
  auto half = [&](const std::string& d, const std::string& x, bool top) {
    if (top) {
      Shift("TSHR", d, x, 16);
      code_.Line(Op("TANDS", d, d, "65535"));
    } else {
      code_.Line(Op("TANDS", d, x, "65535"));
    }
  };
  half(limbs[0], a.lo, false);
  half(limbs[1], a.lo, true);
  half(limbs[2], a.hi, false);
  half(limbs[3], a.hi, true);
  MulLimbs(
      code_, limbs,
      [&](int j) {
        half(bl, j < 2 ? b.lo : b.hi, j % 2 == 1);
        return bl;
      },
      Tile(22), Tile(23), Tile(4), {Tile(6), Tile(7), Tile(8), Tile(24)});
  Shift("TSHL", limbs[1], limbs[1], 16);
  code_.Line(Op("TADD", a.lo, limbs[0], limbs[1]));
  Shift("TSHL", limbs[3], limbs[3], 16);
  code_.Line(Op("TADD", a.hi, limbs[2], limbs[3]));
}

std::string Int64Words::Less(const Pair& a, const Pair& b, int k) {
  const std::string m = Tile(k), t6 = Tile(6), t7 = Tile(7), t8 = Tile(8), t5 = Tile(5);
  // The high words: signed a.hi < b.hi into m, a.hi == b.hi into t6.
  code_.Line(Op("TSUB", t6, a.hi, b.hi));
  Xor(t7, a.hi, b.hi);
  Xor(t8, t6, a.hi);
  code_.Line(Op("TAND", t7, t7, t8));
  Xor(m, t6, t7);
  TopBit(m);
  Xor(t6, a.hi, b.hi);
  code_.Line(Op("TNEG", t7, t6));
  code_.Line(Op("TOR", t6, t6, t7));
  code_.Line(Op("TNOT", t6, t6));
  TopBit(t6);
  // The low words unsigned: the borrow of a.lo - b.lo into t8.
  code_.Line(Op("TSUB", t7, a.lo, b.lo));
  code_.Line(Op("TNOT", t8, a.lo));
  code_.Line(Op("TOR", t5, t8, b.lo));
  code_.Line(Op("TAND", t7, t7, t5));
  code_.Line(Op("TAND", t8, t8, b.lo));
  code_.Line(Op("TOR", t8, t8, t7));
  TopBit(t8);
  code_.Line(Op("TAND", t6, t6, t8));
  code_.Line(Op("TOR", m, m, t6));
  return m;
}

std::string Int64Words::Equal(const Pair& a, const Pair& b, int k) {
  const std::string m = Tile(k), t6 = Tile(6), t7 = Tile(7);
  Xor(t6, a.lo, b.lo);
  Xor(t7, a.hi, b.hi);
  code_.Line(Op("TOR", t6, t6, t7));
  code_.Line(Op("TNEG", t7, t6));
  code_.Line(Op("TOR", t6, t6, t7));
  code_.Line(Op("TNOT", m, t6));
  TopBit(m);
  return m;
}

void Int64Words::Select(const std::string& d, const std::string& m, const std::string& a,
                        const std::string& b) {
  const std::string t = Tile(6);
  Xor(t, a, b);
  code_.Line(Op("TAND", t, t, m));
  Xor(d, b, t);
}

}  // namespace pto::compiler::ascend
