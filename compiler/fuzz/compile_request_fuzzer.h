// Fuzzing the compile service's path: a pto.v1.CompileRequest in, run
// through what ptod runs for it up to code generation (the cache key, then
// import, verify, lowering, PTO emission and the target's C++ source; not
// the native compiler, which is too slow to fuzz), and a structure-aware
// mutator of such requests.
//
//   // libFuzzer (fuzz_main.cc) or a bounded loop (fuzz_replay_test.cc):
//   FuzzOneInput(bytes, size);   // aborts on a status ptod must not return
//   size = MutateRequest(bytes, size, max_size, seed);
//
// A request must end in OK, INVALID_ARGUMENT, UNIMPLEMENTED or
// RESOURCE_EXHAUSTED with a message; anything else (a crash, a hang, another
// code, an empty message) is a bug.
#ifndef PTO_COMPILER_FUZZ_COMPILE_REQUEST_FUZZER_H_
#define PTO_COMPILER_FUZZ_COMPILE_REQUEST_FUZZER_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "pto/v1/compile_service.pb.h"

namespace pto::compiler::fuzz {

// What ptod's compiler backend does for `request` (server/
// pto_compiler_backend.cc: CacheKey, then Compile), stopping after the
// "codegen" stage, plus what Compile then writes into the kernel binary
// (parameter shapes, PTO text) other than the native payload.
absl::Status CompileToSource(const pto::v1::CompileRequest& request);

// Whether ptod may answer a request with `status`.
bool IsCleanStatus(const absl::Status& status);

// Parses `data` as a CompileRequest (ignoring bytes that do not parse) and
// runs CompileToSource; prints the status and aborts when it is not clean.
// Returns 0 (libFuzzer's convention).
int FuzzOneInput(const uint8_t* data, size_t size);

// Mutates the serialized request in `data` (`size` bytes, room for
// `max_size`) in place and returns the new size. Parses it, picks a field
// (shape dims, tile dims, attributes, DimExpr trees, op kinds and inputs,
// view offsets, loop bounds, parameters, the target and options) and gives
// it an extreme value (0, 1, -1, 2^31-1, 2^31, 2^32, 2^40, 2^62, 2^63-1,
// INT64_MIN, random), deepens expression trees into sums and products of
// many terms, duplicates or drops ops and swaps inputs; bytes that do not
// parse get byte mutations instead. Deterministic for a given `seed`.
size_t MutateRequest(uint8_t* data, size_t size, size_t max_size, unsigned seed);

}  // namespace pto::compiler::fuzz

#endif  // PTO_COMPILER_FUZZ_COMPILE_REQUEST_FUZZER_H_
