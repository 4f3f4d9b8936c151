#include "runtime/native_library.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pto::runtime {
namespace {

// A payload claiming more blocks than this is refused rather than resolved.
constexpr int kMaxBlocks = 1 << 20;

// Closes a file descriptor unless released.
class FileCloser {
 public:
  explicit FileCloser(int fd) : fd_(fd) {}
  ~FileCloser() {
    if (fd_ >= 0) close(fd_);
  }
  FileCloser(const FileCloser&) = delete;
  FileCloser& operator=(const FileCloser&) = delete;
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

absl::Status WriteAll(int fd, absl::string_view data, absl::string_view what) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::InternalError(absl::StrCat("native payload: writing ", what,
                                              " failed: ", strerror(errno)));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

std::string DlError() {
  const char* e = dlerror();
  return e ? e : "unknown dlopen error";
}

// dlopen matches already-loaded libraries by path name first. A library that
// glibc could not unload (e.g. one with STB_GNU_UNIQUE symbols) keeps its
// "/proc/self/fd/N" name after dlclose; a new payload whose memfd reuses N
// would silently get the old code. Refuse such a stale name.
bool NameIsTaken(const std::string& path) {
  void* stale = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (stale == nullptr) return false;
  dlclose(stale);
  return true;
}

// memfd path: returns the handle and keeps *fd open (it names the library).
absl::StatusOr<void*> OpenFromMemfd(absl::string_view payload, int* fd_out) {
  int raw = memfd_create("pto_kernel", MFD_CLOEXEC);
  if (raw < 0) {
    return absl::UnavailableError(
        absl::StrCat("memfd_create failed: ", strerror(errno)));
  }
  FileCloser fd(raw);
  absl::Status written = WriteAll(fd.get(), payload, "memfd");
  if (!written.ok()) return written;
  const std::string path = absl::StrCat("/proc/self/fd/", fd.get());
  if (NameIsTaken(path)) {
    return absl::UnavailableError(
        absl::StrCat(path, " still names an unloaded library"));
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("native payload: dlopen failed: ", DlError()));
  }
  *fd_out = fd.release();
  return handle;
}

// Fallback: a private temporary file, unlinked as soon as it is loaded.
absl::StatusOr<void*> OpenFromTempFile(absl::string_view payload) {
  const char* tmpdir = getenv("TMPDIR");
  std::string path = absl::StrCat(
      tmpdir && *tmpdir ? tmpdir : "/tmp", "/pto_kernel_XXXXXX.so");
  int raw = mkstemps(path.data(), 3);
  if (raw < 0) {
    return absl::InternalError(absl::StrCat(
        "native payload: cannot create a temporary file: ", strerror(errno)));
  }
  FileCloser fd(raw);
  absl::Status written = WriteAll(fd.get(), payload, path);
  if (!written.ok()) {
    unlink(path.c_str());
    return written;
  }
  void* handle = NameIsTaken(path)
                     ? nullptr
                     : dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string error = handle ? "" : DlError();
  unlink(path.c_str());
  if (handle == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("native payload: dlopen failed: ", error));
  }
  return handle;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NativeLibrary>> NativeLibrary::Load(
    absl::string_view payload, Backing backing) {
  if (payload.empty()) {
    return absl::InvalidArgumentError("native payload is empty");
  }
  int fd = -1;
  absl::StatusOr<void*> handle =
      backing == Backing::kAuto ? OpenFromMemfd(payload, &fd)
                                : absl::UnavailableError("memfd not wanted");
  if (absl::IsUnavailable(handle.status())) {
    handle = OpenFromTempFile(payload);
  }
  if (!handle.ok()) return handle.status();
  // From here the library owns fd and handle, whatever fails below.
  std::unique_ptr<NativeLibrary> lib(new NativeLibrary(fd, *handle));

  auto abi_version = reinterpret_cast<pto_abi_version_fn>(
      dlsym(lib->handle_, PTO_SYM_ABI_VERSION));
  auto num_blocks = reinterpret_cast<pto_num_blocks_fn>(
      dlsym(lib->handle_, PTO_SYM_NUM_BLOCKS));
  auto block = reinterpret_cast<pto_block_lookup_fn>(
      dlsym(lib->handle_, PTO_SYM_BLOCK));
  if (abi_version == nullptr || num_blocks == nullptr || block == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "native payload: missing exported symbol %s",
        abi_version == nullptr ? PTO_SYM_ABI_VERSION
        : num_blocks == nullptr ? PTO_SYM_NUM_BLOCKS
                                : PTO_SYM_BLOCK));
  }
  const int version = abi_version();
  if (version != PTO_KERNEL_FORMAT_VERSION) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "native payload: ABI version %d is not supported (this runtime "
        "implements version %d)",
        version, PTO_KERNEL_FORMAT_VERSION));
  }
  const int count = num_blocks();
  if (count < 0 || count > kMaxBlocks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "native payload: block count %d out of range [0, %d]", count,
        kMaxBlocks));
  }
  lib->blocks_.reserve(count);
  for (int i = 0; i < count; ++i) {
    pto_block_fn fn = block(i);
    if (fn == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "native payload: block %d of %d is null", i, count));
    }
    lib->blocks_.push_back(fn);
  }
  return lib;
}

NativeLibrary::~NativeLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
  if (fd_ >= 0) close(fd_);
}

}  // namespace pto::runtime
