#include "compiler/targets/ascend/ascend_scan.h"

#include "absl/strings/str_cat.h"

namespace pto::compiler::ascend {

void EmitScanLastDim(IntVectorCode& code, const FlatView& flat, bool product,
                     const std::string& d, const std::string& a, const std::string& carry,
                     const ScanIndex& index, int64_t cols) {
  const char* op = product ? "MUL" : "ADD";
  const std::string g = code.Scratch(3);
  // Every column starts as carry op a; columns >= j then take the column
  // before op a, so column j is final after step j.
  code.Line(absl::StrCat("TROWEXPAND", op, "(", d, ", ", a, ", ", carry, ");"));
  if (cols < 2) return;
  code.Line(absl::StrCat("for (int32_t j = 1; j < ", cols, "; ++j) {"));
  const std::string fg = flat(g);
  code.Line(absl::StrCat("TGATHER(", fg, ", ", flat(d), ", ", index.before_flat, ");"));
  code.Line(absl::StrCat("TRESHAPE(", g, ", ", fg, ");"));
  code.Line(absl::StrCat("T", op, "(", g, ", ", g, ", ", a, ");"));
  code.Select(d, index.col, "GE", "static_cast<float>(j)", g, d);
  code.Line("}");
}

void EmitLastColumn(IntVectorCode& code, const FlatView& flat, const FlatView& flat_int,
                    const std::string& row, const std::string& d, const ScanIndex& index,
                    const std::string& valid_cols) {
  // Each element's row start (its position - its column) + valid_cols - 1.
  const std::string at = code.IntScratchK(3), g = code.Scratch(3);
  code.Line(absl::StrCat("TCVT(", at, ", ", index.col, ", RoundMode::CAST_RINT);"));
  code.Line(absl::StrCat("TSUB(", at, ", ", index.before, ", ", at, ");"));
  code.Line(absl::StrCat("TADDS(", at, ", ", at, ", ", valid_cols, ");"));
  const std::string fat = flat_int(at), fg = flat(g);
  code.Line(absl::StrCat("TGATHER(", fg, ", ", flat(d), ", ", fat, ");"));
  code.Line(absl::StrCat("TRESHAPE(", g, ", ", fg, ");"));
  code.Line(absl::StrCat("TROWMAX(", row, ", ", g, ", ", code.Scratch(1), ");"));
}

}  // namespace pto::compiler::ascend
