// A precompiled header of the #include lines a generated source starts with
// (its "prelude"), so that a native build skips parsing the embedded headers:
// built once per (compiler fingerprint, flags, prelude) into a per-user
// directory and passed to every later build with `-include`.
//
//   PreludeSpec spec{LeadingIncludes(source), headers, flags, fingerprint};
//   absl::StatusOr<Prelude> p = EnsurePrelude(spec, PreludeDir(""), options);
//   if (p.ok()) args += PreludeArgs(*p);   // else build without it
//
// The prelude holds exactly the lines the source starts with, in order, and
// each header has an include guard, so the source's own #include lines
// become no-ops and the shared object is the same, byte for byte, with or
// without the precompiled header. The compiler itself refuses a .gch made by
// another compiler binary or with other code-shaping flags (-Winvalid-pch
// says so in its output) and then reads the headers as text.
//
// Concurrency: any number of processes (ptod's workers, pypto processes) may
// build the same prelude at once. Each writes its files under temporary
// names in the prelude's directory and renames them into place, so a reader
// sees a whole file or none; the .gch is renamed last, after the headers it
// was built from.
//
// The directory is a build accelerator, not a cache of results: nothing in
// it reaches a cache key, and a missing, stale or corrupt .gch only costs
// time (BuildWithPrelude in host_backend.cc discards it and builds without).
#ifndef PTO_COMPILER_TARGETS_PRECOMPILED_PRELUDE_H_
#define PTO_COMPILER_TARGETS_PRECOMPILED_PRELUDE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/targets/native_build.h"
#include "compiler/targets/target.h"

namespace pto::compiler {

struct PreludeSpec {
  std::string text;                  // the prelude header (LeadingIncludes)
  std::vector<NativeFile> headers;   // the files it includes, written beside it
  std::vector<std::string> flags;    // every flag that shapes the code (-std, -O, -march, -f...)
  std::string fingerprint;           // the compiler's, as cache keys have it (FingerprintFor)
};

struct Prelude {
  std::string header;     // ".../prelude.h"; "prelude.h.gch" lies beside it
  bool built = false;     // this call built the .gch (it was not there)
};

// The #include lines `source` starts with (after its leading comment and
// blank lines), each ending in '\n'; empty when it starts with anything else.
std::string LeadingIncludes(absl::string_view source);

// The directory preludes are kept in: `configured` when not empty, else
// $PTO_PCH_DIR, else $XDG_CACHE_HOME/pto/pch, else $HOME/.cache/pto/pch.
// Empty ("no preludes") when the chosen value is "off" or none is set.
std::string PreludeDir(const std::string& configured);

// The subdirectory of `dir` that `spec`'s prelude lives in: a hex SHA-256 of
// the spec (every field).
std::string PreludeKey(const PreludeSpec& spec);

// The prelude for `spec` under `dir`, building its .gch with options.cxx
// (options.timeout, options.canceller) when it is not there. Errors (the
// caller builds without a prelude): FAILED_PRECONDITION when `dir` is empty,
// cannot be made, or is not a directory owned by this user and writable by
// it alone; INTERNAL when the compiler fails on the prelude or runs past
// options.timeout (remembered for the process's life, so a broken or hanging
// compiler is not run twice for one key).
absl::StatusOr<Prelude> EnsurePrelude(const PreludeSpec& spec, const std::string& dir,
                                      const NativeBuildOptions& options);

// The compiler arguments that use `prelude`: -include it, and have the
// compiler say when it cannot use the .gch (-Winvalid-pch).
std::vector<std::string> PreludeArgs(const Prelude& prelude);

// Whether a successful build's compiler output says it did not use the .gch
// of `prelude` (the -Winvalid-pch warning names it).
bool PreludeRefused(const Prelude& prelude, absl::string_view compiler_output);

// Removes `prelude`'s .gch so that the next EnsurePrelude builds it again;
// when this process had just built it (prelude.built), EnsurePrelude fails
// for its key from now on instead.
void DiscardPrelude(const Prelude& prelude);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_TARGETS_PRECOMPILED_PRELUDE_H_
