// Helpers for ptod's integration tests: graphs, temp dirs, a compile-counting
// backend, and tiny clients for health checking and /metrics.
#ifndef PTO_TESTS_PTOD_TEST_UTIL_H_
#define PTO_TESTS_PTOD_TEST_UTIL_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "pto/v1/compile_service.pb.h"
#include "pto/v1/graph.pb.h"
#include "server/compiler_backend.h"

namespace pto::testing {

// out = x + y on FP32 tensors of `shape` (vector tiles of `tile`).
pto::v1::Graph AddGraph(const std::vector<int64_t>& shape = {64, 128},
                        const std::vector<int64_t>& tile = {32, 64});

// A fresh directory under $TEST_TMPDIR; removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The backend integration tests compile with (real_backend.cc:
// pto::compiler).
std::unique_ptr<pto::server::CompilerBackend> MakeInnerBackend();
// Whether MakeInnerBackend() is the real compiler.
bool InnerBackendIsReal();

// Wraps a backend: counts compiles, can hold them until released, and can
// fail the next N.
class CountingBackend final : public pto::server::CompilerBackend {
 public:
  explicit CountingBackend(std::unique_ptr<pto::server::CompilerBackend> inner)
      : inner_(std::move(inner)) {}

  absl::StatusOr<std::string> Key(
      const pto::v1::CompileRequest& request) override {
    return inner_->Key(request);
  }
  absl::StatusOr<pto::server::CompiledKernel> Compile(
      const pto::v1::CompileRequest& request) override;

  int compiles() const { return compiles_.load(); }
  // Compiles from now on wait (after counting) until Release().
  void Hold();
  void Release();
  // Notified when the first compile has started.
  absl::Notification& first_compile_started() { return started_; }
  void FailNext(int n) { fail_next_ = n; }
  // Extra time every compile takes.
  void set_delay(absl::Duration d) { delay_ = d; }

 private:
  std::unique_ptr<pto::server::CompilerBackend> inner_;
  std::atomic<int> compiles_{0};
  std::atomic<int> fail_next_{0};
  absl::Notification started_;
  absl::Mutex mu_;
  bool held_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration delay_ = absl::ZeroDuration();
};

// grpc.health.v1 Check against `address`: the status name ("SERVING", ...).
absl::StatusOr<std::string> HealthCheck(const std::string& address,
                                        const std::string& service = "");

// CompileService.Compile of `graph` for `target` against a ptod at
// `address`: its response, or the call's status.
absl::StatusOr<pto::v1::CompileResponse> CompileAt(
    const std::string& address, const pto::v1::Graph& graph,
    const std::string& target = "host",
    absl::Duration deadline = absl::Seconds(120));

// GET http://127.0.0.1:<port><path>: the whole response (status line,
// headers, body).
absl::StatusOr<std::string> HttpGet(int port, const std::string& path);

}  // namespace pto::testing

#endif  // PTO_TESTS_PTOD_TEST_UTIL_H_
