#include "server/redis/connection.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace pto::server::redis {
namespace {

absl::Duration MinOneMillisecond(absl::Duration d) {
  return std::max(d, absl::Milliseconds(1));
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
  absl::StatusOr<std::unique_ptr<Transport>> transport = Transport::Connect(
      host, port, options.tls.get(), MinOneMillisecond(options.connect_timeout));
  if (!transport.ok()) {
    return absl::Status(
        transport.status().code(),
        absl::StrCat("Redis node ", address, ": ", transport.status().message()));
  }
  redisReader* reader = redisReaderCreate();
  if (reader == nullptr) {
    return absl::ResourceExhaustedError("hiredis: out of memory");
  }
  std::unique_ptr<Connection> connection(
      new Connection(address, *std::move(transport), reader, options));
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

Connection::Connection(std::string address,
                       std::unique_ptr<Transport> transport,
                       redisReader* reader, const ConnectionOptions& options)
    : address_(std::move(address)),
      transport_(std::move(transport)),
      reader_(reader),
      command_timeout_(MinOneMillisecond(options.command_timeout)),
      max_reply_bytes_(options.max_reply_bytes) {}

Connection::~Connection() { redisReaderFree(reader_); }

absl::Status Connection::Broken(const std::string& what,
                                const absl::Status& error) {
  broken_ = true;
  error_ = absl::StrCat(what, ": ", error.message());
  return absl::Status(error.code(),
                      absl::StrCat("Redis node ", address_, ": ", error_));
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
  std::string request;
  for (const std::vector<std::string>& argv : commands) {
    std::vector<const char*> args;
    std::vector<size_t> lengths;
    for (const std::string& a : argv) {
      args.push_back(a.data());
      lengths.push_back(a.size());
    }
    char* command = nullptr;
    const int length = redisFormatCommandArgv(
        &command, static_cast<int>(args.size()), args.data(), lengths.data());
    if (length < 0 || command == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "Redis node ", address_, ": cannot encode a command"));
    }
    request.append(command, static_cast<size_t>(length));
    redisFreeCommand(command);
  }
  if (absl::Status written = transport_->Write(request, command_timeout_);
      !written.ok()) {
    return Broken("sending the command failed", written);
  }
  std::vector<Reply> replies(commands.size());
  char buffer[16 << 10];
  for (Reply& out : replies) {
    void* raw = nullptr;
    while (true) {
      if (redisReaderGetReply(reader_, &raw) != REDIS_OK) {
        return Broken("malformed reply",
                      absl::UnavailableError(reader_->errstr));
      }
      if (raw != nullptr) break;
      absl::StatusOr<size_t> n =
          transport_->Read(buffer, sizeof(buffer), command_timeout_);
      if (!n.ok()) return Broken("no reply", n.status());
      if (redisReaderFeed(reader_, buffer, *n) != REDIS_OK) {
        return Broken("malformed reply",
                      absl::UnavailableError(reader_->errstr));
      }
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
