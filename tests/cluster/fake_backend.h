// A compiler backend for the cluster tests, where what matters is how often
// each kernel is compiled and which bytes are served, not the code: the
// request's target names the kernel ("kernel-7"), its key is the SHA-256 of
// target and options, and its payload is derived from the key, so a wrong
// kernel served for a key is visible. A request with option "fail" fails
// its compile (after counting it).
#ifndef PTO_TESTS_CLUSTER_FAKE_BACKEND_H_
#define PTO_TESTS_CLUSTER_FAKE_BACKEND_H_

#include <atomic>
#include <string>

#include "absl/time/time.h"
#include "server/compiler_backend.h"

namespace pto::testing {

// The payload FakeBackend compiles for `key`.
std::string FakePayload(const std::string& key);

class FakeBackend final : public pto::server::CompilerBackend {
 public:
  explicit FakeBackend(std::atomic<int>* compiles,
                       absl::Duration delay = absl::ZeroDuration())
      : compiles_(compiles), delay_(delay) {}

  absl::StatusOr<std::string> Key(
      const pto::v1::CompileRequest& request) override;
  absl::StatusOr<pto::server::CompiledKernel> Compile(
      const pto::v1::CompileRequest& request) override;

 private:
  std::atomic<int>* const compiles_;
  const absl::Duration delay_;
};

}  // namespace pto::testing

#endif  // PTO_TESTS_CLUSTER_FAKE_BACKEND_H_
