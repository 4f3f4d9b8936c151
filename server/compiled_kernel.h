// A compiled kernel as ptod caches it: the binary plus how long it took to
// make, so a hit can report (and credit) the compile time it saved.
#ifndef PTO_SERVER_COMPILED_KERNEL_H_
#define PTO_SERVER_COMPILED_KERNEL_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "pto/v1/compile_service.pb.h"
#include "pto/v1/kernel.pb.h"

namespace pto::server {

struct CompiledKernel {
  pto::v1::KernelBinary binary;
  // Seconds the original compile took.
  double compile_seconds = 0;
  // Per-stage times of the original compile, in pipeline order.
  std::vector<pto::v1::StageTiming> stages;
};

// Kernels are shared read-only between the memory cache, in-flight compiles
// and responses.
using CompiledKernelPtr = std::shared_ptr<const CompiledKernel>;

// Approximate memory a cached kernel holds (what the memory LRU is bounded
// by).
inline size_t KernelMemoryBytes(const CompiledKernel& kernel) {
  return kernel.binary.ByteSizeLong() + sizeof(CompiledKernel) +
         kernel.stages.size() * sizeof(pto::v1::StageTiming);
}

}  // namespace pto::server

#endif  // PTO_SERVER_COMPILED_KERNEL_H_
