#include "client/cpp/replicas.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace pto::client {
namespace {

constexpr absl::string_view kDnsPrefix = "dns:///";

// Splits "host:port" / "[v6]:port" at the port's colon.
absl::Status SplitHostPort(absl::string_view entry, absl::string_view spec,
                           std::string* host, std::string* port) {
  const size_t colon = entry.rfind(':');
  if (colon == absl::string_view::npos || colon == 0 ||
      colon + 1 == entry.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ptod address \"", entry, "\" (in \"", spec,
        "\") has no host:port form (e.g. ptod:7070 or dns:///ptod:7070)"));
  }
  *host = std::string(entry.substr(0, colon));
  *port = std::string(entry.substr(colon + 1));
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  return absl::OkStatus();
}

// Every address `host` resolves to, as "ip:port" ("[v6]:port").
absl::StatusOr<std::vector<std::string>> ResolveAll(const std::string& host,
                                                    const std::string& port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) {
    return absl::UnavailableError(absl::StrCat(
        "ptod address dns:///", host, ":", port,
        ": cannot resolve the name: ", gai_strerror(rc)));
  }
  std::vector<std::string> addresses;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ai_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr,
                text, sizeof(text));
      addresses.push_back(absl::StrCat(text, ":", port));
    } else if (a->ai_family == AF_INET6) {
      inet_ntop(AF_INET6,
                &reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr, text,
                sizeof(text));
      addresses.push_back(absl::StrCat("[", text, "]:", port));
    }
  }
  freeaddrinfo(found);
  return addresses;
}

}  // namespace

absl::StatusOr<std::vector<Replica>> ResolveReplicas(absl::string_view spec) {
  std::vector<Replica> replicas;
  std::set<std::string> seen;
  auto add = [&](std::string address, std::string tls_name) {
    if (seen.insert(address).second) {
      replicas.push_back({std::move(address), std::move(tls_name)});
    }
  };
  for (absl::string_view raw : absl::StrSplit(spec, ',')) {
    absl::string_view entry = absl::StripAsciiWhitespace(raw);
    if (entry.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ptod address list \"", spec, "\" has an empty entry"));
    }
    std::string host, port;
    if (absl::ConsumePrefix(&entry, kDnsPrefix)) {
      if (absl::Status s = SplitHostPort(entry, spec, &host, &port); !s.ok()) {
        return s;
      }
      absl::StatusOr<std::vector<std::string>> resolved = ResolveAll(host, port);
      if (!resolved.ok()) return resolved.status();
      for (std::string& address : *resolved) add(std::move(address), host);
      continue;
    }
    if (absl::Status s = SplitHostPort(entry, spec, &host, &port); !s.ok()) {
      return s;
    }
    add(std::string(entry), "");
  }
  return replicas;
}

bool HasDnsEntry(absl::string_view spec) {
  return absl::StrContains(spec, kDnsPrefix);
}

}  // namespace pto::client
