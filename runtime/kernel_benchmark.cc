// Cost of a run with a large workspace: the pool's reused arena against a
// fresh arena every run (set_max_idle_workspaces(0), the behaviour before the
// pool). y = (x + 1) * 2 over `n` floats with an n-float workspace; the two
// settings alternate in one process, so machine load hits both alike.
//
//   bazel run -c opt //runtime:kernel_benchmark [-- MiB...]   (default 8 64)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runtime/executor.h"
#include "runtime/kernel.h"
#include "runtime/test_payload.h"

namespace pto::runtime {
namespace {

double Seconds(const Kernel& kernel, absl::Span<const TensorArg> args) {
  auto start = std::chrono::steady_clock::now();
  absl::Status s = kernel.Run(args);
  if (!s.ok()) {
    std::fprintf(stderr, "run failed: %s\n", s.ToString().c_str());
    std::exit(1);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Bench(int64_t mib) {
  const int64_t n = mib * (1 << 20) / 4;
  auto binary = testing::AddOneTimesTwoBinary(n, 1 << 16);
  if (!binary.ok()) {
    std::fprintf(stderr, "%s\n", binary.status().ToString().c_str());
    return 1;
  }
  auto kernel = Kernel::Load(*binary);
  if (!kernel.ok()) {
    std::fprintf(stderr, "%s\n", kernel.status().ToString().c_str());
    return 1;
  }
  std::vector<float> x(n, 1.0f), y(n);
  std::vector<TensorArg> args = {{x.data(), pto::v1::DT_FP32, {n}},
                                 {y.data(), pto::v1::DT_FP32, {n}}};
  constexpr int kRounds = 15, kBlock = 3;
  std::vector<double> pooled, fresh;
  for (int r = 0; r < kRounds; ++r) {
    (*kernel)->set_max_idle_workspaces(Kernel::kMaxIdleWorkspaces);
    Seconds(**kernel, args);  // warm the pool
    for (int i = 0; i < kBlock; ++i) pooled.push_back(Seconds(**kernel, args));
    (*kernel)->set_max_idle_workspaces(0);
    for (int i = 0; i < kBlock; ++i) fresh.push_back(Seconds(**kernel, args));
  }
  const double p = Median(pooled), f = Median(fresh);
  std::printf(
      "| workspace %ld MiB, y = (x+1)*2 over %ld floats | fresh arena per run "
      "%.2f ms | pooled arena %.2f ms | fresh/pooled %.2fx |\n",
      static_cast<long>(mib), static_cast<long>(n), f * 1e3, p * 1e3, f / p);
  return 0;
}

}  // namespace
}  // namespace pto::runtime

int main(int argc, char** argv) {
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atol(argv[i]));
  if (sizes.empty()) sizes = {8, 64};
  for (int64_t mib : sizes) {
    if (mib <= 0) {
      std::fprintf(stderr, "sizes are MiB > 0, got '%ld'\n",
                   static_cast<long>(mib));
      return 2;
    }
    if (int rc = pto::runtime::Bench(mib); rc != 0) return rc;
  }
  return 0;
}
