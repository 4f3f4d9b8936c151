#include "server/redis/connection.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace pto::server::redis {
namespace {

timeval TimevalOf(absl::Duration d) {
  if (d < absl::Milliseconds(1)) d = absl::Milliseconds(1);
  return absl::ToTimeval(d);
}

// Copies `r` into a Reply, counting string bytes into `*bytes`; false when
// they exceed `max_bytes`.
bool CopyReply(const redisReply* r, size_t max_bytes, size_t* bytes,
               Reply* out) {
  switch (r->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      *bytes += r->len;
      if (*bytes > max_bytes) return false;
      out->type = r->type == REDIS_REPLY_STRING   ? Reply::kString
                  : r->type == REDIS_REPLY_STATUS ? Reply::kStatus
                                                  : Reply::kError;
      out->str.assign(r->str, r->len);
      return true;
    case REDIS_REPLY_INTEGER:
      out->type = Reply::kInteger;
      out->integer = r->integer;
      return true;
    case REDIS_REPLY_ARRAY:
      out->type = Reply::kArray;
      out->elements.resize(r->elements);
      for (size_t i = 0; i < r->elements; ++i) {
        if (!CopyReply(r->element[i], max_bytes, bytes, &out->elements[i])) {
          return false;
        }
      }
      return true;
    default:
      out->type = Reply::kNil;
      return true;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Connection>> Connection::Open(
    const std::string& address, const ConnectionOptions& options) {
  std::string host;
  int port = 0;
  if (!SplitAddress(address, &host, &port)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Redis address \"", address, "\" is not host:port"));
  }
  redisContext* context = redisConnectWithTimeout(
      host.c_str(), port, TimevalOf(options.connect_timeout));
  if (context == nullptr) {
    return absl::ResourceExhaustedError("hiredis: out of memory");
  }
  if (context->err != 0) {
    absl::Status status = absl::UnavailableError(absl::StrCat(
        "Redis node ", address, ": cannot connect: ", context->errstr));
    redisFree(context);
    return status;
  }
  if (redisSetTimeout(context, TimevalOf(options.command_timeout)) !=
      REDIS_OK) {
    redisFree(context);
    return absl::UnavailableError(
        absl::StrCat("Redis node ", address, ": cannot set timeouts"));
  }
  std::unique_ptr<Connection> connection(
      new Connection(address, context, options.max_reply_bytes));
  if (!options.password.empty()) {
    std::vector<std::string> auth = {"AUTH"};
    if (!options.user.empty()) auth.push_back(options.user);
    auth.push_back(options.password);
    absl::StatusOr<Reply> reply = connection->Command(auth);
    if (!reply.ok()) return reply.status();
    if (reply->type == Reply::kError) {
      return absl::PermissionDeniedError(absl::StrCat(
          "Redis node ", address, ": AUTH as user \"",
          options.user.empty() ? "default" : options.user,
          "\" refused: ", reply->str));
    }
  }
  if (options.readonly) {
    absl::StatusOr<Reply> reply = connection->Command({"READONLY"});
    if (!reply.ok()) return reply.status();
    if (reply->type == Reply::kError) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Redis node ", address, ": READONLY refused: ", reply->str));
    }
  }
  return connection;
}

Connection::Connection(std::string address, redisContext* context,
                       size_t max_reply_bytes)
    : address_(std::move(address)),
      context_(context),
      max_reply_bytes_(max_reply_bytes) {}

Connection::~Connection() { redisFree(context_); }

absl::Status Connection::Broken(const std::string& what) {
  broken_ = true;
  const bool timed_out = context_->err == REDIS_ERR_IO &&
                         (errno == EAGAIN || errno == EWOULDBLOCK);
  const std::string message = absl::StrCat(
      "Redis node ", address_, ": ", what, ": ",
      context_->err != 0 ? context_->errstr : "no reply");
  return timed_out ? absl::DeadlineExceededError(message)
                   : absl::UnavailableError(message);
}

absl::StatusOr<Reply> Connection::Command(
    const std::vector<std::string>& argv) {
  absl::StatusOr<std::vector<Reply>> replies = Pipeline({argv});
  if (!replies.ok()) return replies.status();
  return std::move((*replies)[0]);
}

absl::StatusOr<std::vector<Reply>> Connection::Pipeline(
    const std::vector<std::vector<std::string>>& commands) {
  if (broken_) {
    return absl::UnavailableError(
        absl::StrCat("Redis node ", address_, ": connection broken"));
  }
  for (const std::vector<std::string>& argv : commands) {
    std::vector<const char*> args;
    std::vector<size_t> lengths;
    for (const std::string& a : argv) {
      args.push_back(a.data());
      lengths.push_back(a.size());
    }
    if (redisAppendCommandArgv(context_, static_cast<int>(args.size()),
                               args.data(), lengths.data()) != REDIS_OK) {
      return Broken("cannot queue command");
    }
  }
  std::vector<Reply> replies(commands.size());
  for (Reply& out : replies) {
    void* raw = nullptr;
    if (redisGetReply(context_, &raw) != REDIS_OK || raw == nullptr) {
      return Broken("command failed");
    }
    auto* reply = static_cast<redisReply*>(raw);
    size_t bytes = 0;
    const bool fits = CopyReply(reply, max_reply_bytes_, &bytes, &out);
    freeReplyObject(reply);
    if (!fits) {
      // hiredis has read the whole reply: the connection is still in step.
      return absl::ResourceExhaustedError(absl::StrCat(
          "Redis node ", address_, ": reply larger than ", max_reply_bytes_,
          " bytes"));
    }
  }
  return replies;
}

}  // namespace pto::server::redis
