// The Ascend target's sums and products into INT64 (torch's result type for
// integer sum and prod), from INT32 values or from INT64 partial results
// (a dim split over tiles). The vector unit of A2/A3 has no 64-bit
// arithmetic (TADD, TMUL, TSHR: int32 at most), so an INT64 value lives in
// UB as its two 32-bit words, low first, in an int32 "words" tile: the
// bytes of the INT64 GM data seen as int32 (TLOAD and TSTORE of [.., 2n]
// int32 elements), and each reduction works on parts of the values that
// int32 and f32 hold exactly:
//
//  - TREDSUM: the values' bytes (INT32: three unsigned bytes and the signed
//    top one; INT64: eight unsigned bytes, the sum wrapping modulo 2^64)
//    are summed along the dim in f32 (TROWSUM / TCOLSUM), exact while the
//    sums stay below 2^24: 255 n <= 2^24, n <= 65793 values along the dim
//    (the UB holds at most 49152 int32 values); the byte sums then carry
//    into each other in int32 (t_k = s_k + (t_(k-1) >> 8)) and give the
//    low and high words.
//  - TREDPROD: the values as four 16-bit limbs (INT32 sign-extended), a
//    tree of pairwise products along the dim (TGATHER of the partner at
//    distance h = ceil(w / 2), 1 where it lies beyond w), each a 64-bit
//    product modulo 2^64 from int32 TMUL of limbs (16 x 16 bits: the
//    product's 32 bits, split into 16-bit halves by TSHR and TANDS) with
//    carries between limbs, as torch's wrapping product.
//
// The words tile of a result is gathered (TGATHER by index: element f of
// the words tile reads its value's element f >> 1, or row f >> 3 of a row
// tile) from tiles holding the low and the high word, and the two joined
// by the word's parity (lo + (hi - lo) * (f & 1)).
#ifndef PTO_COMPILER_TARGETS_ASCEND_ASCEND_INT64_H_
#define PTO_COMPILER_TARGETS_ASCEND_ASCEND_INT64_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "compiler/pto/opcode.h"

namespace pto::compiler::ascend {

// The shape of a reduction's result tile: full (a dim of one column), a
// row tile ([rows, 1]: the last dim reduced) or a column tile ([1, cols]:
// dim 0 of a matrix).
enum class Int64Shape { kFull, kRow, kCol };

// The columns of a row tile's words tile ([rows, 2] valid of 8: 32 bytes).
inline constexpr int kRowWordsCols = 8;

// What the INT64 reductions emit through: the block function being
// generated.
class Int64Code {
 public:
  virtual ~Int64Code() = default;
  virtual void Line(const std::string& statement) = 0;
  // Full f32 and int32 scratch tiles of the function's tile shape by number.
  virtual std::string Scratch(int k) = 0;
  virtual std::string IntScratchK(int k) = 0;
  // dst = (x MODE c) ? a : b over full int32 tiles (TCMPS, TSEL).
  virtual void IntSelect(const std::string& dst, const std::string& x, const char* mode,
                         const std::string& c, const std::string& a, const std::string& b) = 0;
  // An f32 scratch tile of the result's shape (a reduction's result).
  virtual std::string ReducedF32(Int64Shape shape) = 0;
  // Scratch tiles of the words tile of a result of `shape`: int32 number k,
  // and one f32.
  virtual std::string WordsInt(Int64Shape shape, int k) = 0;
  virtual std::string WordsF32(Int64Shape shape) = 0;
  // dst (a full int32 tile, or a words int32 tile of `shape`) = each
  // element's position in the tile's storage (TCI over its flat view).
  virtual void FullIndex(const std::string& dst) = 0;
  virtual void WordsIndex(Int64Shape shape, const std::string& dst) = 0;
};

// One TREDSUM or TREDPROD into INT64 values.
struct Int64Reduction {
  PtoOpcode op = PtoOpcode::kTRedSum;
  // Along the last dim (the columns of the flattened tile), else dim 0.
  bool along_row = true;
  Int64Shape result = Int64Shape::kRow;
  // The source: a full int32 tile of INT32 values, or (`words`) a full
  // words tile of INT64 values ([rows, 2 cols]).
  std::string src;
  bool words = false;
  // The result's words tile.
  std::string dst;
  // The values along the dim: a C++ int32 expression (a run-time extent)
  // and its largest value.
  std::string n;
  int64_t n_max = 1;
  // The full tiles' padded columns (the row step in their storage) and
  // element count.
  int64_t cols_pad = 8;
  int64_t flat = 8;
};

// Emits `r`; UNIMPLEMENTED (naming the bound) where a sum's f32 byte sums
// could leave 2^24.
absl::Status EmitInt64Reduction(Int64Code& code, const Int64Reduction& r);

}  // namespace pto::compiler::ascend

#endif  // PTO_COMPILER_TARGETS_ASCEND_ASCEND_INT64_H_
