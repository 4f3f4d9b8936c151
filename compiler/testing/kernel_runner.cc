#include "compiler/testing/kernel_runner.h"

#include <dlfcn.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "compiler/util/temp_dir.h"
#include "runtime/kernel_abi.h"

namespace pto::compiler::testing {
namespace {

struct DlCloser {
  void operator()(void* h) const { dlclose(h); }
};

}  // namespace

absl::Status RunSerially(const pto::v1::KernelBinary& binary,
                         const std::vector<void*>& params) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-test-kernel");
  if (!dir.ok()) return dir.status();
  const std::string path = dir->path() + "/kernel.so";
  if (absl::Status s = WriteFile(path, binary.native_payload()); !s.ok()) return s;
  std::unique_ptr<void, DlCloser> lib(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!lib) return absl::InternalError(absl::StrCat("dlopen: ", dlerror()));
  auto version = reinterpret_cast<pto_abi_version_fn>(
      dlsym(lib.get(), PTO_SYM_ABI_VERSION));
  auto num_blocks = reinterpret_cast<pto_num_blocks_fn>(
      dlsym(lib.get(), PTO_SYM_NUM_BLOCKS));
  auto block = reinterpret_cast<pto_block_lookup_fn>(
      dlsym(lib.get(), PTO_SYM_BLOCK));
  if (!version || !num_blocks || !block) {
    return absl::InternalError("payload lacks an ABI symbol");
  }
  if (version() != PTO_KERNEL_FORMAT_VERSION) {
    return absl::InternalError("ABI version mismatch");
  }
  const pto::v1::ExecuteGraph& g = binary.execute_graph();
  if (num_blocks() != g.functions_size()) {
    return absl::InternalError("block count mismatch");
  }
  std::vector<std::unique_ptr<char[]>> workspaces;
  std::vector<void*> buffers = params;
  for (int b = static_cast<int>(params.size()); b < g.buffers_size(); ++b) {
    workspaces.emplace_back(new char[g.buffers(b).workspace_bytes()]);
    buffers.push_back(workspaces.back().get());
  }
  for (const pto::v1::Task& task : g.tasks()) {
    pto_block_fn fn = block(static_cast<int>(task.function()));
    if (fn == nullptr) return absl::InternalError("missing block function");
    std::vector<int64_t> args(task.args().begin(), task.args().end());
    fn(buffers.data(), args.data());
  }
  return absl::OkStatus();
}

}  // namespace pto::compiler::testing
