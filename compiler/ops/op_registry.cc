#include "compiler/ops/op_registry.h"

namespace pto::compiler {
namespace {

using C = OpCategory;
using P = PtoOpcode;

OpInfo Binary(const char* kind, P pto) {
  return {kind, C::kElementwiseBinary, 2, 1, {}, true, pto};
}
OpInfo WithScalar(const char* kind, P pto) {
  return {kind, C::kElementwiseScalar, 1, 1, {{"scalar", AttrType::kFloat}},
          true, pto};
}
OpInfo Unary(const char* kind, P pto) {
  return {kind, C::kElementwiseUnary, 1, 1, {}, true, pto};
}

std::vector<OpInfo>* MakeRegistry() {
  return new std::vector<OpInfo>{
      Binary("add", P::kTAdd),
      Binary("sub", P::kTSub),
      Binary("mul", P::kTMul),
      Binary("div", P::kTDiv),
      WithScalar("adds", P::kTAddS),
      WithScalar("subs", P::kTSubS),
      WithScalar("muls", P::kTMulS),
      WithScalar("divs", P::kTDivS),
      WithScalar("rsubs", P::kTRSubS),  // scalar - x
      WithScalar("rdivs", P::kTRDivS),  // scalar / x
      Unary("exp", P::kTExp),
      Unary("neg", P::kTNeg),
      Unary("abs", P::kTAbs),
      // Identity; the front end records `out[:] = param` as a copy.
      Unary("copy", P::kTMov),
  };
}

}  // namespace

const char* AttrTypeName(AttrType type) {
  switch (type) {
    case AttrType::kInt: return "i";
    case AttrType::kFloat: return "f";
    case AttrType::kString: return "s";
    case AttrType::kBool: return "b";
    case AttrType::kDType: return "dtype";
    case AttrType::kInts: return "ints";
  }
  return "?";
}

const std::vector<OpInfo>& AllOps() {
  static const std::vector<OpInfo>* ops = MakeRegistry();
  return *ops;
}

const OpInfo* FindOp(absl::string_view kind) {
  for (const OpInfo& info : AllOps()) {
    if (info.kind == kind) return &info;
  }
  return nullptr;
}

}  // namespace pto::compiler
