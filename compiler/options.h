// Compile options: parsing, validation and the canonical (defaults filled)
// form that goes into the cache key.
#ifndef PTO_COMPILER_OPTIONS_H_
#define PTO_COMPILER_OPTIONS_H_

#include <string>

#include "absl/status/statusor.h"
#include "compiler/compile.h"

namespace pto::compiler {

struct ParsedOptions {
  int opt_level = 2;  // "opt_level": the native compiler's -O level
  // "frontend_key": the front end's digest of what keys a kernel besides
  // its graph (pypto: the values of a kernel's compile-time parameters, as
  // PyPTO keys kernels by them); 1 to 64 lowercase hex digits. It changes
  // the cache key only; empty (the default) is left out of the key.
  std::string frontend_key;
};

// INVALID_ARGUMENT naming the option for unknown names or bad values.
absl::StatusOr<ParsedOptions> ParseOptions(const CompileOptions& options);

// Every option with its value, defaults included, so that {} and
// {"opt_level": "2"} hash alike.
CompileOptions CanonicalOptions(const ParsedOptions& options);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_OPTIONS_H_
