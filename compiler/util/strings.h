// Safe renderings of untrusted strings (tensor, op and kernel names).
#ifndef PTO_COMPILER_UTIL_STRINGS_H_
#define PTO_COMPILER_UTIL_STRINGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace pto::compiler {

// An identifier made only of [A-Za-z0-9_], at most `max_len` characters, never
// empty (`fallback` then) and never starting with a digit. Safe anywhere in
// generated code.
std::string SanitizeIdentifier(absl::string_view name, size_t max_len = 64,
                               absl::string_view fallback = "kernel");

// A quoted, C-escaped and length-capped form for error messages and printed
// IR, e.g. "a\"b\n..." .
std::string Quote(absl::string_view name, size_t max_len = 64);

// "[3,5]"
std::string FormatDims(const std::vector<int64_t>& dims);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_UTIL_STRINGS_H_
