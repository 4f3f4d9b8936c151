// A vector function run row after row (host_plan::PerRow): GM addresses of
// the loads read in place first, then loops over the tile's rows (i0, i1,
// i2 over its leading dims) with one-row tiles inside, each instruction
// over the row, the one-row fusions where they apply.
#include "absl/strings/str_cat.h"
#include "compiler/targets/host/host_emit.h"

namespace pto::compiler::host_emit {

absl::StatusOr<std::string> EmitPerRowFunction(const VectorFunction& f) {
  std::string out = FunctionHeader(f.index);
  absl::StrAppend(&out, InPlaceLoadPointers(f), " ");
  for (int k = 0; k < 3; ++k) {
    if (f.tile4[k] > 1) {
      absl::StrAppend(&out, " for (int64_t i", k, " = 0; i", k, " < ", f.tile4[k], "; ++i", k,
                      ")");
    }
  }
  absl::StrAppend(&out, " {\n");
  absl::StrAppend(&out, TileArrays(f, "    ", [&](int t) { return f.IsRow(t) ? f.row_n : f.n; }));
  InstructionEmitter instructions(f, "    ", &out);
  if (absl::Status s = instructions.EmitBody(); !s.ok()) return s;
  absl::StrAppend(&out, "  }\n}\n\n");
  return out;
}

}  // namespace pto::compiler::host_emit
