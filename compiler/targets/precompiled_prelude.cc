#include "compiler/targets/precompiled_prelude.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "compiler/util/subprocess.h"
#include "compiler/util/temp_dir.h"
#include "runtime/sha256.h"

namespace pto::compiler {
namespace {

constexpr char kHeaderName[] = "prelude.h";

std::string GchPath(const std::string& header) { return header + ".gch"; }

// "<path>.tmp-<pid>-<n>": unique among this machine's writers.
std::string TempName(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return absl::StrCat(path, ".tmp-", getpid(), "-", counter.fetch_add(1));
}

// Makes `dir` and its missing parents with mode 0700.
absl::Status MakeDirs(const std::string& dir) {
  std::string path;
  for (absl::string_view part : absl::StrSplit(dir, '/')) {
    if (part.empty()) {
      if (path.empty()) path = "/";
      continue;
    }
    absl::StrAppend(&path, path.empty() || path == "/" ? "" : "/", part);
    if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot make the prelude directory ", path, ": ", strerror(errno)));
    }
  }
  return absl::OkStatus();
}

// The directory must be this user's alone: a .gch in it becomes kernel code.
absl::Status CheckPrivate(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("prelude directory ", dir, ": ", strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "prelude directory ", dir,
        " is not a directory owned by this user and writable by it alone"));
  }
  return absl::OkStatus();
}

// Writes `contents` to `path` through a temporary name and a rename.
absl::Status PublishFile(const std::string& path, absl::string_view contents) {
  const std::string temp = TempName(path);
  if (absl::Status s = WriteFile(temp, contents); !s.ok()) {
    unlink(temp.c_str());
    return s;
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(temp.c_str());
    return absl::InternalError(absl::StrCat("cannot rename ", temp, ": ", strerror(err)));
  }
  return absl::OkStatus();
}

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

// Keys whose .gch the compiler failed to build in this process.
struct Memo {
  absl::Mutex mu;
  absl::flat_hash_set<std::string> failed ABSL_GUARDED_BY(mu);
  // One builder per key in this process; other processes may still race.
  absl::flat_hash_map<std::string, std::shared_ptr<absl::Mutex>> building ABSL_GUARDED_BY(mu);
};

Memo& TheMemo() {
  static Memo* memo = new Memo;
  return *memo;
}

}  // namespace

std::string LeadingIncludes(absl::string_view source) {
  std::string out;
  bool started = false;
  for (absl::string_view line : absl::StrSplit(source, '\n')) {
    if (absl::StartsWith(line, "#include ")) {
      absl::StrAppend(&out, line, "\n");
      started = true;
    } else if (!started && (line.empty() || absl::StartsWith(line, "//"))) {
      continue;
    } else {
      break;
    }
  }
  return out;
}

std::string PreludeDir(const std::string& configured) {
  std::string dir = configured;
  if (dir.empty()) {
    const char* env = getenv("PTO_PCH_DIR");
    if (env != nullptr && env[0] != '\0') {
      dir = env;
    } else if (const char* xdg = getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
      dir = absl::StrCat(xdg, "/pto/pch");
    } else if (const char* home = getenv("HOME"); home != nullptr && home[0] == '/') {
      dir = absl::StrCat(home, "/.cache/pto/pch");
    }
  }
  return dir == "off" ? "" : dir;
}

std::string PreludeKey(const PreludeSpec& spec) {
  runtime::Sha256Hasher h;
  auto field = [&h](absl::string_view tag, absl::string_view bytes) {
    h.Update(absl::StrCat(tag, ":", bytes.size(), ":"));
    h.Update(bytes);
  };
  field("fingerprint", spec.fingerprint);
  field("text", spec.text);
  field("flags", absl::StrCat(spec.flags.size()));
  for (const std::string& flag : spec.flags) field("flag", flag);
  field("headers", absl::StrCat(spec.headers.size()));
  for (const NativeFile& f : spec.headers) {
    field("name", f.name);
    field("contents", f.contents);
  }
  return runtime::ToHex(h.Finish());
}

absl::StatusOr<Prelude> EnsurePrelude(const PreludeSpec& spec, const std::string& dir,
                                      const NativeBuildOptions& options) {
  if (dir.empty()) return absl::FailedPreconditionError("no prelude directory");
  if (spec.text.empty()) return absl::FailedPreconditionError("the source has no prelude");
  if (absl::Status s = MakeDirs(dir); !s.ok()) return s;
  if (absl::Status s = CheckPrivate(dir); !s.ok()) return s;
  const std::string key = PreludeKey(spec);
  const std::string home = absl::StrCat(dir, "/", key);
  Prelude prelude{absl::StrCat(home, "/", kHeaderName), false};
  if (IsFile(GchPath(prelude.header))) return prelude;

  Memo& memo = TheMemo();
  std::shared_ptr<absl::Mutex> one;
  {
    absl::MutexLock lock(&memo.mu);
    if (memo.failed.contains(home)) {
      return absl::InternalError("the compiler failed on this prelude earlier in this process");
    }
    std::shared_ptr<absl::Mutex>& slot = memo.building[home];
    if (slot == nullptr) slot = std::make_shared<absl::Mutex>();
    one = slot;
  }
  absl::MutexLock build_lock(one.get());
  if (IsFile(GchPath(prelude.header))) return prelude;  // another thread built it

  if (mkdir(home.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot make ", home, ": ", strerror(errno)));
  }
  for (const NativeFile& f : spec.headers) {
    if (absl::Status s = PublishFile(absl::StrCat(home, "/", f.name), f.contents); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = PublishFile(prelude.header, spec.text); !s.ok()) return s;

  const std::string gch = GchPath(prelude.header);
  const std::string temp = TempName(gch);
  std::vector<std::string> argv = {options.cxx};
  argv.insert(argv.end(), spec.flags.begin(), spec.flags.end());
  argv.insert(argv.end(), {"-x", "c++-header", "-o", temp, prelude.header});
  SubprocessResult result;
  absl::Status started =
      RunSubprocess(argv, options.timeout, &result, home, 1 << 16, options.canceller);
  const bool ok = started.ok() && result.exited && result.exit_code == 0 && IsFile(temp);
  if (!ok || rename(temp.c_str(), gch.c_str()) != 0) {
    unlink(temp.c_str());
    if (!result.cancelled) {  // a compiler that hangs on the headers is not run on them again
      absl::MutexLock lock(&memo.mu);
      memo.failed.insert(home);
    }
    return absl::InternalError(absl::StrCat(
        "the compiler did not build ", gch, ": ",
        !started.ok() ? std::string(started.message())
                      : absl::StrCat(DescribeExit(result, options.timeout), " ", result.output)));
  }
  prelude.built = true;
  return prelude;
}

std::vector<std::string> PreludeArgs(const Prelude& prelude) {
  return {"-include", prelude.header, "-Winvalid-pch"};
}

bool PreludeRefused(const Prelude& prelude, absl::string_view compiler_output) {
  // "<path>.gch: not a PCH file [-Winvalid-pch]", "...: created and used
  // with different settings of -fpie [-Winvalid-pch]", ...
  return absl::StrContains(compiler_output, absl::StrCat(GchPath(prelude.header), ": ")) &&
         absl::StrContains(compiler_output, "-Winvalid-pch");
}

void DiscardPrelude(const Prelude& prelude) {
  unlink(GchPath(prelude.header).c_str());
  if (prelude.built) {  // refused right after it was built: do not build it again
    const std::string home = prelude.header.substr(0, prelude.header.rfind('/'));
    Memo& memo = TheMemo();
    absl::MutexLock lock(&memo.mu);
    memo.failed.insert(home);
  }
}

}  // namespace pto::compiler
