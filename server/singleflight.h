// Coalesces identical in-flight work: while the work for a key runs, every
// other caller with the same key waits for that run's result instead of
// starting its own.
//
//   Singleflight flights;
//   Singleflight::Outcome out = flights.Do(
//       key, [&] { return CompileAndStore(request); },   // the work
//       [&](std::function<void()> run) { return pool.Submit(std::move(run)); },
//       deadline);
//   out.result   // the kernel or the work's error
//   out.shared   // true when this caller joined another caller's run
//
// The work runs detached from the caller that started it (on whatever the
// launcher schedules it on), so a caller that gives up (deadline, cancelled
// RPC) does not take the result away from the others. Each caller waits with
// its own deadline. A failure goes to every caller waiting at the time and is
// then forgotten: the next caller starts a fresh run. The in-flight entry is
// removed by compare-and-delete, so a finishing run never removes a newer
// run's entry. A run whose callers have all given up before it started is
// not started (DEADLINE_EXCEEDED): under overload the queue does not fill
// with work nobody waits for.
#ifndef PTO_SERVER_SINGLEFLIGHT_H_
#define PTO_SERVER_SINGLEFLIGHT_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/compiled_kernel.h"

namespace pto::server {

class Singleflight {
 public:
  using Result = absl::StatusOr<CompiledKernelPtr>;
  // Produces the result for a key. Runs at most once per flight.
  using Work = std::function<Result()>;
  // Schedules `run` to be called exactly once, or returns an error (e.g. a
  // full queue) without calling it.
  using Launcher = std::function<absl::Status(std::function<void()> run)>;

  struct Outcome {
    Result result;
    // Whether this caller joined a run another caller started.
    bool shared = false;
  };

  Singleflight() = default;
  Singleflight(const Singleflight&) = delete;
  Singleflight& operator=(const Singleflight&) = delete;

  // Joins the flight for `key`, or starts one by handing `work` to `launch`.
  // Waits until the flight finishes, `deadline` passes (DEADLINE_EXCEEDED),
  // or `cancelled` (when given; polled a few times a second) returns true
  // (CANCELLED); in both cases the flight carries on for the others. When
  // `launch` fails, its error is the result of this caller and of any caller
  // that joined meanwhile.
  //
  // Whatever `launch` schedules holds references to this object: keep it
  // alive until the launched runs have finished (drain the pool first).
  Outcome Do(const std::string& key, Work work, const Launcher& launch,
             absl::Time deadline,
             const std::function<bool()>& cancelled = nullptr);

  // Keys with a run in flight.
  size_t in_flight() const;

 private:
  struct Flight {
    // Callers still waiting (guarded by the Singleflight's mu_).
    int waiters = 0;
    absl::Mutex mu;
    bool done ABSL_GUARDED_BY(mu) = false;
    Result result ABSL_GUARDED_BY(mu);
  };

  // Called by the launched run before the work: false (and the flight
  // finished with an error) when every caller has left.
  bool StillWanted(const std::string& key,
                   const std::shared_ptr<Flight>& flight);

  // A caller stops waiting for `flight`.
  void Leave(const std::shared_ptr<Flight>& flight);

  // Removes `key` if it still maps to `flight`, then publishes `result` to
  // its waiters.
  void Finish(const std::string& key, const std::shared_ptr<Flight>& flight,
              Result result);

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Flight>> flights_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace pto::server

#endif  // PTO_SERVER_SINGLEFLIGHT_H_
