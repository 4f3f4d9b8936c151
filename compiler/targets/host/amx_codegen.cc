#include "compiler/targets/host/amx_codegen.h"

#include "absl/strings/str_cat.h"

namespace pto::compiler {
namespace {

constexpr int64_t RoundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// Scratch tiles past this many bytes go on the heap: a cube task may run
// on a calling thread with only Executor::kMinHelperStackBytes (1 MiB) of
// stack left.
constexpr int64_t kMaxStackTileBytes = 128 * 1024;

// A uint16 scratch tile of `elems` elements named `name`; sets *heap.
std::string ScratchTile(const char* name, int64_t elems, bool* heap) {
  *heap = elems * 2 > kMaxStackTileBytes;
  if (*heap) {
    return absl::StrCat("  uint16_t* const ", name, " = static_cast<uint16_t*>(__builtin_malloc(",
                        elems * 2, "));\n");
  }
  return absl::StrCat("  alignas(64) uint16_t ", name, "[", elems, "];\n");
}

}  // namespace

std::string EmitAmxCubeBody(const AmxCubeShape& s) {
  // pto_amx::KBlock: all of K up to 2048, in multiples of 32.
  const int64_t kblock = RoundUp(s.k < 2048 ? (s.k > 0 ? s.k : 1) : 2048, 32);
  const std::string ms = s.m_expr.empty() ? absl::StrCat(s.m) : s.m_expr;
  const std::string ns = s.n_expr.empty() ? absl::StrCat(s.n) : s.n_expr;
  bool l0b_heap = false, l0a_heap = false;
  std::string out = absl::StrCat(
      "  // AMX-BF16 (pto_amx.h): K blocks of ", kblock, "\n",
      ScratchTile("l0b", RoundUp(kblock, 32) * RoundUp(s.n, 16), &l0b_heap),
      s.a_trans ? ScratchTile("l0a", RoundUp(s.m, 16) * RoundUp(kblock, 32), &l0a_heap) : "",
      "  alignas(64) float l0c[", RoundUp(s.m, 16) * RoundUp(s.n, 16), "];\n", s.extents);
  if (s.k == 0) {
    absl::StrAppend(&out, "  for (int i = 0; i < ", RoundUp(s.m, 16) * RoundUp(s.n, 16),
                    "; ++i) l0c[i] = 0.0f;\n");
  } else {
    // A not transposed: tile loads read it from GM (rows m, K kb); A^T is
    // copied into l0a, zero-padded to whole tiles.
    const std::string a_args =
        s.a_trans ? absl::StrCat("l0a, lda0, l0b, ",
                                 s.m_expr.empty() ? absl::StrCat(RoundUp(s.m, 16))
                                                  : absl::StrCat("static_cast<int>(pto_amx::RoundUp(",
                                                                 ms, ", 16))"),
                                 ", static_cast<int>(pto_amx::RoundUp(kb, 32)), ", ns)
                  : absl::StrCat("a + k, ", s.lda, ", l0b, ", ms, ", kb, ", ns);
    absl::StrAppend(
        &out, "  pto_amx::AmxBegin();\n",
        "  for (int64_t k = 0; k < ", s.k, "; k += ", kblock, ") {\n",
        "    const int kb = static_cast<int>(", s.k, " - k < ", kblock, " ? ", s.k, " - k : ",
        kblock, ");\n",
        "    pto_amx::AmxMovL0B(l0b, b + ", s.b_trans ? "k" : absl::StrCat("k * ", s.ldb), ", ",
        s.ldb, ", ", s.b_trans ? "true" : "false", ", kb, ", ns, ");\n",
        s.a_trans ? absl::StrCat("    const int64_t lda0 = pto_amx::AmxMovL0ATrans(l0a, a + k * ",
                                 s.lda, ", ", s.lda, ", ", ms, ", kb);\n")
                  : "",
        "    if (k == 0) {\n",
        "      pto_amx::AmxMatmul<false>(l0c, ", a_args, ");\n",
        "    } else {\n",
        "      pto_amx::AmxMatmul<true>(l0c, ", a_args, ");\n",
        "    }\n  }\n",
        "  pto_amx::AmxEnd();\n");
  }
  absl::StrAppend(&out, "  pto_amx::AmxStoreL0C<pto_tile::Elem<", s.out_type, ">>(c, ", s.ldc,
                  ", l0c, ", ms, ", ", ns, ");\n", l0b_heap ? "  __builtin_free(l0b);\n" : "",
                  l0a_heap ? "  __builtin_free(l0a);\n" : "");
  return out;
}

}  // namespace pto::compiler
