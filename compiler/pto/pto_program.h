// A PTO program: the kernel's buffers and block functions as PTO tile
// instructions, with a stable text form (PrintPto) for debugging, golden tests
// and KernelBinary.pto_text:
//
//   .kernel exp_add  target=host-x86_64-v3
//   .buffer %0 param in  f32[3,5]
//   .buffer %2 param out f32[3,5]
//   .func @f0 vector args=2 tile=[2,4]
//     TLOAD  %t0:ub.f32[2,4], %0[a0, a1]
//     TEXP   %t1:ub.f32[2,4], %t0
//     TSTORE %2[a0, a1], %t1
//   .end
//
// Semantics: a function runs once per task; aK is the task's K-th argument
// (the tile offset in dim K). A UB tile has an element type (ub.f32,
// ub.f16): TLOAD reads the region [a, a + tile) of a GM buffer into a tile of
// the buffer's type; arithmetic computes in f32, element by element, and
// rounds each result to its destination tile's type (f16: to nearest even),
// so an f16 value is rounded the same whether it stays in UB or passes
// through GM; TSTORE writes a tile back. TADDS/TSUBS/TMULS/TDIVS take
// a scalar right operand (dst = src op s); TRSUBS/TRDIVS are the reversed
// forms (dst = s - src, dst = s / src). TMOV copies a tile. A TLOAD from a
// buffer of lower rank or with size-1 dims broadcasts it (numpy rules):
// `%1[0, a1]` repeats row 0 down the tile. BOOL buffers hold bytes 0/1,
// read into UB as 0.0/1.0; comparisons (TCMPxx) write 0.0/1.0. TCVT
// converts a tile to its destination's type (torch's rules). A function's UB
// tiles have the function's tile shape, except row tiles (a fused
// reduction over the last dim: extent 1 there, printed ub.f32[2,1]); on
// the host they are stored as f32 arrays, or int64/double arrays for
// INT32/INT64/DOUBLE values (PtoFunction::ub_types).
//
// A templated kernel (symbolic dims, loops) prints its buffers' symbolic
// shapes and, after a function's header, what each of its dynamic args dK
// holds: `.arg d0 = idx` (an offset, used as `%0[a0+d0, a1]`),
// `.arg d1 = n  ; stride(%0, 0)` (buffer %0's GM stride in dim 0), `; K`.
// Instruction operands keep the first probe's sizes where they have any.
#ifndef PTO_COMPILER_PTO_PTO_PROGRAM_H_
#define PTO_COMPILER_PTO_PTO_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/tile_graph.h"
#include "compiler/pto/opcode.h"
#include "pto/v1/graph.pb.h"
#include "pto/v1/kernel.pb.h"

namespace pto::compiler {

struct PtoBuffer {
  int param = -1;  // parameter index, -1 for a workspace
  pto::v1::ParamRole role = pto::v1::PARAM_ROLE_UNSPECIFIED;
  pto::v1::DataType dtype = pto::v1::DT_UNSPECIFIED;
  std::vector<int64_t> shape;
  // Printing only: the shape with its symbols (a templated kernel's code is
  // generated at probe sizes; GmBuffer::sym_shape).
  SymShape sym_shape;
};

struct PtoInstr {
  PtoOpcode op = PtoOpcode::kTMov;
  int dst = -1;           // UB tile written (not TSTORE)
  std::vector<int> srcs;  // UB tiles read
  int buffer = -1;        // GM buffer (TLOAD, TSTORE)
  std::vector<double> scalars;  // immediates (*S instructions, TCLIP)
  std::vector<int> scalar_dynamic;  // TileInstr::scalar_dynamic
  std::vector<GmIndex> index;   // TLOAD/TSTORE (see tile_graph.h)
  std::vector<int64_t> view_shape;  // TLOAD through a reshape (tile_graph.h)
  int reduce_dim = -1;          // TRED*/TARG*, TSTORE of a reduced tile
  pto::v1::DataType dtype = pto::v1::DT_FP32;  // dst tile's element type
  std::vector<int> stride_dynamic;  // TileInstr::stride_dynamic
  int index_dim = -1;               // TileInstr::index_dim (MGATHER, MSCATTER, MSORT)
  int extent_dynamic = -1;          // TileInstr::extent_dynamic (MGATHER, MSCATTER, MSORT)
  ScatterReduce scatter = ScatterReduce::kNone;  // MSCATTER
  bool descending = false;                       // MSORT
  std::vector<int64_t> img2col;                  // TileInstr::img2col (TIMG2COL)
};

struct PtoFunction {
  std::string name;             // [A-Za-z0-9_] only
  pto::v1::CoreType core = pto::v1::CORE_TYPE_VECTOR;
  int num_args = 0;             // tile offsets, one per dim
  std::vector<int64_t> tile;    // UB tile shape (the extents of its tiles)
  int num_tiles = 0;            // UB tiles %t0 .. %t(num_tiles-1)
  std::vector<pto::v1::DataType> ub_types;  // storage per tile (f32/i64/f64)
  // Row tiles (TileGroup::ub_rows): extent 1 in the last dim; an
  // elementwise instruction with a full destination repeats a row source's
  // value along the row.
  std::vector<bool> ub_rows;
  std::vector<PtoInstr> body;
  CubeLoop cube;  // core CUBE (matmul): the K loop its body runs
  // The tile's extents come from the last tile.size() args (a tail whose
  // extent depends on a loop index): loads and stores move only those,
  // the rest of each UB tile is zero (BlockFunction::runtime_extents).
  bool runtime_extents = false;
  // Printing only: what each dynamic arg dK (args[rank + K]) holds
  // (TileGroup::dynamic_args).
  std::vector<DynamicArgNote> dynamic_args;
};

struct PtoProgram {
  std::string kernel_name;  // sanitized: [A-Za-z0-9_] only
  std::string target;       // resolved target name
  std::vector<PtoBuffer> buffers;
  std::vector<PtoFunction> functions;  // index = pto_block index
};

std::string PrintPto(const PtoProgram& program);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_PTO_PTO_PROGRAM_H_
