#include "compiler/targets/ascend/ascend_bf16_matmul.h"

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/targets/memory_model.h"
#include "compiler/util/checked_math.h"

namespace pto::compiler::ascend {
namespace {

// The operand's type names: <prefix><name>, e.g. "U16a".
std::string Name(const char* prefix, const Bf16CubeOperand& op) {
  return absl::StrCat(prefix, op.name);
}

std::string Sync(const char* from, const char* to) {
  return absl::StrCat("    set_flag(", from, ", ", to, ", EVENT_ID0);\n", "    wait_flag(", from,
                      ", ", to, ", EVENT_ID0);\n");
}

}  // namespace

absl::StatusOr<std::string> Bf16CubeDeclarations(const Bf16CubeOperand& op,
                                                 int function) {
  // The staging tiles (int16 words, f32 values, int32 bits) share the UB
  // with the other operand's: each is stored to GM before the next loads.
  const std::optional<int64_t> elements = CheckedMul(op.pad_rows, op.pad_cols);
  const std::optional<int64_t> ub = elements ? CheckedMul(*elements, 2 + 4 + 4) : std::nullopt;
  if (!ub || *ub > kAiCoreMemoryModel.ub_bytes) {
    return absl::UnimplementedError(absl::StrCat(
        "ascend target: function @f", function, ": TMATMUL of BF16 operands: ", op.name,
        "'s widened [", op.pad_rows, " x ", op.pad_cols, "] block needs ",
        ub ? absl::StrCat(*ub) : std::string("more than 2^63"), " bytes of UB staging, more than the ",
        kAiCoreMemoryModel.ub_bytes, " an AI core has"));
  }
  const std::string shape = absl::StrCat(op.pad_rows, ", ", op.pad_cols);
  const std::string tile_tail = ", BLayout::RowMajor, DYNAMIC, DYNAMIC>;\n";
  return absl::StrCat(
      "  using ", Name("U16", op), " = Tile<TileType::Vec, int16_t, ", shape, tile_tail,
      "  using ", Name("UF", op), " = Tile<TileType::Vec, float, ", shape, tile_tail,
      "  using ", Name("UI", op), " = Tile<TileType::Vec, int32_t, ", shape, tile_tail,
      "  using ", Name("W", op), " = GlobalTensor<int16_t, GStep, Stride<1, 1, 1, ", op.ld,
      ", 1>, Layout::ND>;\n",
      "  using ", Name("WS", op), " = GlobalTensor<int32_t, GStep, Stride<1, 1, 1, ", op.pad_cols,
      ", 1>, Layout::ND>;\n",
      "  __gm__ int16_t* w", op.name, " = reinterpret_cast<__gm__ int16_t*>(b", op.buffer, ") + (",
      op.offset, ");\n",
      "  alignas(64) int32_t ws_", op.name, "[", *elements, "];\n",
      "  __gm__ float* wsf_", op.name, " = reinterpret_cast<__gm__ float*>(ws_", op.name, ");\n");
}

std::string Bf16CubeWiden(const Bf16CubeOperand& op) {
  const std::string n = op.name, ext = absl::StrCat("(", op.rows, ", ", op.cols, ")");
  const std::string u16 = "u16" + n, uf = "uf" + n, ui = "ui" + n;
  return absl::StrCat(
      "    ", Name("U16", op), " ", u16, ext, ";\n    TASSIGN(", u16, ", 0x0);\n",
      "    ", Name("UF", op), " ", uf, ext, ";\n",
      absl::StrFormat("    TASSIGN(%s, 0x%x);\n", uf, op.pad_rows * op.pad_cols * 2),
      "    ", Name("UI", op), " ", ui, ext, ";\n",
      absl::StrFormat("    TASSIGN(%s, 0x%x);\n", ui, op.pad_rows * op.pad_cols * 6),
      "    ", Name("W", op), " gw", n, "(w", n, " + ", op.step, ", GStep", ext, ");\n",
      "    TLOAD(", u16, ", gw", n, ");\n",
      Sync("PIPE_MTE2", "PIPE_V"),
      "    TCVT(", uf, ", ", u16, ", RoundMode::CAST_NONE);\n",
      "    TCVT(", ui, ", ", uf, ", RoundMode::CAST_TRUNC);\n",
      "    TMULS(", ui, ", ", ui, ", 65536);\n",
      Sync("PIPE_V", "PIPE_MTE3"),
      "    ", Name("WS", op), " gws", n, "(ws_", n, ", GStep", ext, ");\n",
      "    TSTORE(gws", n, ", ", ui, ");\n",
      Sync("PIPE_MTE3", "PIPE_MTE2"));
}

}  // namespace pto::compiler::ascend
