// A Redis reply as a plain value (hiredis's redisReply copied out), and the
// cluster redirections an error reply can carry.
//
//   Reply r = ...;                       // from Connection::Command
//   if (r.type == Reply::kError) {
//     if (std::optional<Redirect> to = ParseRedirect(r.str)) ...
//   }
#ifndef PTO_SERVER_REDIS_REPLY_H_
#define PTO_SERVER_REDIS_REPLY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace pto::server::redis {

struct Reply {
  enum Type { kNil, kString, kStatus, kError, kInteger, kArray };
  Type type = kNil;
  std::string str;          // kString, kStatus, kError
  int64_t integer = 0;      // kInteger
  std::vector<Reply> elements;  // kArray

  static Reply String(std::string s) { return Reply{kString, std::move(s)}; }
  static Reply Integer(int64_t i) { return Reply{kInteger, "", i}; }
  static Reply Array(std::vector<Reply> e) {
    return Reply{kArray, "", 0, std::move(e)};
  }
  static Reply Error(std::string s) { return Reply{kError, std::move(s)}; }
};

// "-MOVED 3999 127.0.0.1:6381" or "-ASK 3999 127.0.0.1:6381" (the error's
// text without the "-").
struct Redirect {
  bool ask = false;  // ASK: this one command only; MOVED: the slot moved
  int slot = 0;
  std::string address;  // "host:port"
};

// The redirection in error text `error`; nullopt when it is none (or
// malformed: a slot out of range, no port).
std::optional<Redirect> ParseRedirect(absl::string_view error);

// Whether error text `error` means "try again shortly": TRYAGAIN (a
// multi-key operation during resharding), CLUSTERDOWN, LOADING, MASTERDOWN.
bool IsTransientError(absl::string_view error);

// Splits "host:port" (or "[v6 address]:port") into host and port; false when
// it is not of that form or the port is not in 1..65535.
bool SplitAddress(absl::string_view address, std::string* host, int* port);

}  // namespace pto::server::redis

#endif  // PTO_SERVER_REDIS_REPLY_H_
