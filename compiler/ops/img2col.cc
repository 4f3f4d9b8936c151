#include "compiler/ops/img2col.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pto::compiler {

absl::StatusOr<Img2Col> ParseImg2Col(const std::vector<int64_t>& ints) {
  constexpr int64_t kMax = int64_t{1} << 20;
  auto bad = [&](const char* why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attrs[\"img2col\"]: [", absl::StrJoin(ints, ", "), "] ", why,
        " (kh, kw, sh, sw, ph, pw, dh, dw: kernel, strides and dilations >= 1, "
        "paddings >= 0, each at most ", kMax, ")"));
  };
  if (ints.size() != 8) return bad("must have 8 entries");
  for (size_t i = 0; i < ints.size(); ++i) {
    const bool padding = i == 4 || i == 5;
    if (ints[i] < (padding ? 0 : 1) || ints[i] > kMax) return bad("is out of range");
  }
  Img2Col g;
  g.kh = ints[0], g.kw = ints[1], g.sh = ints[2], g.sw = ints[3];
  g.ph = ints[4], g.pw = ints[5], g.dh = ints[6], g.dw = ints[7];
  return g;
}

std::string Img2ColText(const std::vector<int64_t>& ints) {
  if (ints.size() != 8 && ints.size() != kImg2ColInts) {
    return absl::StrCat("img2col[", absl::StrJoin(ints, ","), "]");
  }
  std::string s = absl::StrCat("img2col[k=", ints[0], "x", ints[1], " s=", ints[2], "x",
                               ints[3], " p=", ints[4], "x", ints[5], " d=", ints[6], "x",
                               ints[7]);
  if (ints.size() == kImg2ColInts) {
    absl::StrAppend(&s, " c=", ints[8], " hw=", ints[9], "x", ints[10]);
  }
  return s + "]";
}

}  // namespace pto::compiler
