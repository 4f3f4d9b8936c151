// Host C++ for the body of a BF16 cube function on a target with AMX-BF16
// (runtime::HostTargetHasAmx): the K loop as calls to pto_amx.h (B packed
// into pairs of K per K block, A read by tile loads from GM or, transposed,
// copied first, f32 accumulation in L0C, one rounding on the store). The
// caller (cube_codegen.cc) has declared the GM pointers a, b and c.
#ifndef PTO_COMPILER_TARGETS_HOST_AMX_CODEGEN_H_
#define PTO_COMPILER_TARGETS_HOST_AMX_CODEGEN_H_

#include <cstdint>
#include <string>

namespace pto::compiler {

struct AmxCubeShape {
  int64_t m = 0, n = 0, k = 0;  // the task's C [m x n] (bounds of a tail's), K
  int64_t lda = 0, ldb = 0, ldc = 0;  // GM leading dimensions (elements)
  bool a_trans = false, b_trans = false;
  std::string out_type;  // C's element type in generated code ("float", ...)
  // A generic function's run-time extents (cube_codegen.cc: "tm", "tn" and
  // the statement declaring them); empty: m and n.
  std::string m_expr, n_expr, extents;
};

// The statements after the GM pointers, up to (not including) the closing
// brace.
std::string EmitAmxCubeBody(const AmxCubeShape& s);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_TARGETS_HOST_AMX_CODEGEN_H_
