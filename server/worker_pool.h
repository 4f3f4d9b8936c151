// A fixed set of threads running tasks from a bounded queue.
//
//   WorkerPool pool(/*threads=*/8, /*queue_capacity=*/256);
//   absl::Status s = pool.Submit([] { ... });
//   if (absl::IsResourceExhausted(s)) ...   // queue full: shed load, retry later
//   pool.Shutdown();                         // runs what is queued, then joins
//
// The queue bound is the point: under overload ptod answers
// RESOURCE_EXHAUSTED at once instead of growing an unbounded backlog whose
// tail would miss every deadline anyway.
#ifndef PTO_SERVER_WORKER_POOL_H_
#define PTO_SERVER_WORKER_POOL_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace pto::server {

class WorkerPool {
 public:
  // Starts `threads` (at least 1) workers; at most `queue_capacity` tasks
  // wait for a worker at any time (tasks being run do not count).
  WorkerPool(int threads, size_t queue_capacity);
  // Shutdown().
  ~WorkerPool();

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`. RESOURCE_EXHAUSTED when the queue is full,
  // FAILED_PRECONDITION after Shutdown(); the task is then not run.
  absl::Status Submit(std::function<void()> task);

  // Refuses new tasks, runs every task already queued, and joins the
  // workers. Idempotent.
  void Shutdown();

  int threads() const { return static_cast<int>(threads_.size()); }
  size_t queue_capacity() const { return queue_capacity_; }
  // Tasks waiting for a worker.
  size_t queued() const;
  // Tasks being run.
  int running() const;

 private:
  void WorkerLoop();

  const size_t queue_capacity_;
  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::thread> threads_;
  absl::Mutex join_mu_;  // serializes concurrent Shutdown() calls
};

}  // namespace pto::server

#endif  // PTO_SERVER_WORKER_POOL_H_
