// Ascend target source: a PTO program as PTO-ISA C++ (the public PTO Tile
// Library's API: Tile, GlobalTensor, TLOAD, TADD, ..., set_flag/wait_flag),
// the same text for an Ascend NPU (built by CANN's bisheng against the
// library's include/pto/npu) and for the library's CPU simulation
// (include/pto/cpu, g++ -D__CPU_SIM).
//
//   absl::StatusOr<std::string> src = GenerateAscendSource(program);
//
// Each block function @fK becomes one `__global__ AICORE void pto_fK(...)`
// taking the GM pointers of the buffers it reads or writes (typed, `__gm__`)
// and the task's int64 args (tile offsets, then dynamic args). Inside:
//   - one Tile per UB tile of the function at the UB address of a plan
//     bound with TASSIGN: full tiles [rows, cols] (the tile's
//     leading dims flattened into rows), row tiles [rows, 1] (ColMajor, a
//     last-dim reduction's result) and column tiles [1, cols], laid out one
//     after another in UB, 32-byte aligned, with the scratch tiles some
//     instructions need after them (the whole within the 192 KiB UB of
//     memory_model.h, else UNIMPLEMENTED);
//   - f32 tiles for FP32, FP16, BF16 (ascend_bf16.h), BOOL, INT8, INT16 and
//     UINT8 values, int32 tiles for INT32 values and argmax/argmin's
//     positions, int64 tiles for INT64 values that are only moved;
//   - a GlobalTensor per TLOAD/TSTORE with the access's 5-D shape and
//     strides (static, or DYNAMIC where a stride is a dynamic arg);
//   - the instructions, one PTO-ISA instruction each where the library has
//     one, a short composition where it does not (docs/pto-isa.md lists both);
//   - set_flag/wait_flag between consecutive instructions on different pipes
//     (MTE2 loads, V vector compute, MTE3 stores).
// A cube function (matmul) goes through L1, L0A, L0B and L0C with TMATMUL
// (ascend_cube_codegen.h); a sort function (MSORT) through TSORT32 and
// TMRGSORT (ascend_sort_codegen.h).
// Under __CPU_SIM the source also exports the executor's C ABI
// (runtime/kernel_abi.h: pto_abi_version, pto_num_blocks, pto_block), each
// block an adapter from (buffers, args) to the AICORE entry, so a CPU
// simulation build runs in the MPMD executor as a host kernel does.
//
// An instruction or operand the target cannot express yet is UNIMPLEMENTED
// naming the function and the opcode (e.g. "TMATMUL", "TSIN").
#ifndef PTO_COMPILER_TARGETS_ASCEND_ASCEND_CODEGEN_H_
#define PTO_COMPILER_TARGETS_ASCEND_ASCEND_CODEGEN_H_

#include <string>

#include "absl/status/statusor.h"
#include "compiler/pto/pto_program.h"

namespace pto::compiler {

absl::StatusOr<std::string> GenerateAscendSource(const PtoProgram& program);

namespace ascend {

// The C++ element type of a GM buffer of `dtype` in the generated source.
const char* GmElem(pto::v1::DataType dtype);

}  // namespace ascend

}  // namespace pto::compiler

#endif  // PTO_COMPILER_TARGETS_ASCEND_ASCEND_CODEGEN_H_
