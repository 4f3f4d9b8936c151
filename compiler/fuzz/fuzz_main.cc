// libFuzzer's entry points for the compile-request fuzzer (README.md in this
// directory has the build and run commands).
#include <cstddef>
#include <cstdint>

#include "compiler/fuzz/compile_request_fuzzer.h"
#include "google/protobuf/stubs/logging.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);  // byte mutations make invalid UTF-8
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return pto::compiler::fuzz::FuzzOneInput(data, size);
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  return pto::compiler::fuzz::MutateRequest(data, size, max_size, seed);
}
