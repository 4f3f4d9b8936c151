#include "server/worker_pool.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace pto::server {

WorkerPool::WorkerPool(int threads, size_t queue_capacity)
    : queue_capacity_(queue_capacity) {
  if (threads < 1) threads = 1;
  threads_.reserve(threads);
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this] { WorkerLoop(); });
  }
}

WorkerPool::~WorkerPool() { Shutdown(); }

absl::Status WorkerPool::Submit(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  if (shutting_down_) {
    return absl::FailedPreconditionError("worker pool is shutting down");
  }
  if (queue_.size() >= queue_capacity_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("compile queue is full (", queue_.size(), " waiting, ",
                     running_, " running)"));
  }
  queue_.push_back(std::move(task));
  return absl::OkStatus();
}

void WorkerPool::Shutdown() {
  absl::MutexLock join_lock(&join_mu_);
  {
    absl::MutexLock lock(&mu_);
    shutting_down_ = true;
  }
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

size_t WorkerPool::queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

int WorkerPool::running() const {
  absl::MutexLock lock(&mu_);
  return running_;
}

void WorkerPool::WorkerLoop() {
  auto has_work_or_done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !queue_.empty() || shutting_down_;
  };
  while (true) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(&has_work_or_done));
      // Drain before exiting: queued work was accepted and has waiters.
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    task();
    absl::MutexLock lock(&mu_);
    --running_;
  }
}

}  // namespace pto::server
