// The Ascend target's arithmetic on INT64 values held as words tiles
// (ascend_int64.h: each value's two 32-bit words, low first, in an int32
// tile of twice the columns), exact modulo 2^64 as torch's int64, in int32
// vector instructions only (A2/A3 has no 64-bit arithmetic):
//
//  - a value's words are spread over the words tile's shape: a "pair" of
//    words tiles whose every element holds the low (high) word of the
//    value it belongs to (TGATHER at the even and odd storage positions),
//    so both words of a value compute alike; a result is joined back by
//    the word's parity (lo + (hi - lo) * (f & 1)).
//  - sums and differences carry (borrow) through the low word: the carry
//    of a + b is the top bit of (a & b) | ((a | b) & ~s), the borrow of
//    a - b the top bit of (~a & b) | ((~a | b) & d) (Hacker's Delight
//    2-13), as 0 or -1 by an arithmetic shift by 31.
//  - products modulo 2^64 from 16-bit limbs (MulLimbs).
//  - comparisons as masks (0 or -1): the high words signed, x < y the top
//    bit of (x - y) ^ ((x ^ y) & ((x - y) ^ x)); the low words unsigned
//    (the borrow above); x == y where ~(z | -z) has its top bit, z = x ^ y.
//  - selection by a mask: b ^ ((a ^ b) & m) on the words themselves.
#ifndef PTO_COMPILER_TARGETS_ASCEND_ASCEND_INT64_ARITH_H_
#define PTO_COMPILER_TARGETS_ASCEND_ASCEND_INT64_ARITH_H_

#include <functional>
#include <string>
#include <vector>

#include "compiler/targets/ascend/ascend_int64.h"

namespace pto::compiler::ascend {

// a (four 16-bit limbs, int32 tiles of one shape) = a * b modulo 2^64, b's
// limb j written by `limb(j)` into the tile it returns (which may shift by
// 16 with `count`, and by nothing else); `p`, `h`, `count` and the four
// `acc` tiles are scratch of a's shape.
void MulLimbs(Int64Code& code, const std::vector<std::string>& a,
              const std::function<std::string(int)>& limb, const std::string& p,
              const std::string& h, const std::string& count,
              const std::vector<std::string>& acc);

// The words-tile arithmetic of one instruction, in words tiles of `shape`
// (its scratch: WordsInt(shape, k), k from 1).
class Int64Words {
 public:
  struct Pair {
    std::string lo, hi;
  };

  Int64Words(Int64Code& code, Int64Shape shape) : code_(code), shape_(shape) {}

  // Scratch words tile k.
  std::string Tile(int k) { return code_.WordsInt(shape_, k); }
  // The pair of the words tile `words`, into scratch k and k + 1.
  Pair Split(const std::string& words, int k);
  // The pair of INT32 values in the full int32 tile `values` (sign-extended;
  // a full words shape only), into scratch k and k + 1.
  Pair FromInt32(const std::string& values, int k);
  // The pair of one INT64 value, its words C++ int32 expressions.
  Pair Constant(const std::string& lo, const std::string& hi, int k);
  // dst (a words tile) = the values of `v`; v.hi is clobbered.
  void Join(const std::string& dst, const Pair& v);

  // d = a + b, a - b, -a (d may be a or b); scratch 4 to 8.
  void Add(const Pair& d, const Pair& a, const Pair& b);
  void Sub(const Pair& d, const Pair& a, const Pair& b);
  // a = a * b (a's tiles clobbered, b's not); scratch 4, 6 to 8, 17 to 24.
  void Mul(const Pair& a, const Pair& b);

  // m (scratch k) = -1 where a < b (a == b), else 0; scratch 4 to 8.
  std::string Less(const Pair& a, const Pair& b, int k);
  std::string Equal(const Pair& a, const Pair& b, int k);
  // d = m ? a : b over words tiles (d may be a or b); scratch 5, 6.
  void Select(const std::string& d, const std::string& m, const std::string& a,
              const std::string& b);
  // d = a ^ b (int32 tiles); scratch 5.
  void Xor(const std::string& d, const std::string& a, const std::string& b);
  // d = x >> n (arithmetic) or x << n, the count in scratch 4.
  void Shift(const char* op, const std::string& d, const std::string& x, int n);
  // -1 where x < 0, else 0 (x an int32 tile; in place).
  void TopBit(const std::string& x) { Shift("TSHR", x, x, 31); }

  // The words positions' parity (scratch 1), each value's low word's
  // position (scratch 2) and high word's (scratch 3), computed once.
  void Positions();
  std::string Parity() { Positions(); return Tile(1); }
  std::string Even() { Positions(); return Tile(2); }

 private:
  Int64Code& code_;
  Int64Shape shape_;
  bool positions_ = false;
};

}  // namespace pto::compiler::ascend

#endif  // PTO_COMPILER_TARGETS_ASCEND_ASCEND_INT64_ARITH_H_
