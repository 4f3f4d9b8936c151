#include "server/singleflight.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace pto::server {

Singleflight::Outcome Singleflight::Do(const std::string& key, Work work,
                                       const Launcher& launch,
                                       absl::Time deadline,
                                       const std::function<bool()>& cancelled) {
  std::shared_ptr<Flight> flight;
  bool leader = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = flights_.find(key);
    if (it != flights_.end()) {
      flight = it->second;
    } else {
      flight = std::make_shared<Flight>();
      flights_.emplace(key, flight);
      leader = true;
    }
    ++flight->waiters;
  }

  if (leader) {
    // The run owns what it needs (the work and the flight), not the caller's
    // stack: it may outlive this call.
    absl::Status launched =
        launch([this, key, flight, work = std::move(work)]() {
          if (StillWanted(key, flight)) Finish(key, flight, work());
        });
    if (!launched.ok()) Finish(key, flight, launched);
  }

  Outcome outcome;
  outcome.shared = !leader;
  absl::MutexLock lock(&flight->mu);
  auto done = [&flight]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(flight->mu) {
    return flight->done;
  };
  // How often a waiter looks at `cancelled`.
  constexpr absl::Duration kCancelPoll = absl::Milliseconds(100);
  while (!flight->done) {
    const absl::Time wake =
        cancelled ? std::min(deadline, absl::Now() + kCancelPoll) : deadline;
    if (flight->mu.AwaitWithDeadline(absl::Condition(&done), wake)) break;
    if (absl::Now() >= deadline) {
      Leave(flight);
      outcome.result = absl::DeadlineExceededError(absl::StrCat(
          "deadline passed while waiting for the compile of key ",
          key.substr(0, 12), " (it carries on for other callers)"));
      return outcome;
    }
    if (cancelled && cancelled()) {
      Leave(flight);
      outcome.result = absl::CancelledError(absl::StrCat(
          "request cancelled while waiting for the compile of key ",
          key.substr(0, 12), " (it carries on for other callers)"));
      return outcome;
    }
  }
  outcome.result = flight->result;
  return outcome;
}

void Singleflight::Leave(const std::shared_ptr<Flight>& flight) {
  absl::MutexLock lock(&mu_);
  --flight->waiters;
}

bool Singleflight::StillWanted(const std::string& key,
                               const std::shared_ptr<Flight>& flight) {
  {
    // Under mu_, so that no caller joins between the check and the removal.
    absl::MutexLock lock(&mu_);
    if (flight->waiters > 0) return true;
    auto it = flights_.find(key);
    if (it != flights_.end() && it->second == flight) flights_.erase(it);
  }
  absl::MutexLock lock(&flight->mu);
  flight->result = absl::DeadlineExceededError(absl::StrCat(
      "every caller of the compile of key ", key.substr(0, 12),
      " left before it started; not compiled"));
  flight->done = true;
  return false;
}

void Singleflight::Finish(const std::string& key,
                          const std::shared_ptr<Flight>& flight,
                          Result result) {
  {
    // Compare-and-delete: only this flight's own entry. Removing it before
    // publishing means a caller arriving from now on starts a new run (and
    // finds a success in the cache first) instead of being handed a stale
    // failure.
    absl::MutexLock lock(&mu_);
    auto it = flights_.find(key);
    if (it != flights_.end() && it->second == flight) flights_.erase(it);
  }
  absl::MutexLock lock(&flight->mu);
  flight->result = std::move(result);
  flight->done = true;
}

size_t Singleflight::in_flight() const {
  absl::MutexLock lock(&mu_);
  return flights_.size();
}

}  // namespace pto::server
