// The Ascend target's compositions: our math instructions that PTO-ISA has
// no single instruction for, written from PTO-ISA vector instructions (TEXP,
// TLOG, TMUL, TADDS, TCVT's rounding modes, TCMPS + TSEL through
// VectorCode::Select), as PyPTO composes them. Each function's comment
// states its accuracy; docs/pto-isa.md's mapping table repeats it.
//
// Every tile named here is a full f32 tile of the function's tile shape;
// `dst` may be the same tile as a source. Scratch tiles come from
// VectorCode::Scratch by number: a composition uses the numbers its comment
// lists, so callers keep their own operands out of them.
#ifndef PTO_COMPILER_TARGETS_ASCEND_ASCEND_MATH_H_
#define PTO_COMPILER_TARGETS_ASCEND_ASCEND_MATH_H_

#include <string>

#include "compiler/pto/opcode.h"

namespace pto::compiler::ascend {

// What a composition emits through: the block function being generated.
class VectorCode {
 public:
  virtual ~VectorCode() = default;
  // Appends one statement.
  virtual void Line(const std::string& statement) = 0;
  // Full f32 scratch tile `k` (1, 2, ...).
  virtual std::string Scratch(int k) = 0;
  // The full int32 scratch tile (TCVT's rounding modes).
  virtual std::string IntScratch() = 0;
  // dst = (x MODE c) ? a : b elementwise, MODE one of LT LE GT GE (TCMPS
  // into the bit mask, TSEL); `c` a C++ float expression. NaN compares
  // false. Uses no numbered scratch tile.
  virtual void Select(const std::string& dst, const std::string& x, const char* mode,
                      const std::string& c, const std::string& a, const std::string& b) = 0;
};

// An exact C++ expression for the float nearest `v` (hex float literal).
std::string FloatLiteral(double v);

// One PTO-ISA statement: `op(d, a);` and `op(d, a, b);`.
std::string Op(const char* op, const std::string& d, const std::string& a);
std::string Op(const char* op, const std::string& d, const std::string& a, const std::string& b);

// dst = sign(src): -1, +1 or a signed zero, NaN stays NaN. Exact.
void EmitSign(VectorCode& code, const std::string& dst, const std::string& src);

// dst = src rounded to an integral value by `mode` (CAST_FLOOR, CAST_CEIL,
// CAST_RINT: half to even, CAST_TRUNC). Exact; from 2^23 on, infinities
// and NaN, src passes through. Scratch: `r`, `f` (two scratch names other
// than dst and src) and the int32 tile.
void EmitRoundIntegral(VectorCode& code, const std::string& dst, const std::string& src,
                       const char* mode, const std::string& r, const std::string& f);

// Whether `op` is a composition this file emits (one source: the unary ones;
// two: TPOW, TATAN2, THYPOT, TFMOD, TREM, TFLOORDIV; TPOWS and TRPOWS take
// their scalar as `scalar`).
bool IsAscendComposition(PtoOpcode op);

// Emits `op` (IsAscendComposition) into dst. `constant`: the scalar's value
// when it is an immediate (null for a run-time scalar); TPOWS and TRPOWS
// then take their more accurate forms where it allows. Scratch: 1 to 17.
void EmitAscendComposition(VectorCode& code, PtoOpcode op, const std::string& dst,
                           const std::string& src0, const std::string& src1,
                           const std::string& scalar, const double* constant);

}  // namespace pto::compiler::ascend

#endif  // PTO_COMPILER_TARGETS_ASCEND_ASCEND_MATH_H_
