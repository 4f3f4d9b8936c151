// Runs CompileToSource on each serialized CompileRequest file named on the
// command line and prints its status and time: reproduces a fuzzer finding
// with the default toolchain.
//
//   bazel run //compiler/fuzz:replay -- $PWD/compiler/fuzz/corpus/*.pb
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "compiler/fuzz/compile_request_fuzzer.h"

int main(int argc, char** argv) {
  int unclean = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    pto::v1::CompileRequest request;
    if (!request.ParseFromString(bytes.str())) {
      std::printf("%s: does not parse as a CompileRequest\n", argv[i]);
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    const absl::Status status = pto::compiler::fuzz::CompileToSource(request);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s: %.3f s: %s\n", argv[i], seconds, status.ToString().c_str());
    if (!pto::compiler::fuzz::IsCleanStatus(status)) ++unclean;
  }
  return unclean == 0 ? 0 : 1;
}
