// A vector function run chunk after chunk (host_plan::ChunkElements): GM
// addresses of the loads read in place first, then one loop over the
// tile's chunks c, with tiles one chunk long inside it, each instruction
// over the chunk at c.
#include "absl/strings/str_cat.h"
#include "compiler/targets/host/host_emit.h"

namespace pto::compiler::host_emit {

absl::StatusOr<std::string> EmitChunkedFunction(const VectorFunction& f) {
  std::string out = FunctionHeader(f.index);
  absl::StrAppend(&out, InPlaceLoadPointers(f), "  for (int64_t c = 0; c < ", f.elems,
                  "; c += ", f.chunk, ") {\n");
  absl::StrAppend(&out, TileArrays(f, "    ", [&](int t) { return f.IsRow(t) ? f.row_n : f.n; }));
  InstructionEmitter instructions(f, "    ", &out);
  if (absl::Status s = instructions.EmitBody(); !s.ok()) return s;
  absl::StrAppend(&out, "  }\n}\n\n");
  return out;
}

}  // namespace pto::compiler::host_emit
