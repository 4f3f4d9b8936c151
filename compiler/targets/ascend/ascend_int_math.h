// The Ascend target's integer compositions on INT32 tiles: truncating
// division with its remainder, and from it floor division, torch's
// remainder, C's fmod and gcd, exact over the whole int32 range with the
// host's semantics (a zero divisor gives 0, MIN // -1 wraps to MIN). PTO-ISA
// has TDIV and TREM for floats only on the vector unit, so each is a float
// quotient estimate corrected in wrapping int32 arithmetic (TMUL, TSUB,
// TCMPS + TSEL over the flat int32 views).
//
// Every tile named here is a full int32 tile of the function's tile shape;
// `dst` may be a source. Scratch: full int32 tiles 2 to 12 (IntScratchK) and
// f32 tiles 1 to 3 (Scratch).
#ifndef PTO_COMPILER_TARGETS_ASCEND_ASCEND_INT_MATH_H_
#define PTO_COMPILER_TARGETS_ASCEND_ASCEND_INT_MATH_H_

#include <string>

#include "compiler/pto/opcode.h"
#include "compiler/targets/ascend/ascend_math.h"

namespace pto::compiler::ascend {

// VectorCode with int32 scratch and selection.
class IntVectorCode : public VectorCode {
 public:
  // Full int32 scratch tile `k` (1 is IntScratch's tile).
  virtual std::string IntScratchK(int k) = 0;
  // dst = (x MODE c) ? a : b elementwise over int32 tiles, MODE one of EQ
  // NE LT LE GT GE, `c` an int32 C++ expression (TCMPS into the bit mask,
  // TSEL). Uses no numbered scratch tile.
  virtual void IntSelect(const std::string& dst, const std::string& x, const char* mode,
                         const std::string& c, const std::string& a, const std::string& b) = 0;
};

// Whether `op` on INT32 tiles is a composition this file emits: TFLOORDIV,
// TREM, TFMOD, TGCD.
bool IsAscendIntComposition(PtoOpcode op);

// Emits `op` (IsAscendIntComposition) of the int32 tiles a and b into dst.
void EmitAscendIntComposition(IntVectorCode& code, PtoOpcode op, const std::string& dst,
                              const std::string& a, const std::string& b);

// The most Euclid steps gcd of two int32 magnitudes (at most 2^31) takes:
// TGCD's loop count.
int GcdSteps();

}  // namespace pto::compiler::ascend

#endif  // PTO_COMPILER_TARGETS_ASCEND_ASCEND_INT_MATH_H_
