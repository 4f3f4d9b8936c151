#include "server/tenant_tokens.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "grpcpp/server_context.h"
#include "server/kernel_store.h"

namespace pto::server {
namespace {

bool IsTenantName(absl::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' &&
        c != '.' && c != '-') {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<TenantTokens> TenantTokens::Parse(absl::string_view text,
                                                 absl::string_view origin) {
  TenantTokens tokens;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    const size_t hash = line.find('#');
    if (hash != absl::string_view::npos) line = line.substr(0, hash);
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (fields.empty()) continue;
    const auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ":", line_number, ": ", why));
    };
    if (fields.size() < 2 || fields.size() > 3 ||
        (fields.size() == 3 && fields[2] != "admin")) {
      return bad("expected \"<tenant> <token> [admin]\"");
    }
    if (!IsTenantName(fields[0])) {
      return bad("tenant names are 1 to 64 of [A-Za-z0-9_.-]");
    }
    if (fields[1].size() < 16) {
      return bad(absl::StrCat("the token of tenant ", fields[0],
                              " is shorter than 16 characters"));
    }
    Caller caller{std::string(fields[0]), fields.size() == 3};
    if (!tokens.by_digest_.emplace(Sha256Hex(fields[1]), caller).second) {
      return bad("this token is already given to another line");
    }
  }
  return tokens;
}

absl::StatusOr<TenantTokens> TenantTokens::Load(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("tokens file ", path, " not found"));
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        "tokens file ", path,
        " is accessible by group or others; chmod 600 it"));
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    return absl::UnavailableError(absl::StrCat("cannot read tokens file ", path));
  }
  absl::StatusOr<TenantTokens> tokens = Parse(text.str(), path);
  if (tokens.ok() && !tokens->enabled()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tokens file ", path, " has no tokens"));
  }
  return tokens;
}

absl::StatusOr<Caller> TenantTokens::Lookup(absl::string_view token) const {
  auto it = by_digest_.find(Sha256Hex(token));
  if (it == by_digest_.end()) {
    return absl::UnauthenticatedError("unknown bearer token");
  }
  return it->second;
}

absl::StatusOr<Caller> TenantTokens::Authenticate(
    const grpc::ServerContextBase& context) const {
  if (!enabled()) return Caller{"", false};
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return absl::UnauthenticatedError(
        "missing \"authorization: Bearer <token>\" metadata");
  }
  absl::string_view value(it->second.data(), it->second.size());
  if (!absl::ConsumePrefix(&value, "Bearer ")) {
    return absl::UnauthenticatedError(
        "the authorization metadata must be \"Bearer <token>\"");
  }
  return Lookup(absl::StripAsciiWhitespace(value));
}

}  // namespace pto::server
