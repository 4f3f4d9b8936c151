// Test support: real native payloads for runtime tests, built by the system
// C++ compiler in a subprocess, and kernel binaries wrapped around them.
#ifndef PTO_RUNTIME_TEST_PAYLOAD_H_
#define PTO_RUNTIME_TEST_PAYLOAD_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pto/v1/kernel.pb.h"

namespace pto::runtime::testing {

// Compiles `cxx_source` with `c++ -shared -fPIC -O1` in a private temporary
// directory (removed afterwards) and returns the shared object's bytes.
// The error carries the compiler's output.
absl::StatusOr<std::string> CompileSharedObject(absl::string_view cxx_source);

// Source of a payload implementing the kernel ABI with two blocks over FP32
// buffers, each taking args (offset, length):
//   block 0: buffers[2][i] = buffers[0][i] + 1   (param x -> workspace)
//   block 1: buffers[1][i] = buffers[2][i] * 2   (workspace -> param y)
extern const char kAddOneTimesTwoSource[];

// A binary for y = (x + 1) * 2 over `n` floats, in tiles of `tile`: per tile a
// task of block 0 and a dependent task of block 1; the workspace carries the
// intermediate. Target is this machine's NativeHostTarget(); the payload is
// compiled once per process and the checksum set.
absl::StatusOr<pto::v1::KernelBinary> AddOneTimesTwoBinary(int64_t n,
                                                           int64_t tile);

// Sets binary->payload_sha256 to the SHA-256 of its payload.
void SealPayload(pto::v1::KernelBinary* binary);

}  // namespace pto::runtime::testing

#endif  // PTO_RUNTIME_TEST_PAYLOAD_H_
