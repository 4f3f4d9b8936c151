// The error model of the reference evaluator: per element, a bound on how
// far a correct kernel's value may be from the reference's value. The
// reference (reference_eval.h) computes every op in double and rounds its
// result to the value's dtype; alongside, each element carries a bound B
// with |kernel - reference| <= B, built op by op from the magnitudes the
// op actually combines:
//
//   B(z) = propagated + kernel's own error + rounding
//
//   propagated   how far f moves when its inputs move within their bounds:
//                max |f(x') - z| over the box x' in [x - B(x), x + B(x)]
//                (f evaluated at the box's corners: exact for the functions
//                monotone in each argument, i.e. almost all of them; by
//                Lipschitz constant for sin, cos, abs; infinite where the
//                box reaches a pole, a domain edge or a discontinuity such
//                as a comparison or floor that may flip). Sums and products
//                combine their terms' bounds (sum of B(x_k); of products
//                prod(|x_k| + B(x_k)) - prod |x_k|), matmul likewise per
//                product, max/min take the largest B of the row.
//   own error    the kernel's arithmetic, in units of u, the unit roundoff
//                of the compute dtype (FP32 for FP32, FP16, BF16: 2^-24;
//                DOUBLE: 2^-53; integers and BOOL: 0): 1 u |z| for +, -, *,
//                sqrt (one rounding); 2 u |z| for division and reciprocal
//                (a / b as a * (1 / b)); 8 u |z| (4 ulp) for the library's
//                math functions (exp, log, sin, pow, tanh, rsqrt, ...: not
//                correctly rounded; pto_tile.h documents at most 4 ulp),
//                16 u |z| for sigmoid, and erf/erfc 8 u |z| + 4 u absolute;
//                a sum of n terms (n - 1) u sum |x_k| (any summation order),
//                a matmul K u sum_k |a_k b_k|, a product (n - 1) u |z|; 0 for
//                exact ops (neg, abs, max, min, where, floor, compares,
//                layout moves, integer arithmetic). On exact inputs a
//                correctly rounded op's error is known, not bounded: 0 when
//                its result is representable (a cast of FP16 to FP32, a sum
//                of one term).
//   rounding     the result stored to its dtype, by the kernel when the
//                dtype is narrower than the compute dtype (FP16 half-ulp
//                2^-11 |z|, BF16 2^-8 |z|) and by the reference: u_s |z|
//                each, plus half the dtype's smallest subnormal.
//
// The bound scales with what was actually added, multiplied or divided: a
// softmax output carries the relative bound of its exp and of its row sum
// (n u), never an absolute one from the row's length alone, so a zeroed,
// scaled or permuted output falls outside it. Where the box makes a result
// undetermined (a division by a value whose bound reaches zero, a comparison
// of values within their bounds) the bound is infinite: the element is
// counted as unchecked (check.h).
#ifndef PTO_COMPILER_REFERENCE_REFERENCE_ERROR_H_
#define PTO_COMPILER_REFERENCE_REFERENCE_ERROR_H_

#include <functional>
#include <string>

#include "pto/v1/graph.pb.h"

namespace pto::reference {

// u of the arithmetic a kernel does on values of `dtype`: 2^-24 for FP32,
// FP16 and BF16 (they compute in FP32), 2^-53 for DOUBLE, 0 for integers
// and BOOL.
double ComputeUnit(pto::v1::DataType dtype);

// The rounding of a result z into `dtype`, by the kernel (FP16, BF16) and
// by the reference: u_s |z| + half the smallest subnormal, once or twice.
double RoundingError(double z, pto::v1::DataType dtype);

// The kernel's own error for elementwise op `kind` with result z of `dtype`
// (the table above) plus RoundingError; 0 for exact kinds. With
// `exact_inputs` (every input's bound 0) a correctly rounded op (+, -, *,
// sqrt, cast) is known exactly: ExactInputsError.
double OpError(const std::string& kind, double z, pto::v1::DataType dtype,
               bool exact_inputs = false);

// |kernel - reference| for a correctly rounded op on exact inputs whose
// exact result is z: the kernel holds z rounded to the compute dtype (or z
// itself, contracted into the next op, as an FMA does), stored to `dtype`;
// the reference z rounded to `dtype`. 0 when z is representable.
double ExactInputsError(double z, pto::v1::DataType dtype);

// max |f(x') - z| for x' within `ex` of x (see above); infinity when f is
// not defined or jumps on that interval. 0 when ex == 0.
double PropagateUnary(const std::string& kind, const std::function<double(double)>& f,
                      double x, double ex, double z);

// The same for f(x', y') over the box x' in [x - ex, x + ex], y' in
// [y - ey, y + ey]. floor_divide, remainder and fmod on floats (not
// `integer`) widen the box by 2 u: the kernel's quotient may round across
// an integer.
double PropagateBinary(const std::string& kind,
                       const std::function<double(double, double)>& f, double x,
                       double ex, double y, double ey, double z, bool integer = false);

}  // namespace pto::reference

#endif  // PTO_COMPILER_REFERENCE_REFERENCE_ERROR_H_
