// Redis ACL credentials from a file, so that no password is on a command
// line:
//
//   one line:   the password of the default user
//   two lines:  the ACL user, then its password (e.g. "ptod\ns3cret\n")
//
// Trailing whitespace (the newline) is not part of either. The file should
// be readable by ptod only (e.g. a Kubernetes Secret mounted 0400).
#ifndef PTO_SERVER_REDIS_CREDENTIALS_H_
#define PTO_SERVER_REDIS_CREDENTIALS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pto::server::redis {

struct Credentials {
  std::string user;  // "": the default user
  std::string password;
};

// Parses the contents of a credentials file (see above). INVALID_ARGUMENT
// when it is empty, has more than two lines, or a part is empty or holds a
// space or control character in the user name.
absl::StatusOr<Credentials> ParseCredentials(absl::string_view contents);

// Reads and parses `path`; errors name the file, never its contents.
absl::StatusOr<Credentials> ReadCredentialsFile(const std::string& path);

}  // namespace pto::server::redis

#endif  // PTO_SERVER_REDIS_CREDENTIALS_H_
