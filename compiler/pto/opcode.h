// PTO tile instructions: the tile-level ISA between the compiler's Execute
// Graph and a target. Names follow the public PTO ISA where it has one;
// TRSUBS, TRDIVS and TRPOWS are this compiler's reversed-scalar forms
// and TFLOORDIV/TREM its floor division and remainder (torch's semantics)
// (dst = scalar - src, scalar / src, scalar ** src), TCMPxx(S) are TCMP with
// its comparison mode in the name, TCLIP takes two scalars (min, max), and
// TFMOD is C's fmod (the dividend's sign), TGCD the gcd of integers,
// TSIGNBIT the sign bit of a float as 0 or 1, TRESHAPE the ISA's bitwise
// reinterpretation, here between element types of one size (the shape
// kept), TSHL/TSHR shifts as torch's on x86 (the count modulo 32, or 64 for
// INT64), and
// TEXPSOFTMAX is exp where the lowering proved every input <= 0 or NaN
// (softmax's x - max(x): lower/softmax_exp.h).
// TCUMSUM and TCUMPROD are this compiler's own (the ISA has no cumulative
// instruction): the inclusive scan of a tile along one dim (PtoInstr::
// reduce_dim), seeded by a carry tile of extent 1 there (the previous
// tile's last slice), the destination of the source's shape; TREDLAST
// takes a tile's last slice along the dim (the next tile's carry).
// MGATHER and MSCATTER address a GM buffer through an index tile along one
// dim (PtoInstr::index_dim): gather, index_select, scatter, index_add.
// TPHILOX writes the words of Philox4x32-10 blocks (pypto.uniform and
// pypto.normal): element e of a rank-1 tile holds word e % 4 of the block at
// counter + e / 4, its six immediates the key's two 32-bit words and the
// counter's four, and it reads the tile's offset as TARANGE does;
// TPHILOXNORMAL (pypto.normal) takes the same immediates and writes the
// Box-Muller normals of those words, four per block, in f32.
// MSORT reads whole rows of a GM buffer along one dim (PtoInstr::index_dim)
// and writes the positions that sort them (stable; PtoInstr::descending):
// the compiler's form of PTO-ISA's TSORT32 blocks merged by TMRGSORT.
// TIMG2COL is a cube group's load of B (a conv's matmul): the
// [kb x n] block of the im2col matrix of a feature map in GM, built in L1
// with zero padding (PtoInstr::img2col, compiler/ops/img2col.h), so no
// im2col matrix is written to GM: PTO-ISA's TIMG2COL with its
// TSET_IMG2COL_RPT / TSET_IMG2COL_PADDING settings as operands.
// docs/pto-isa.md describes every instruction.
#ifndef PTO_COMPILER_PTO_OPCODE_H_
#define PTO_COMPILER_PTO_OPCODE_H_

namespace pto::compiler {

// The instruction table: X(enumerator, PTO name, host tile function,
// UB source tiles, scalar immediates). One line per instruction, so a new
// instruction is added here (and its host function in pto_tile.h).
#define PTO_OPCODES(X)                     \
  X(kTLoad, "TLOAD", TLoad, 0, 0)          \
  X(kTStore, "TSTORE", TStore, 1, 0)       \
  X(kTMov, "TMOV", TMov, 1, 0)             \
  X(kTAdd, "TADD", TAdd, 2, 0)             \
  X(kTSub, "TSUB", TSub, 2, 0)             \
  X(kTMul, "TMUL", TMul, 2, 0)             \
  X(kTDiv, "TDIV", TDiv, 2, 0)             \
  X(kTPow, "TPOW", TPow, 2, 0)             \
  X(kTMax, "TMAX", TMax, 2, 0)             \
  X(kTMin, "TMIN", TMin, 2, 0)             \
  X(kTFloorDiv, "TFLOORDIV", TFloorDiv, 2, 0) \
  X(kTRem, "TREM", TRem, 2, 0)             \
  X(kTCmpEq, "TCMPEQ", TCmpEq, 2, 0)       \
  X(kTCmpNe, "TCMPNE", TCmpNe, 2, 0)       \
  X(kTCmpLt, "TCMPLT", TCmpLt, 2, 0)       \
  X(kTCmpLe, "TCMPLE", TCmpLe, 2, 0)       \
  X(kTCmpGt, "TCMPGT", TCmpGt, 2, 0)       \
  X(kTCmpGe, "TCMPGE", TCmpGe, 2, 0)       \
  X(kTSel, "TSEL", TSel, 3, 0)             \
  X(kTCvt, "TCVT", TCvt, 1, 0)             \
  X(kTReshape, "TRESHAPE", TReshape, 1, 0) \
  X(kTRedSum, "TREDSUM", TRedSum, 1, 0)    \
  X(kTRedMax, "TREDMAX", TRedMax, 1, 0)    \
  X(kTRedMin, "TREDMIN", TRedMin, 1, 0)    \
  X(kTRedProd, "TREDPROD", TRedProd, 1, 0) \
  X(kTRedLast, "TREDLAST", TRedLast, 1, 0) \
  X(kTCumSum, "TCUMSUM", TCumSum, 2, 0)    \
  X(kTCumProd, "TCUMPROD", TCumProd, 2, 0) \
  X(kTArgFirst, "TARGFIRST", TArgFirst, 2, 0) \
  X(kTArgSel, "TARGSEL", TArgSel, 3, 0)    \
  X(kTFill, "TFILL", TFill, 0, 1)          \
  X(kTArange, "TARANGE", TArange, 0, 2)    \
  X(kTPhilox, "TPHILOX", TPhilox, 0, 6)    \
  X(kTPhiloxNormal, "TPHILOXNORMAL", TPhiloxNormal, 0, 6) \
  X(kTAddS, "TADDS", TAddS, 1, 1)          \
  X(kTSubS, "TSUBS", TSubS, 1, 1)          \
  X(kTMulS, "TMULS", TMulS, 1, 1)          \
  X(kTDivS, "TDIVS", TDivS, 1, 1)          \
  X(kTRSubS, "TRSUBS", TRSubS, 1, 1)       \
  X(kTRDivS, "TRDIVS", TRDivS, 1, 1)       \
  X(kTPowS, "TPOWS", TPowS, 1, 1)          \
  X(kTRPowS, "TRPOWS", TRPowS, 1, 1)       \
  X(kTMaxS, "TMAXS", TMaxS, 1, 1)          \
  X(kTMinS, "TMINS", TMinS, 1, 1)          \
  X(kTCmpEqS, "TCMPEQS", TCmpEqS, 1, 1)    \
  X(kTCmpNeS, "TCMPNES", TCmpNeS, 1, 1)    \
  X(kTCmpLtS, "TCMPLTS", TCmpLtS, 1, 1)    \
  X(kTCmpLeS, "TCMPLES", TCmpLeS, 1, 1)    \
  X(kTCmpGtS, "TCMPGTS", TCmpGtS, 1, 1)    \
  X(kTCmpGeS, "TCMPGES", TCmpGeS, 1, 1)    \
  X(kTClip, "TCLIP", TClip, 1, 2)          \
  X(kTExp, "TEXP", TExp, 1, 0)             \
  X(kTExpSoftmax, "TEXPSOFTMAX", TExpSoftmax, 1, 0) \
  X(kTExp2, "TEXP2", TExp2, 1, 0)          \
  X(kTExpM1, "TEXPM1", TExpM1, 1, 0)       \
  X(kTLog, "TLOG", TLog, 1, 0)             \
  X(kTLog2, "TLOG2", TLog2, 1, 0)          \
  X(kTLog10, "TLOG10", TLog10, 1, 0)       \
  X(kTLog1P, "TLOG1P", TLog1P, 1, 0)       \
  X(kTSqrt, "TSQRT", TSqrt, 1, 0)          \
  X(kTRsqrt, "TRSQRT", TRsqrt, 1, 0)       \
  X(kTRecip, "TRECIP", TRecip, 1, 0)       \
  X(kTNeg, "TNEG", TNeg, 1, 0)             \
  X(kTAbs, "TABS", TAbs, 1, 0)             \
  X(kTRelu, "TRELU", TRelu, 1, 0)          \
  X(kTSigmoid, "TSIGMOID", TSigmoid, 1, 0) \
  X(kTTanh, "TTANH", TTanh, 1, 0)          \
  X(kTErf, "TERF", TErf, 1, 0)             \
  X(kTErfc, "TERFC", TErfc, 1, 0)          \
  X(kTSign, "TSIGN", TSign, 1, 0)          \
  X(kTFloor, "TFLOOR", TFloor, 1, 0)       \
  X(kTCeil, "TCEIL", TCeil, 1, 0)          \
  X(kTRound, "TROUND", TRound, 1, 0)       \
  X(kTTrunc, "TTRUNC", TTrunc, 1, 0)       \
  X(kTSin, "TSIN", TSin, 1, 0)             \
  X(kTCos, "TCOS", TCos, 1, 0)             \
  X(kTTan, "TTAN", TTan, 1, 0)             \
  X(kTAsin, "TASIN", TAsin, 1, 0)          \
  X(kTAcos, "TACOS", TAcos, 1, 0)          \
  X(kTAtan, "TATAN", TAtan, 1, 0)          \
  X(kTAtan2, "TATAN2", TAtan2, 2, 0)       \
  X(kTSinh, "TSINH", TSinh, 1, 0)          \
  X(kTCosh, "TCOSH", TCosh, 1, 0)          \
  X(kTAsinh, "TASINH", TAsinh, 1, 0)       \
  X(kTAcosh, "TACOSH", TAcosh, 1, 0)       \
  X(kTAtanh, "TATANH", TAtanh, 1, 0)       \
  X(kTCbrt, "TCBRT", TCbrt, 1, 0)          \
  X(kTHypot, "THYPOT", THypot, 2, 0)       \
  X(kTFmod, "TFMOD", TFmod, 2, 0)          \
  X(kTGcd, "TGCD", TGcd, 2, 0)             \
  X(kTSignbit, "TSIGNBIT", TSignbit, 1, 0) \
  X(kTAnd, "TAND", TAnd, 2, 0)             \
  X(kTOr, "TOR", TOr, 2, 0)                \
  X(kTXor, "TXOR", TXor, 2, 0)             \
  X(kTNot, "TNOT", TNot, 1, 0)             \
  X(kTShl, "TSHL", TShl, 2, 0)             \
  X(kTShr, "TSHR", TShr, 2, 0)             \
  X(kMGather, "MGATHER", MGather, 1, 0)   \
  X(kMScatter, "MSCATTER", MScatter, 2, 0) \
  X(kMSort, "MSORT", MSort, 0, 0)          \
  X(kTMatmul, "TMATMUL", CubeMatmul, 2, 0) \
  X(kTMatmulAcc, "TMATMUL_ACC", CubeMatmulAcc, 2, 0) \
  X(kTImg2Col, "TIMG2COL", CubeLoadImg2Col, 0, 0)

enum class PtoOpcode {
#define PTO_OPCODE_ENUM(e, name, fn, srcs, scalars) e,
  PTO_OPCODES(PTO_OPCODE_ENUM)
#undef PTO_OPCODE_ENUM
};

// "TLOAD", "TADD", ...
const char* PtoOpcodeName(PtoOpcode op);

// The host tile function (pto_tile.h) that executes it: "TAdd", ...
const char* PtoHostFunction(PtoOpcode op);

// How many UB source tiles the instruction reads (TLOAD: 0, TSTORE: 1).
int PtoNumTileSources(PtoOpcode op);

// How many scalar immediates the instruction takes (TADDS: 1, TCLIP: 2).
int PtoNumScalars(PtoOpcode op);

// Whether the binary instruction has a Rows form (pto_tile.h TAddRows, ...):
// one operand a row tile (one value per row) read against a full tile. Row
// fusion (lower/fuse_groups.h) keeps a row value in a row tile only when every
// full-tile reader has this form, and host codegen emits it.
bool PtoHasRowsForm(PtoOpcode op);

// Whether the instruction addresses a whole GM buffer by data rather than
// through its task's region: MGATHER, MSCATTER (through an index tile) and
// MSORT (whole rows along its dim). They take the plain host form (whole
// tiles, every other operand in UB); the buffer's strides and its extent
// along the dim may be run-time values.
bool PtoAddressesWholeBuffer(PtoOpcode op);

// Whether the instruction is a scan (TCUMSUM, TCUMPROD): its reduce_dim
// is the dim it scans, and its destination keeps the source's shape.
bool PtoIsScan(PtoOpcode op);

// Whether the instruction reads its tile's offset in the (rank-1) tensor it
// creates: TARANGE, TPHILOX and TPHILOXNORMAL. Host code passes the task's offset; the
// chunked, per-row and run-time-row forms do not take them.
bool PtoReadsTileOffset(PtoOpcode op);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_PTO_OPCODE_H_
