#include "compiler/targets/ascend/ascend_scan.h"

#include "absl/strings/str_cat.h"

namespace pto::compiler::ascend {

void EmitScanLastDim(IntVectorCode& code, const FlatView& flat, const FlatView& flat_int,
                     bool product, bool log_steps, const std::string& d, const std::string& a,
                     const std::string& carry, const ScanIndex& index, int64_t cols) {
  const char* op = product ? "MUL" : "ADD";
  const std::string g = code.Scratch(3);
  if (!log_steps) {
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
    return;
  }
  // Column 0 is carry op a, the others a; after the step of shift s each
  // column j holds the scan of columns max(j - 2s + 1, 0) .. j.
  code.Line(absl::StrCat("TROWEXPAND", op, "(", g, ", ", a, ", ", carry, ");"));
  code.Select(d, index.col, "GE", "1.0f", a, g);
  const std::string at = code.IntScratchK(3);
  for (int64_t s = 1; s < cols; s *= 2) {
    std::string from = index.before_flat;  // each element's flat position - s
    if (s > 1) {
      code.Line(absl::StrCat("TADDS(", at, ", ", index.before, ", ", 1 - s, ");"));
      from = flat_int(at);
    }
    const std::string fg = flat(g);
    code.Line(absl::StrCat("TGATHER(", fg, ", ", flat(d), ", ", from, ");"));
    code.Line(absl::StrCat("TRESHAPE(", g, ", ", fg, ");"));
    code.Line(absl::StrCat("T", op, "(", g, ", ", g, ", ", d, ");"));
    code.Select(d, index.col, "GE", absl::StrCat(s, ".0f"), g, d);
  }
}

void EmitScanFirstDim(IntVectorCode& code, const FlatView& flat, const FlatView& flat_int,
                      bool product, bool log_steps, const std::string& d, const std::string& a,
                      const std::string& carry, const ColumnScanIndex& index, int64_t rows,
                      int64_t cols8) {
  const char* op = product ? "MUL" : "ADD";
  const std::string g = code.Scratch(3), at = code.IntScratchK(3);
  // Row 0 is carry op a, the others a.
  code.Line(absl::StrCat("T", op, "(", g, ", ", carry, ", ", a, ");"));
  code.Select(d, index.row, "GE", "1.0f", a, g);
  if (rows < 2) return;
  // at = each element's flat position - `shift` rows; g = d gathered at it.
  auto shift_rows = [&](int64_t shift) {
    code.Line(absl::StrCat("TADDS(", at, ", ", index.pos, ", ", -shift * cols8, ");"));
  };
  auto gather_rows_before = [&]() {
    const std::string fg = flat(g);
    code.Line(absl::StrCat("TGATHER(", fg, ", ", flat(d), ", ", flat_int(at), ");"));
    code.Line(absl::StrCat("TRESHAPE(", g, ", ", fg, ");"));
  };
  if (!log_steps) {
    // Rows >= i take the row before op a, so row i is final after step i.
    shift_rows(1);
    code.Line(absl::StrCat("for (int32_t i = 1; i < ", rows, "; ++i) {"));
    gather_rows_before();
    code.Line(absl::StrCat("T", op, "(", g, ", ", g, ", ", a, ");"));
    code.Select(d, index.row, "GE", "static_cast<float>(i)", g, d);
    code.Line("}");
    return;
  }
  for (int64_t s = 1; s < rows; s *= 2) {
    shift_rows(s);
    gather_rows_before();
    code.Line(absl::StrCat("T", op, "(", g, ", ", g, ", ", d, ");"));
    code.Select(d, index.row, "GE", absl::StrCat(s, ".0f"), g, d);
  }
}

void EmitLastRow(IntVectorCode& code, const FlatView& flat, const FlatView& flat_int,
                 const std::string& col, const std::string& d, const std::string& column,
                 const std::string& valid_rows, int64_t cols8) {
  // Each element's column + (valid_rows - 1) cols8.
  const std::string at = code.IntScratchK(3), g = code.Scratch(3);
  code.Line(absl::StrCat("TCVT(", at, ", ", column, ", RoundMode::CAST_RINT);"));
  code.Line(absl::StrCat("TADDS(", at, ", ", at, ", (", valid_rows, " - 1) * ", cols8, ");"));
  const std::string fat = flat_int(at), fg = flat(g);
  code.Line(absl::StrCat("TGATHER(", fg, ", ", flat(d), ", ", fat, ");"));
  code.Line(absl::StrCat("TRESHAPE(", g, ", ", fg, ");"));
  code.Line(absl::StrCat("TCOLMAX(", col, ", ", g, ");"));
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
