#include "runtime/test_payload.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/host_target.h"
#include "runtime/kernel_abi.h"
#include "runtime/sha256.h"

namespace pto::runtime::testing {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A temporary directory removed (with its files) on destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = getenv("TEST_TMPDIR");
    if (base == nullptr || *base == '\0') base = "/tmp";
    path_ = absl::StrCat(base, "/pto_payload_XXXXXX");
    if (mkdtemp(path_.data()) == nullptr) path_.clear();
  }
  ~TempDir() {
    if (path_.empty()) return;
    for (const char* name : {"/k.cc", "/k.so", "/log"}) {
      unlink((path_ + name).c_str());
    }
    rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

absl::StatusOr<std::string> CompileSharedObject(absl::string_view cxx_source) {
  TempDir dir;
  if (dir.path().empty()) {
    return absl::InternalError(
        absl::StrCat("mkdtemp failed: ", strerror(errno)));
  }
  const std::string src = dir.path() + "/k.cc";
  const std::string out = dir.path() + "/k.so";
  const std::string log = dir.path() + "/log";
  {
    std::ofstream f(src, std::ios::binary);
    f << cxx_source;
    if (!f) return absl::InternalError("cannot write " + src);
  }
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execlp("c++", "c++", "-shared", "-fPIC", "-O1", "-o", out.c_str(),
           src.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(
        absl::StrCat("c++ failed (status ", status, "): ", ReadFile(log)));
  }
  return ReadFile(out);
}

const char kAddOneTimesTwoSource[] = R"cc(
#include <stdint.h>
extern "C" {
static void add_one(void* const* buffers, const int64_t* args) {
  const float* x = static_cast<const float*>(buffers[0]);
  float* w = static_cast<float*>(buffers[2]);
  for (int64_t i = args[0]; i < args[0] + args[1]; ++i) w[i] = x[i] + 1.0f;
}
static void times_two(void* const* buffers, const int64_t* args) {
  const float* w = static_cast<const float*>(buffers[2]);
  float* y = static_cast<float*>(buffers[1]);
  for (int64_t i = args[0]; i < args[0] + args[1]; ++i) y[i] = w[i] * 2.0f;
}
typedef void (*block_fn)(void* const*, const int64_t*);
__attribute__((visibility("default"))) int pto_abi_version(void) { return 1; }
__attribute__((visibility("default"))) int pto_num_blocks(void) { return 2; }
__attribute__((visibility("default"))) block_fn pto_block(int i) {
  return i == 0 ? add_one : i == 1 ? times_two : 0;
}
}
)cc";

void SealPayload(pto::v1::KernelBinary* binary) {
  binary->set_payload_sha256(Sha256(binary->native_payload()));
}

absl::StatusOr<pto::v1::KernelBinary> AddOneTimesTwoBinary(int64_t n,
                                                           int64_t tile) {
  static const auto* payload =
      new absl::StatusOr<std::string>(CompileSharedObject(kAddOneTimesTwoSource));
  if (!payload->ok()) return payload->status();

  pto::v1::KernelBinary b;
  b.set_magic(PTO_KERNEL_MAGIC);
  b.set_format_version(PTO_KERNEL_FORMAT_VERSION);
  b.set_target(NativeHostTarget());
  b.set_kernel_name("add_one_times_two");
  for (const char* name : {"x", "y"}) {
    pto::v1::KernelParam* p = b.add_params();
    p->set_name(name);
    p->set_role(name[0] == 'x' ? pto::v1::PARAM_ROLE_IN
                               : pto::v1::PARAM_ROLE_OUT);
    p->set_dtype(pto::v1::DT_FP32);
    p->mutable_shape()->add_dims()->set_size(n);
  }
  pto::v1::ExecuteGraph* g = b.mutable_execute_graph();
  g->add_buffers()->set_name("x");
  g->add_buffers()->set_name("y");
  pto::v1::BufferDesc* w = g->add_buffers();
  w->set_name("w");
  w->set_workspace_bytes(n * static_cast<int64_t>(sizeof(float)));
  for (int f = 0; f < 2; ++f) {
    pto::v1::BlockFunction* fn = g->add_functions();
    fn->set_index(f);
    fn->set_name(f == 0 ? "add_one" : "times_two");
    fn->set_core_type(pto::v1::CORE_TYPE_VECTOR);
    fn->set_num_args(2);
  }
  for (int64_t offset = 0; offset < n; offset += tile) {
    const int64_t len = std::min(tile, n - offset);
    pto::v1::Task* first = g->add_tasks();
    first->set_function(0);
    first->add_args(offset);
    first->add_args(len);
    const uint32_t first_index = g->tasks_size() - 1;
    pto::v1::Task* second = g->add_tasks();
    second->set_function(1);
    second->add_args(offset);
    second->add_args(len);
    second->add_deps(first_index);
  }
  b.set_native_payload(**payload);
  SealPayload(&b);
  return b;
}

}  // namespace pto::runtime::testing
