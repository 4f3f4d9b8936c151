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
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown compile option ", Quote(name), " (known: opt_level)"));
    }
  }
  return parsed;
}

CompileOptions CanonicalOptions(const ParsedOptions& options) {
  return {{"opt_level", absl::StrCat(options.opt_level)}};
}

}  // namespace pto::compiler
