#include "server/redis/reply.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "server/redis/key_slot.h"

namespace pto::server::redis {

std::optional<Redirect> ParseRedirect(absl::string_view error) {
  const std::vector<absl::string_view> words =
      absl::StrSplit(error, ' ', absl::SkipEmpty());
  if (words.size() != 3) return std::nullopt;
  Redirect redirect;
  if (words[0] == "ASK") {
    redirect.ask = true;
  } else if (words[0] != "MOVED") {
    return std::nullopt;
  }
  if (!absl::SimpleAtoi(words[1], &redirect.slot) || redirect.slot < 0 ||
      redirect.slot >= kSlots) {
    return std::nullopt;
  }
  std::string host;
  int port = 0;
  if (!SplitAddress(words[2], &host, &port)) return std::nullopt;
  redirect.address = std::string(words[2]);
  return redirect;
}

bool IsTransientError(absl::string_view error) {
  return absl::StartsWith(error, "TRYAGAIN") ||
         absl::StartsWith(error, "CLUSTERDOWN") ||
         absl::StartsWith(error, "LOADING") ||
         absl::StartsWith(error, "MASTERDOWN");
}

bool SplitAddress(absl::string_view address, std::string* host, int* port) {
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) return false;
  absl::string_view h = address.substr(0, colon);
  if (absl::StartsWith(h, "[") && absl::EndsWith(h, "]")) {
    h = h.substr(1, h.size() - 2);
  }
  if (h.empty()) return false;
  int p = 0;
  if (!absl::SimpleAtoi(address.substr(colon + 1), &p) || p < 1 ||
      p > 65535) {
    return false;
  }
  *host = std::string(h);
  *port = p;
  return true;
}

}  // namespace pto::server::redis
