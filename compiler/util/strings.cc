#include "compiler/util/strings.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pto::compiler {

std::string SanitizeIdentifier(absl::string_view name, size_t max_len,
                               absl::string_view fallback) {
  std::string out;
  for (char c : name) {
    if (out.size() >= max_len) break;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_';
    out.push_back(ok ? c : '_');
  }
  if (out.empty()) out = std::string(fallback);
  if (out[0] >= '0' && out[0] <= '9') out.insert(out.begin(), '_');
  return out;
}

std::string Quote(absl::string_view name, size_t max_len) {
  bool cut = name.size() > max_len;
  std::string body = absl::CHexEscape(name.substr(0, max_len));
  return absl::StrCat("\"", body, cut ? "..." : "", "\"");
}

std::string FormatDims(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

}  // namespace pto::compiler
