// PTO tile instructions: the tile-level ISA between the compiler's Execute
// Graph and a target. Names follow the public PTO ISA; TRSUBS and TRDIVS are
// this compiler's reversed-scalar forms (dst = scalar - src, scalar / src).
#ifndef PTO_COMPILER_PTO_OPCODE_H_
#define PTO_COMPILER_PTO_OPCODE_H_

namespace pto::compiler {

enum class PtoOpcode {
  kTLoad,   // UB tile <- GM region
  kTStore,  // GM region <- UB tile
  kTMov,    // UB tile <- UB tile
  kTAdd,
  kTSub,
  kTMul,
  kTDiv,
  kTAddS,
  kTSubS,
  kTMulS,
  kTDivS,
  kTRSubS,
  kTRDivS,
  kTExp,
  kTNeg,
  kTAbs,
};

// "TLOAD", "TADD", ...
const char* PtoOpcodeName(PtoOpcode op);

// How many UB source tiles the instruction reads (TLOAD: 0, TSTORE: 1).
int PtoNumTileSources(PtoOpcode op);

// Whether the instruction takes a scalar immediate (TADDS ... TRDIVS).
bool PtoHasScalar(PtoOpcode op);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_PTO_OPCODE_H_
