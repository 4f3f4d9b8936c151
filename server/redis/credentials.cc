#include "server/redis/credentials.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace pto::server::redis {

absl::StatusOr<Credentials> ParseCredentials(absl::string_view contents) {
  if (contents.size() > 4096) {
    return absl::InvalidArgumentError("credentials: longer than 4096 bytes");
  }
  std::vector<absl::string_view> lines =
      absl::StrSplit(absl::StripTrailingAsciiWhitespace(contents), '\n');
  for (absl::string_view& line : lines) {
    line = absl::StripTrailingAsciiWhitespace(line);
  }
  Credentials credentials;
  if (lines.size() == 1) {
    credentials.password = std::string(lines[0]);
  } else if (lines.size() == 2) {
    credentials.user = std::string(lines[0]);
    credentials.password = std::string(lines[1]);
    if (credentials.user.empty()) {
      return absl::InvalidArgumentError("credentials: the user line is empty");
    }
    for (char c : credentials.user) {
      if (absl::ascii_isspace(static_cast<unsigned char>(c)) ||
          absl::ascii_iscntrl(static_cast<unsigned char>(c))) {
        return absl::InvalidArgumentError(
            "credentials: the user name holds a space or control character");
      }
    }
  } else {
    return absl::InvalidArgumentError(
        "credentials: expected one line (password) or two (user, password)");
  }
  if (credentials.password.empty()) {
    return absl::InvalidArgumentError("credentials: the password is empty");
  }
  return credentials;
}

absl::StatusOr<Credentials> ReadCredentialsFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("Redis credentials file ", path, " cannot be read"));
  }
  std::stringstream contents;
  contents << in.rdbuf();
  absl::StatusOr<Credentials> credentials = ParseCredentials(contents.str());
  if (!credentials.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Redis credentials file ", path, ": ", credentials.status().message()));
  }
  return credentials;
}

}  // namespace pto::server::redis
