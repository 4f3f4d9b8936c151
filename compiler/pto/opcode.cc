#include "compiler/pto/opcode.h"

namespace pto::compiler {
namespace {

struct OpcodeFacts {
  const char* name;
  const char* host;
  int srcs;
  int scalars;
};

const OpcodeFacts& Facts(PtoOpcode op) {
  static const OpcodeFacts kFacts[] = {
#define PTO_OPCODE_FACTS(e, name, fn, srcs, scalars) {name, #fn, srcs, scalars},
      PTO_OPCODES(PTO_OPCODE_FACTS)
#undef PTO_OPCODE_FACTS
  };
  return kFacts[static_cast<int>(op)];
}

}  // namespace

const char* PtoOpcodeName(PtoOpcode op) { return Facts(op).name; }
const char* PtoHostFunction(PtoOpcode op) { return Facts(op).host; }
int PtoNumTileSources(PtoOpcode op) { return Facts(op).srcs; }
int PtoNumScalars(PtoOpcode op) { return Facts(op).scalars; }

bool PtoHasRowsForm(PtoOpcode op) {
  switch (op) {
    case PtoOpcode::kTAdd: case PtoOpcode::kTSub: case PtoOpcode::kTMul:
    case PtoOpcode::kTDiv: case PtoOpcode::kTPow: case PtoOpcode::kTMax:
    case PtoOpcode::kTMin: case PtoOpcode::kTAtan2: case PtoOpcode::kTHypot:
    case PtoOpcode::kTFmod:
      return true;
    default:
      return false;
  }
}

bool PtoAddressesWholeBuffer(PtoOpcode op) {
  return op == PtoOpcode::kMGather || op == PtoOpcode::kMScatter || op == PtoOpcode::kMSort;
}

bool PtoIsScan(PtoOpcode op) { return op == PtoOpcode::kTCumSum || op == PtoOpcode::kTCumProd; }

bool PtoReadsTileOffset(PtoOpcode op) {
  return op == PtoOpcode::kTArange || op == PtoOpcode::kTPhilox ||
         op == PtoOpcode::kTPhiloxNormal;
}

}  // namespace pto::compiler
