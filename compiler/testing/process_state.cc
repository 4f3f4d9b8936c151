#include "compiler/testing/process_state.h"

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace pto::compiler::testing {

bool Gone(pid_t pid) {
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() &&
         (line[paren + 2] == 'Z' || line[paren + 2] == 'X');
}

bool GoneWithin(pid_t pid, absl::Duration timeout) {
  const absl::Time end = absl::Now() + timeout;
  while (!Gone(pid)) {
    if (absl::Now() > end) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
}

}  // namespace pto::compiler::testing
