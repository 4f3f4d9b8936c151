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

std::string HalfResultSimStore(bool bf16, int64_t m, int64_t n, int64_t mp, int64_t np,
                               int64_t ldc, int buffer, const std::string& offset) {
  auto sync = [](const char* from, const char* to) {
    return absl::StrCat("  set_flag(", from, ", ", to, ", EVENT_ID0);\n", "  wait_flag(", from,
                        ", ", to, ", EVENT_ID0);\n");
  };
  const std::string shape = absl::StrCat(mp, ", ", np, ", BLayout::RowMajor, ", m, ", ", n);
  // The workspace's values into UB, rounded into a tile of `elem`, stored.
  auto rounded = [&](const char* elem) {
    return absl::StrCat(
        "  using UC = Tile<TileType::Vec, float, ", shape, ">;\n",
        "  using UH = Tile<TileType::Vec, ", elem, ", ", shape, ">;\n",
        "  UC uc;\n  TASSIGN(uc, 0x0);\n",
        "  UH uh;\n", absl::StrFormat("  TASSIGN(uh, 0x%x);\n", mp * np * 4),
        "  TLOAD(uc, gwc);\n", sync("PIPE_MTE2", "PIPE_V"),
        "  TCVT(uh, uc, RoundMode::CAST_RINT);\n", sync("PIPE_V", "PIPE_MTE3"),
        "  TSTORE(gc, uh);\n");
  };
  std::string out = absl::StrCat(
      "  using WC = GlobalTensor<float, Shape<1, 1, 1, ", m, ", ", n, ">, Stride<1, 1, 1, ", np,
      ", 1>, Layout::ND>;\n",
      "  alignas(64) float ws_c[", mp * np, "];\n",
      "  WC gwc(ws_c);\n",
      "  TSTORE(gwc, l0c);\n", sync("PIPE_FIX", "PIPE_MTE2"));
  if (!bf16) return absl::StrCat(out, rounded("half"));
  return absl::StrCat(
      out, "#if PTO_BF16_NATIVE\n", rounded("bfloat16_t"),
      "#else  // each value rounded as the host rounds it, stored as its word\n",
      "  __gm__ uint16_t* wc = reinterpret_cast<__gm__ uint16_t*>(b", buffer, ") + (", offset,
      ");\n",
      "  for (int r = 0; r < ", m, "; ++r) {\n",
      "    for (int c = 0; c < ", n, "; ++c) {\n",
      "      const float v = PtoBf16Round(ws_c[r * ", np, " + c]);\n",
      "      uint32_t w;\n",
      "      __builtin_memcpy(&w, &v, 4);\n",
      "      wc[r * ", ldc, " + c] = static_cast<uint16_t>(w >> 16);\n",
      "    }\n  }\n",
      "#endif\n");
}

}  // namespace pto::compiler::ascend
