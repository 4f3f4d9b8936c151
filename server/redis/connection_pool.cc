#include "server/redis/connection_pool.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace pto::server::redis {

ConnectionPool::ConnectionPool(PoolOptions options)
    : options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<Connection>> ConnectionPool::Borrow(
    const std::string& address) {
  {
    absl::MutexLock lock(&mu_);
    Node& node = nodes_[address];
    const absl::Time now = absl::Now();
    if (now < node.down_until) {
      return absl::UnavailableError(absl::StrCat(
          "Redis node ", address, " is down (retried in ",
          absl::FormatDuration(node.down_until - now), ")",
          node.last_error.empty() ? "" : ": ", node.last_error));
    }
    if (!node.idle.empty()) {
      std::unique_ptr<Connection> c = std::move(node.idle.back());
      node.idle.pop_back();
      return c;
    }
    ++opened_;
  }
  // Connect outside the lock: it may take up to the connect timeout.
  absl::StatusOr<std::unique_ptr<Connection>> c =
      Connection::Open(address, options_.connection);
  if (!c.ok()) {
    if (absl::IsUnavailable(c.status()) ||
        absl::IsDeadlineExceeded(c.status())) {
      // The error without the "Redis node <address>: " the message repeats.
      MarkDown(address,
               std::string(absl::StripPrefix(
                   c.status().message(),
                   absl::StrCat("Redis node ", address, ": "))));
    }
    return c.status();
  }
  absl::MutexLock lock(&mu_);
  nodes_[address].failures = 0;
  return c;
}

void ConnectionPool::Return(std::unique_ptr<Connection> connection) {
  if (connection == nullptr) return;
  if (connection->broken()) {
    MarkDown(connection->address(), connection->error());
    return;
  }
  std::unique_ptr<Connection> closed;  // closed outside the lock
  absl::MutexLock lock(&mu_);
  Node& node = nodes_[connection->address()];
  node.failures = 0;
  if (node.idle.size() < options_.max_idle_per_node) {
    node.idle.push_back(std::move(connection));
  } else {
    closed = std::move(connection);
  }
}

void ConnectionPool::MarkDown(const std::string& address,
                              const std::string& error) {
  std::vector<std::unique_ptr<Connection>> closed;
  absl::MutexLock lock(&mu_);
  Node& node = nodes_[address];
  node.last_error = error;
  closed.swap(node.idle);
  absl::Duration backoff = options_.down_min;
  for (int i = 0; i < node.failures && backoff < options_.down_max; ++i) {
    backoff *= 2;
  }
  backoff = std::min(backoff, options_.down_max);
  node.failures = std::min(node.failures + 1, 30);
  node.down_until = absl::Now() + backoff;
}

bool ConnectionPool::IsDown(const std::string& address) const {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(address);
  return it != nodes_.end() && absl::Now() < it->second.down_until;
}

uint64_t ConnectionPool::connections_opened() const {
  absl::MutexLock lock(&mu_);
  return opened_;
}

}  // namespace pto::server::redis
