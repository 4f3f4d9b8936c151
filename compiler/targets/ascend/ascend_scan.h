// The Ascend target's scans: TCUMSUM and TCUMPROD along the last dim of a
// tile (seeded by a row tile, the carry from the tile before), and
// TREDLAST, the last valid column into a row tile (the next tile's carry),
// as compositions of PTO-ISA vector instructions. Two forms of the scan:
//
//   in order (f32 running values, the host's FP16 and BF16 scans):
//     column 0:  TROWEXPANDADD (TROWEXPANDMUL) of the tile and the carry
//     column j:  a loop over j = 1 .. cols - 1 in the generated code:
//                TGATHER of the scan at each element's flat position - 1
//                (the column before), TADD (TMUL) with the tile, and TSEL
//                into the scan where the column index >= j (TCMPS GE)
//   in log2(cols) steps (double running values, the host's FP32 scans):
//     column 0 takes the carry (TROWEXPANDADD, TSEL), then for s = 1, 2,
//     4, .. < cols (Hillis-Steele): TGATHER of the scan at each element's
//     flat position - s, TADD (TMUL) with the scan, TSEL into the scan
//     where the column index >= s
//   TREDLAST:  TGATHER at each row's last valid position, TROWMAX (the
//              row's values are equal)
//
// Down the columns of the flattened tile (dim 0 of a rank-2 tile, or a dim
// whose tile is the only one before the last above 1), the same two forms
// with rows for columns (EmitScanFirstDim: flat positions cols8 apart, the
// carry a column tile expanded), and TREDLAST by TGATHER of the last valid
// row and TCOLMAX (EmitLastRow).
//
// TGATHER works on the flat [1, rows8 * cols8] views (the A2/A3 TGATHER
// needs every column of its tiles valid), its indices flat positions.
//
// The in-order form makes one operation per element in index order in f32,
// so a scan of f32 values has the bits of the same scan run in f32 one
// element at a time (the host's FP16 and BF16 scans). The host scans FP32
// values in double (torch's accumulator), which the target's f32 tiles
// hold rounded: there the log-step form's partial sums (products) of at
// most log2(cols) + 1 roundings each are within the bound docs/pto-isa.md
// states for an f32 scan. Columns beyond the valid region are scanned too
// and never stored.
#ifndef PTO_COMPILER_TARGETS_ASCEND_ASCEND_SCAN_H_
#define PTO_COMPILER_TARGETS_ASCEND_ASCEND_SCAN_H_

#include <cstdint>
#include <functional>
#include <string>

#include "compiler/targets/ascend/ascend_int_math.h"

namespace pto::compiler::ascend {

// The index tiles a scan reads: `col`, a full f32 tile of each element's
// column index; `before`, a full int32 tile of each element's flat position
// in the [rows8, cols8] tile minus one, and `before_flat` its flat view.
struct ScanIndex {
  std::string col;
  std::string before;
  std::string before_flat;
};

// The flat view of a full tile (f32 or int32) after a TRESHAPE into it.
using FlatView = std::function<std::string(const std::string& full)>;

// d (full) = the inclusive scan (sum, or product with `product`) along the
// last dim of the full tile `a` over `cols` columns, seeded by the row tile
// `carry`: in index order, or in log2(cols) steps with `log_steps`. d is
// not a or carry. Scratch: f32 tile 3 (and int32 tile 3 with `log_steps`).
void EmitScanLastDim(IntVectorCode& code, const FlatView& flat, const FlatView& flat_int,
                     bool product, bool log_steps, const std::string& d, const std::string& a,
                     const std::string& carry, const ScanIndex& index, int64_t cols);

// The index tiles of a scan down the columns (along dim 0 of a rank-2
// tile): `row`, a full f32 tile of each element's row index; `pos`, a full
// int32 tile of each element's flat position in the [rows8, cols8] tile.
struct ColumnScanIndex {
  std::string row;
  std::string pos;
};

// d (full) = the inclusive scan (sum, or product with `product`) down the
// columns of the full tile `a` over `rows` rows (flat positions `cols8`
// apart), seeded by the full tile `carry` (the carry row expanded: every row
// the carry): in index order, or in log2(rows) steps with `log_steps`, as
// EmitScanLastDim. d is not a or carry; carry may be f32 scratch tile 3,
// which this takes. Scratch: f32 tile 3, int32 tile 3.
void EmitScanFirstDim(IntVectorCode& code, const FlatView& flat, const FlatView& flat_int,
                      bool product, bool log_steps, const std::string& d, const std::string& a,
                      const std::string& carry, const ColumnScanIndex& index, int64_t rows,
                      int64_t cols8);

// col (a column tile) = row `valid_rows` - 1 of the full tile d (flat
// positions `cols8` apart); `valid_rows` an int32 C++ expression. `column`:
// a full f32 tile of each element's column index. Scratch: f32 tile 3,
// int32 tile 3.
void EmitLastRow(IntVectorCode& code, const FlatView& flat, const FlatView& flat_int,
                 const std::string& col, const std::string& d, const std::string& column,
                 const std::string& valid_rows, int64_t cols8);

// row (a row tile) = column `valid_cols` - 1 of the full tile d;
// `valid_cols` an int32 C++ expression. Scratch: f32 tiles 1 and 3, int32
// tile 3.
void EmitLastColumn(IntVectorCode& code, const FlatView& flat, const FlatView& flat_int,
                    const std::string& row, const std::string& d, const ScanIndex& index,
                    const std::string& valid_cols);

}  // namespace pto::compiler::ascend

#endif  // PTO_COMPILER_TARGETS_ASCEND_ASCEND_SCAN_H_
