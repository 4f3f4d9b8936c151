#include "compiler/pto/opcode.h"

namespace pto::compiler {

const char* PtoOpcodeName(PtoOpcode op) {
  switch (op) {
    case PtoOpcode::kTLoad: return "TLOAD";
    case PtoOpcode::kTStore: return "TSTORE";
    case PtoOpcode::kTMov: return "TMOV";
    case PtoOpcode::kTAdd: return "TADD";
    case PtoOpcode::kTSub: return "TSUB";
    case PtoOpcode::kTMul: return "TMUL";
    case PtoOpcode::kTDiv: return "TDIV";
    case PtoOpcode::kTAddS: return "TADDS";
    case PtoOpcode::kTSubS: return "TSUBS";
    case PtoOpcode::kTMulS: return "TMULS";
    case PtoOpcode::kTDivS: return "TDIVS";
    case PtoOpcode::kTRSubS: return "TRSUBS";
    case PtoOpcode::kTRDivS: return "TRDIVS";
    case PtoOpcode::kTExp: return "TEXP";
    case PtoOpcode::kTNeg: return "TNEG";
    case PtoOpcode::kTAbs: return "TABS";
  }
  return "T?";
}

int PtoNumTileSources(PtoOpcode op) {
  switch (op) {
    case PtoOpcode::kTLoad: return 0;
    case PtoOpcode::kTAdd:
    case PtoOpcode::kTSub:
    case PtoOpcode::kTMul:
    case PtoOpcode::kTDiv: return 2;
    default: return 1;
  }
}

bool PtoHasScalar(PtoOpcode op) {
  switch (op) {
    case PtoOpcode::kTAddS:
    case PtoOpcode::kTSubS:
    case PtoOpcode::kTMulS:
    case PtoOpcode::kTDivS:
    case PtoOpcode::kTRSubS:
    case PtoOpcode::kTRDivS: return true;
    default: return false;
  }
}

}  // namespace pto::compiler
