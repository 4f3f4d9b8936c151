#include "compiler/targets/ascend/ascend_bf16.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace pto::compiler::ascend {
namespace {

// The int32 scratch tiles the words path uses (IntScratchK numbers).
constexpr int kW = 5, kHi = 6, kLo = 7, kQuiet = 8, kCount = 9;

// The f32 tile `t`'s bits into int32 tile `w` (through the workspace).
void BitsOf(Bf16Code& code, const std::string& t, const std::string& w) {
  code.SyncTo(Bf16Pipe::kMte3);
  code.Line(absl::StrCat("TSTORE(", code.WorkspaceF32(), ", ", t, ");"));
  code.SyncTo(Bf16Pipe::kMte2);
  code.Line(absl::StrCat("TLOAD(", w, ", ", code.WorkspaceI32(), ");"));
  code.SyncTo(Bf16Pipe::kV);
}

// The f32 tile `t` = the f32 whose bits are int32 tile `w` (the workspace).
void FromBits(Bf16Code& code, const std::string& w, const std::string& t) {
  code.SyncTo(Bf16Pipe::kMte3);
  code.Line(absl::StrCat("TSTORE(", code.WorkspaceI32(), ", ", w, ");"));
  code.SyncTo(Bf16Pipe::kMte2);
  code.Line(absl::StrCat("TLOAD(", t, ", ", code.WorkspaceF32(), ");"));
  code.SyncTo(Bf16Pipe::kV);
}

// Int32 tile `r` = the BF16 word of each f32 in `t` (nearest even, NaN
// quiet) as its signed 16-bit value. No step overflows int32.
void Words(Bf16Code& code, const std::string& t, const std::string& r) {
  const std::string w = code.IntScratchK(kW), hi = code.IntScratchK(kHi);
  const std::string lo = code.IntScratchK(kLo), quiet = code.IntScratchK(kQuiet);
  const std::string n = code.IntScratchK(kCount);
  BitsOf(code, t, w);
  code.Line(absl::StrCat("TEXPANDS(", n, ", 16);"));
  code.Line(absl::StrCat("TSHR(", hi, ", ", w, ", ", n, ");"));          // w >> 16 (arithmetic)
  code.Line(absl::StrCat("TANDS(", lo, ", ", w, ", 65535);"));           // w & 0xFFFF
  code.Line(absl::StrCat("TANDS(", quiet, ", ", hi, ", 1);"));           // the tie's parity
  code.Line(absl::StrCat("TADD(", lo, ", ", lo, ", ", quiet, ");"));
  code.Line(absl::StrCat("TADDS(", lo, ", ", lo, ", 32767);"));
  code.Line(absl::StrCat("TSHR(", lo, ", ", lo, ", ", n, ");"));         // the carry: 0 or 1
  code.Line(absl::StrCat("TADD(", lo, ", ", hi, ", ", lo, ");"));        // rounded
  code.Line(absl::StrCat("TORS(", quiet, ", ", hi, ", 64);"));           // a NaN's quiet word
  // NaN: (0x7F800000 - (w & 0x7FFFFFFF)) >> 31 is -1, else 0.
  code.Line(absl::StrCat("TANDS(", w, ", ", w, ", 2147483647);"));
  code.Line(absl::StrCat("TMULS(", w, ", ", w, ", -1);"));
  code.Line(absl::StrCat("TADDS(", w, ", ", w, ", 2139095040);"));
  code.Line(absl::StrCat("TEXPANDS(", n, ", 31);"));
  code.Line(absl::StrCat("TSHR(", w, ", ", w, ", ", n, ");"));
  // r = rounded + ((quiet - rounded) & nan)
  code.Line(absl::StrCat("TSUB(", quiet, ", ", quiet, ", ", lo, ");"));
  code.Line(absl::StrCat("TAND(", quiet, ", ", quiet, ", ", w, ");"));
  code.Line(absl::StrCat("TADD(", r, ", ", lo, ", ", quiet, ");"));
}

// Runs `native` under `#if PTO_BF16_NATIVE` and `words` under `#else`, each
// from the same pipe.
template <typename A, typename B>
void Branches(Bf16Code& code, A native, B words) {
  const Bf16Pipe start = code.PipeNow();
  code.Directive("#if PTO_BF16_NATIVE");
  native();
  code.SetPipeNow(start);
  code.Directive("#else");
  words();
  code.Directive("#endif");
}

}  // namespace

std::string Bf16Preamble() {
  return "// BF16: bfloat16_t tiles where the toolchain has the type (a device build,\n"
         "// or a CPU simulation with std::bfloat16_t); otherwise its 16-bit words.\n"
         "#if !defined(__CPU_SIM) || defined(CPU_SIM_BFLOAT_ENABLED)\n"
         "#define PTO_BF16_NATIVE 1\n"
         "#else\n"
         "#define PTO_BF16_NATIVE 0\n"
         "#endif\n"
         "// A scalar rounded to BF16 as the host rounds it (nearest even, NaN quiet).\n"
         "AICORE inline float PtoBf16Round(float f) {\n"
         "  uint32_t w;\n"
         "  __builtin_memcpy(&w, &f, 4);\n"
         "  w = (w & 0x7FFFFFFFu) > 0x7F800000u ? (w | 0x400000u) & 0xFFFF0000u\n"
         "                                      : (w + 0x7FFFu + ((w >> 16) & 1u)) & 0xFFFF0000u;\n"
         "  __builtin_memcpy(&f, &w, 4);\n"
         "  return f;\n"
         "}\n\n";
}

void EmitBf16Load(Bf16Code& code, const std::string& t, Bf16Tile shape, const std::string& g,
                  const std::string& words) {
  const bool row = shape == Bf16Tile::kRow;
  Branches(
      code,
      [&] {
        const std::string s = code.Bf16Stage(shape);
        code.SyncTo(Bf16Pipe::kMte2);
        code.Line(absl::StrCat("TLOAD(", s, ", ", g, ");"));
        code.SyncTo(Bf16Pipe::kV);
        code.Line(absl::StrCat("TCVT(", t, ", ", s, ", RoundMode::CAST_NONE);"));
      },
      [&] {
        // word v (signed) -> f32 v (exact) -> int32 v * 65536: the f32 bits.
        // A row tile's in a full one (TROWEXPAND), then back (TROWMAX of
        // each row's equal values).
        const std::string s = code.Int16Stage(shape), w = code.IntScratchK(kW);
        const std::string f = row ? code.Scratch(2) : t;
        code.SyncTo(Bf16Pipe::kMte2);
        code.Line(absl::StrCat("TLOAD(", s, ", ", words, ");"));
        code.SyncTo(Bf16Pipe::kV);
        code.Line(absl::StrCat("TCVT(", t, ", ", s, ", RoundMode::CAST_NONE);"));
        if (row) code.Line(absl::StrCat("TROWEXPAND(", f, ", ", t, ");"));
        code.Line(absl::StrCat("TCVT(", w, ", ", f, ", RoundMode::CAST_TRUNC);"));
        code.Line(absl::StrCat("TMULS(", w, ", ", w, ", 65536);"));
        FromBits(code, w, f);
        if (row) code.Line(absl::StrCat("TROWMAX(", t, ", ", f, ", ", code.Scratch(1), ");"));
      });
}

void EmitBf16Store(Bf16Code& code, const std::string& t, Bf16Tile shape, const std::string& g,
                   const std::string& words) {
  const bool row = shape == Bf16Tile::kRow, col = shape == Bf16Tile::kCol;
  Branches(
      code,
      [&] {
        const std::string s = code.Bf16Stage(shape);
        code.SyncTo(Bf16Pipe::kV);
        code.Line(absl::StrCat("TCVT(", s, ", ", t, ", RoundMode::CAST_RINT);"));
        code.SyncTo(Bf16Pipe::kMte3);
        code.Line(absl::StrCat("TSTORE(", g, ", ", s, ");"));
      },
      [&] {
        // The words as f32 values (exact), then TCVT into the int16 tile.
        const std::string s = code.Int16Stage(shape), r = code.IntScratchK(kW + 5);
        const std::string f = code.Scratch(2);
        std::string x = t;
        if (row || col) {
          code.SyncTo(Bf16Pipe::kV);
          code.Line(absl::StrCat(row ? "TROWEXPAND(" : "TCOLEXPAND(", f, ", ", t, ");"));
          x = f;
        }
        Words(code, x, r);
        code.Line(absl::StrCat("TCVT(", f, ", ", r, ", RoundMode::CAST_RINT);"));
        std::string v = f;
        if (row) {
          v = code.ScratchF32(shape);
          code.Line(absl::StrCat("TROWMAX(", v, ", ", f, ", ", code.Scratch(1), ");"));
        } else if (col) {
          v = code.ScratchF32(shape);
          code.Line(absl::StrCat("TCOLMAX(", v, ", ", f, ");"));
        }
        code.Line(absl::StrCat("TCVT(", s, ", ", v, ", RoundMode::CAST_RINT);"));
        code.SyncTo(Bf16Pipe::kMte3);
        code.Line(absl::StrCat("TSTORE(", words, ", ", s, ");"));
      });
}

void EmitBf16Round(Bf16Code& code, const std::string& t) {
  Branches(
      code,
      [&] {
        const std::string s = code.Bf16Stage(Bf16Tile::kFull);
        code.SyncTo(Bf16Pipe::kV);
        code.Line(absl::StrCat("TCVT(", s, ", ", t, ", RoundMode::CAST_RINT);"));
        code.Line(absl::StrCat("TCVT(", t, ", ", s, ", RoundMode::CAST_NONE);"));
      },
      [&] {
        code.UseBf16RoundFunction();
        code.SyncTo(Bf16Pipe::kV);
        code.Line(absl::StrCat("bf16_round(", t, ");"));
      });
}

void EmitBf16RoundFunction(Bf16Code& code, const std::string& x) {
  const std::string r = code.IntScratchK(kW + 5);
  Words(code, x, r);
  code.Line(absl::StrCat("TMULS(", r, ", ", r, ", 65536);"));
  FromBits(code, r, x);
}

}  // namespace pto::compiler::ascend
