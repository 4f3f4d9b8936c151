#include "compiler/reference/reference_create.h"

#include "compiler/reference/reference_error.h"
#include "compiler/reference/reference_family.h"

namespace pto::reference {

absl::Status EvaluateCreation(const pto::v1::Op& op, const std::string& where,
                              RefTensor* out) {
  const std::string& kind = op.kind();
  // Float attributes reach the kernel as floats (full's value as a
  // double for INT32, INT64 and DOUBLE results; arange's start and step
  // always as doubles).
  auto attr = [&](const char* name) {
    auto it = op.attrs().find(name);
    if (it == op.attrs().end()) return 0.0;
    return kind == "arange" || WideScalars(out->dtype)
               ? it->second.f()
               : static_cast<double>(static_cast<float>(it->second.f()));
  };
  int64_t n = 1;
  for (int64_t d : out->shape) n *= d;
  out->data.resize(n);
  for (int64_t k = 0; k < n; ++k) {
    out->data[k] = kind == "full" ? attr("value")
                                  : attr("start") + attr("step") * static_cast<double>(k);
    out->data[k] = RoundToDType(out->data[k], out->dtype);
  }
  out->bound.resize(n);
  for (int64_t k = 0; k < n; ++k) out->bound[k] = OpError(kind, out->data[k], out->dtype);
  return absl::OkStatus();
}

}  // namespace pto::reference
