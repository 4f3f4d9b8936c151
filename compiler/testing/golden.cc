#include "compiler/testing/golden.h"

#include <cstdlib>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "compiler/util/temp_dir.h"
#include "gtest/gtest.h"

namespace pto::compiler::testing {

void CheckGolden(const std::string& dir, const std::string& name, const std::string& actual) {
  const char* update = std::getenv("PTO_UPDATE_GOLDENS");
  if (update != nullptr && update[0] != '\0') {
    ASSERT_TRUE(WriteFile(absl::StrCat(update, "/", name), actual).ok());
    return;
  }
  absl::StatusOr<std::string> expected = ReadFile(absl::StrCat(dir, "/", name));
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(actual, *expected) << "golden " << name << " differs; actual:\n" << actual;
}

}  // namespace pto::compiler::testing
