#include "compiler/options.h"

#include "absl/strings/str_cat.h"
#include "compiler/util/strings.h"

namespace pto::compiler {

absl::StatusOr<ParsedOptions> ParseOptions(const CompileOptions& options) {
  ParsedOptions parsed;
  for (const auto& [name, value] : options) {
    if (name == "opt_level") {
      if (value.size() != 1 || value[0] < '0' || value[0] > '3') {
        return absl::InvalidArgumentError(absl::StrCat(
            "option opt_level: ", Quote(value), " is not one of 0, 1, 2, 3"));
      }
      parsed.opt_level = value[0] - '0';
    } else if (name == "frontend_key") {
      if (value.empty() || value.size() > 64 ||
          value.find_first_not_of("0123456789abcdef") != std::string::npos) {
        return absl::InvalidArgumentError(absl::StrCat(
            "option frontend_key: ", Quote(value.substr(0, 80)),
            " is not 1 to 64 lowercase hex digits"));
      }
      parsed.frontend_key = value;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown compile option ", Quote(name.substr(0, 80)),
          " (known: opt_level, frontend_key)"));
    }
  }
  return parsed;
}

CompileOptions CanonicalOptions(const ParsedOptions& options) {
  CompileOptions canonical = {{"opt_level", absl::StrCat(options.opt_level)}};
  if (!options.frontend_key.empty()) {
    canonical["frontend_key"] = options.frontend_key;
  }
  return canonical;
}

}  // namespace pto::compiler
