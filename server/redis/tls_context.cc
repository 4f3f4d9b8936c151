#include "server/redis/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pto::server::redis {
namespace {

void IgnoreSigpipe() {
  struct sigaction current;
  if (sigaction(SIGPIPE, nullptr, &current) == 0 &&
      current.sa_handler == SIG_DFL) {
    signal(SIGPIPE, SIG_IGN);
  }
}

// INVALID_ARGUMENT: "Redis TLS <option> <path>: <what>[: <OpenSSL's reasons>]".
absl::Status FileError(const char* option, const std::string& path,
                       const std::string& what) {
  const std::string reasons = DrainOpenSslErrors();
  return absl::InvalidArgumentError(
      absl::StrCat("Redis TLS ", option, " ", path, ": ", what,
                   reasons.empty() ? "" : ": ", reasons));
}

// OK when `path` can be opened for reading, else why not (naming it).
absl::Status CheckReadable(const char* option, const std::string& path) {
  if (access(path.c_str(), R_OK) != 0) {
    return FileError(option, path,
                     absl::StrCat("cannot read: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

std::string DrainOpenSslErrors() {
  std::vector<std::string> reasons;
  while (unsigned long e = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(e, text, sizeof(text));
    reasons.push_back(text);
  }
  return absl::StrJoin(reasons, "; ");
}

absl::StatusOr<std::shared_ptr<const TlsContext>> TlsContext::Create(
    const TlsOptions& options) {
  if (options.ca_file.empty()) {
    return absl::InvalidArgumentError(
        "Redis TLS needs ca_file: the CA (PEM) node certificates chain to");
  }
  if (options.cert_file.empty() != options.key_file.empty()) {
    return absl::InvalidArgumentError(
        "Redis TLS: a client certificate needs its key and a key its "
        "certificate (cert_file and key_file, both or neither)");
  }
  DrainOpenSslErrors();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("Redis TLS: SSL_CTX_new: ", DrainOpenSslErrors()));
  }
  // Owned from here: freed on every error below.
  std::shared_ptr<const TlsContext> context(
      new TlsContext(ctx, options));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                            SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (absl::Status readable = CheckReadable("ca_file", options.ca_file);
      !readable.ok()) {
    return readable;
  }
  if (SSL_CTX_load_verify_locations(ctx, options.ca_file.c_str(), nullptr) !=
      1) {
    return FileError("ca_file", options.ca_file,
                     "no CA certificate (PEM) could be loaded");
  }
  if (!options.cert_file.empty()) {
    for (const auto& [option, path] :
         {std::make_pair("cert_file", options.cert_file),
          std::make_pair("key_file", options.key_file)}) {
      if (absl::Status readable = CheckReadable(option, path);
          !readable.ok()) {
        return readable;
      }
    }
    if (SSL_CTX_use_certificate_chain_file(ctx, options.cert_file.c_str()) !=
        1) {
      return FileError("cert_file", options.cert_file,
                       "not a certificate chain (PEM)");
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, options.key_file.c_str(),
                                    SSL_FILETYPE_PEM) != 1) {
      return FileError("key_file", options.key_file,
                       "not a private key (PEM)");
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
      return FileError("key_file", options.key_file,
                       absl::StrCat("is not the key of the certificate in ",
                                    options.cert_file));
    }
  }
  IgnoreSigpipe();
  return context;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

}  // namespace pto::server::redis
