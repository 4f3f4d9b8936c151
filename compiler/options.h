// Compile options: parsing, validation and the canonical (defaults filled)
// form that goes into the cache key.
#ifndef PTO_COMPILER_OPTIONS_H_
#define PTO_COMPILER_OPTIONS_H_

#include "absl/status/statusor.h"
#include "compiler/compile.h"

namespace pto::compiler {

struct ParsedOptions {
  int opt_level = 2;  // "opt_level": the native compiler's -O level
};

// INVALID_ARGUMENT naming the option for unknown names or bad values.
absl::StatusOr<ParsedOptions> ParseOptions(const CompileOptions& options);

// Every option with its value, defaults included, so that {} and
// {"opt_level": "2"} hash alike.
CompileOptions CanonicalOptions(const ParsedOptions& options);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_OPTIONS_H_
