// A kernel's native payload (a shared object) loaded into this process.
//
//   auto lib = NativeLibrary::Load(binary.native_payload());
//   if (!lib.ok()) ...                 // says what was missing or wrong
//   pto_block_fn block = (*lib)->block(0);
//
// The payload never touches a named file when the kernel supports
// memfd_create: it is written to an anonymous memory file and dlopen()ed via
// /proc/self/fd/N. Otherwise it goes to a private temporary file that is
// unlinked right after dlopen. The destructor dlclose()s the library and
// closes the file; no block pointer may be used after that.
#ifndef PTO_RUNTIME_NATIVE_LIBRARY_H_
#define PTO_RUNTIME_NATIVE_LIBRARY_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/kernel_abi.h"

namespace pto::runtime {

class NativeLibrary {
 public:
  // Where the payload's bytes go before dlopen.
  enum class Backing {
    kAuto,      // memfd, or a temporary file where memfd is unavailable
    kTempFile,  // always the temporary file (the fallback, for tests)
  };

  // Loads `payload`, checks that pto_abi_version() is
  // PTO_KERNEL_FORMAT_VERSION and resolves every block of pto_num_blocks().
  static absl::StatusOr<std::unique_ptr<NativeLibrary>> Load(
      absl::string_view payload, Backing backing = Backing::kAuto);

  ~NativeLibrary();
  NativeLibrary(const NativeLibrary&) = delete;
  NativeLibrary& operator=(const NativeLibrary&) = delete;

  // Number of block functions the payload exports.
  int num_blocks() const { return static_cast<int>(blocks_.size()); }

  // Block `index`, or null when out of range.
  pto_block_fn block(int index) const {
    return index >= 0 && index < num_blocks() ? blocks_[index] : nullptr;
  }

 private:
  NativeLibrary(int fd, void* handle) : fd_(fd), handle_(handle) {}

  int fd_;        // memfd (or -1 when loaded from an unlinked temp file)
  void* handle_;  // from dlopen
  std::vector<pto_block_fn> blocks_;
};

}  // namespace pto::runtime

#endif  // PTO_RUNTIME_NATIVE_LIBRARY_H_
