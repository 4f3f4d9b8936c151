// What a compile is told: the options that change the generated code (in
// the cache key), their parsed and canonical forms, and the settings that do
// not (not in the key).
#ifndef PTO_COMPILER_OPTIONS_H_
#define PTO_COMPILER_OPTIONS_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "compiler/util/subprocess.h"

namespace pto::compiler {

// Options that change what is generated; every one is part of the cache key.
// Unknown names are rejected by Compile() and CacheKey().
//   "opt_level": "0".."3" (default "2"), the native compiler's -O level.
using CompileOptions = std::map<std::string, std::string>;

// Knobs that do not change the generated code and so are not in the key.
struct CompileSettings {
  // Wall-clock limit for the native compiler subprocess.
  absl::Duration native_compile_timeout = absl::Seconds(120);
  // C++ compiler for host targets.
  std::string cxx = "c++";
  // How error messages name the compiler (ptod runs a limits wrapper as
  // `cxx` and names the compiler it wraps); empty: `cxx`.
  std::string cxx_name;
  // Where the native compile's private temp directory is made; empty:
  // $TMPDIR, else /tmp.
  std::string work_dir;
  // Where host builds keep their precompiled headers (NativeBuildOptions::
  // pch_dir: empty: $PTO_PCH_DIR, else $XDG_CACHE_HOME/pto/pch, else
  // ~/.cache/pto/pch; "off": none). They speed builds up and change no output.
  std::string pch_dir;
  // When set, Cancel() kills running native compiles (they fail UNAVAILABLE)
  // and makes later ones fail at once.
  std::shared_ptr<SubprocessCanceller> canceller;
  // When set, each IR level's printed form and the PTO text are returned in
  // CompileResult::dumps (for ptoc and golden tests).
  bool keep_dumps = false;
};

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
