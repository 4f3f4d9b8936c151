// The Ascend target's emitter of one vector block function, shared by the
// files that emit its parts: ascend_codegen.cc (the UB plan, GM moves,
// float compute, the function's text), ascend_int_codegen.cc (integer
// tiles), ascend_words_codegen.cc (INT64 values as int32 word pairs) and
// ascend_index_codegen.cc (arg reductions, gather and scatter).
// Internal to the target: ascend_codegen.h is its interface.
#ifndef PTO_COMPILER_TARGETS_ASCEND_ASCEND_FUNCTION_EMITTER_H_
#define PTO_COMPILER_TARGETS_ASCEND_ASCEND_FUNCTION_EMITTER_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "compiler/pto/pto_program.h"
#include "compiler/targets/ascend/ascend_bf16.h"
#include "compiler/targets/ascend/ascend_int64.h"
#include "compiler/targets/ascend/ascend_int64_arith.h"
#include "compiler/targets/ascend/ascend_scan.h"
#include "compiler/targets/host/host_function_plan.h"

namespace pto::compiler::ascend {

using host_plan::Access;
using host_plan::MakeAccess;
using host_plan::Viewed;

constexpr int64_t kUbAlign = 32;  // bytes: a Tile's rows (or columns) and base

inline int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// Where an instruction runs: the pipes set_flag/wait_flag order.
enum class Pipe { kMte2, kV, kMte3 };

inline const char* PipeName(Pipe p) {
  switch (p) {
    case Pipe::kMte2: return "PIPE_MTE2";
    case Pipe::kV: return "PIPE_V";
    case Pipe::kMte3: return "PIPE_MTE3";
  }
  return "PIPE_V";
}

// The shape of a UB tile in the flattened [rows, cols] view.
enum class Kind { kFull, kRow, kCol };

inline bool Reduces(PtoOpcode op) {
  return op == PtoOpcode::kTRedSum || op == PtoOpcode::kTRedMax ||
         op == PtoOpcode::kTRedMin || op == PtoOpcode::kTRedProd ||
         op == PtoOpcode::kTArgFirst || op == PtoOpcode::kTArgSel || op == PtoOpcode::kTRedLast;
}

inline bool Compares(PtoOpcode op) {
  switch (op) {
    case PtoOpcode::kTCmpEq: case PtoOpcode::kTCmpNe: case PtoOpcode::kTCmpLt:
    case PtoOpcode::kTCmpLe: case PtoOpcode::kTCmpGt: case PtoOpcode::kTCmpGe:
    case PtoOpcode::kTCmpEqS: case PtoOpcode::kTCmpNeS: case PtoOpcode::kTCmpLtS:
    case PtoOpcode::kTCmpLeS: case PtoOpcode::kTCmpGtS: case PtoOpcode::kTCmpGeS:
      return true;
    default:
      return false;
  }
}

// What a UB tile's elements are: f32 (FP32, FP16, BF16 values, and BOOL,
// INT8, INT16, UINT8 ones exactly), int32 (INT32 values, and an arg
// reduction's INT64 positions), int64 (INT64 values that are only moved) or
// words (INT64 sums and products: each value's two 32-bit words, low first,
// in an int32 tile of twice the columns; ascend_int64.h).
enum class Elem { kF32, kI32, kI64, kWords };

// Integers in GM: INT32 and INT64 in int tiles, the narrow ones through a
// staging tile of their own type into f32 tiles.
inline bool IntGm(pto::v1::DataType t) {
  return t == pto::v1::DT_INT32 || t == pto::v1::DT_INT64 || t == pto::v1::DT_INT8 ||
         t == pto::v1::DT_INT16 || t == pto::v1::DT_UINT8;
}

// The narrow integer types, held exactly in f32 tiles.
inline bool NarrowInt(pto::v1::DataType t) {
  return t == pto::v1::DT_INT8 || t == pto::v1::DT_INT16 || t == pto::v1::DT_UINT8;
}

// A tile's values are stored as f32 (BOOL as 0.0/1.0, exactly; DOUBLE: the
// scans' accumulator, rounded to f32, in workspaces only: PlanTiles).
inline bool StoredAsF32(pto::v1::DataType t) {
  return t == pto::v1::DT_FP32 || t == pto::v1::DT_BOOL || t == pto::v1::DT_DOUBLE;
}

// One block function being emitted.
class FunctionEmitter : public ascend::Bf16Code, public ascend::Int64Code {
 public:
  FunctionEmitter(const PtoProgram& p, int index)
      : p_(p), fn_(p.functions[index]), index_(index) {}

  absl::StatusOr<std::string> Emit();

 private:
  absl::Status Unsupported(PtoOpcode op, absl::string_view why) const {
    return absl::UnimplementedError(absl::StrCat(
        "ascend target: function @f", index_, ": ", PtoOpcodeName(op), " ", why,
        " (docs/pto-isa.md lists what the target maps)"));
  }
  absl::Status PlanTiles();
  // UNIMPLEMENTED for the index instructions and the bitcasts the target
  // cannot express (ascend_codegen.cc says why for each).
  absl::Status CheckBitcast() const;
  absl::Status EmitInstr(int i);
  absl::Status EmitGm(const PtoInstr& in, int i, Kind kind);
  absl::Status EmitCompute(const PtoInstr& in);
  void Sync(Pipe next);
  void Line(const std::string& s) override { absl::StrAppend(&body_, "  ", s, "\n"); }
  std::string T(int t) const { return absl::StrCat("t", t); }
  std::string Scalar(const PtoInstr& in, size_t j) const;
  // The full f32 scratch tiles (declared after the plan's own): tmp, tmp2,
  // tmp3, ...
  std::string Scratch(int k) override {
    if (static_cast<int>(need_tmp_.size()) < k) need_tmp_.resize(k, false);
    need_tmp_[k - 1] = true;
    return k == 1 ? "tmp" : absl::StrCat("tmp", k);
  }
  std::string Tmp() { return Scratch(1); }
  // The exact extrema (EmitCompute): maxima and minima that keep a NaN from
  // any position and the host's zero take full scratch tiles of their own
  // (xtmp, xtmp2, xtmp3, placed last in the UB plan). Each extremum is
  // emitted in both forms, its exact form and PTO-ISA's instructions as
  // they are; Emit keeps the exact forms where the UB holds their scratch
  // besides the function's tiles, else the plain ones.
  std::string ExtremaScratch(int k) {
    if (static_cast<int>(need_xtmp_.size()) < k) need_xtmp_.resize(k, false);
    need_xtmp_[k - 1] = true;
    return k == 1 ? "xtmp" : absl::StrCat("xtmp", k);
  }
  template <typename ExactFn, typename PlainFn>
  absl::Status EmitExtremum(ExactFn exact, PlainFn plain) {
    const size_t start = body_.size();
    if (absl::Status s = plain(); !s.ok()) return s;
    std::string plain_text = body_.substr(start);
    body_.resize(start);
    if (absl::Status s = exact(); !s.ok()) return s;
    std::string exact_text = body_.substr(start);
    body_.resize(start);
    absl::StrAppend(&body_, ExtremumMarker(extrema_.size()), "\n");
    extrema_.push_back({std::move(exact_text), std::move(plain_text)});
    return absl::OkStatus();
  }
  static std::string ExtremumMarker(size_t k) { return absl::StrCat("@extremum", k, "@"); }
  std::string Tmp2() { return Scratch(2); }
  std::string Tmp3() { return Scratch(3); }
  std::string Tmp4() { return Scratch(4); }
  // Comparisons and selection (ascend_codegen.cc, EmitCompare/EmitSelect).
  // `t` as a full tile: itself, or a row tile expanded into scratch `slot`.
  std::string FullOperand(int t, int slot) {
    if (kind_[t] != Kind::kRow) return T(t);
    Line(absl::StrCat("TROWEXPAND(", Scratch(slot), ", ", T(t), ");"));
    return Scratch(slot);
  }
  // The flat [1, rows8 * cols8] view of a full tile (TRESHAPE: an alias on
  // the device, a copy in the CPU simulation), declared once.
  std::string Flat(const std::string& full) {
    const std::string f = absl::StrCat("f", full);
    flat_views_.insert(f);
    Line(absl::StrCat("TRESHAPE(", f, ", ", full, ");"));
    return f;
  }
  std::string Mask() { need_mask_ = true; return "mask"; }
  // A row (column) tile of scratch: a reduction's intermediate.
  std::string RowScratch() { need_row_tmp_ = true; return "rtmp"; }
  std::string ColScratch() { need_col_tmp_ = true; return "ctmp"; }
  // Run-time extents: the valid rows and columns of the flattened tile.
  std::string ValidRows() const {
    return rank_ > 1 ? absl::StrCat("args[", fn_.num_args - rank_, "]") : "1";
  }
  std::string ValidCols() const { return absl::StrCat("args[", fn_.num_args - 1, "]"); }
  absl::Status EmitCompare(const PtoInstr& in);
  absl::Status EmitCompareFlat(const std::string& fx, const std::string& c, PtoOpcode base,
                               const std::string& d);
  absl::Status EmitSelect(const PtoInstr& in);
  // Integers (ascend_int_codegen.cc): the element kinds of the
  // program's INT64-storage tiles, TLOAD/TSTORE of integer buffers, the
  // instructions on int32 tiles and casts to and from them, and argmax/
  // argmin's TARGFIRST/TARGSEL.
  absl::Status PlanIntTiles();
  // Gives each run of INT64 values in a tile that also holds INT32 values
  // (the tile allocator reuses int64-storage tiles) a tile of its own, so
  // that words tiles and int32 tiles stay apart.
  void SplitMixedIntTiles();
  bool IsIntInstr(const PtoInstr& in) const;
  absl::Status EmitIntMove(const PtoInstr& in, const std::string& g, int tile, Kind kind,
                           bool row_nd);
  absl::Status EmitIntCompute(const PtoInstr& in);
  absl::Status EmitIntCompare(const PtoInstr& in);
  absl::Status EmitIntCast(const PtoInstr& in);
  // TREDMAX/TREDMIN of a full int32 tile into an int32 row (column) tile,
  // through exact f32 extrema of its 16-bit halves.
  absl::Status EmitIntReduce(const PtoInstr& in);
  // d (full f32) = 1.0/0.0 for the flat int32 view `fx` MODE c (c an int32
  // C++ expression).
  void IntCompareFlat(const std::string& fx, const char* mode, const std::string& c,
                      const std::string& d);
  // Wraps the int32 tile x in place to INT8/INT16/UINT8 (torch's wrap).
  void WrapNarrow(const std::string& x, pto::v1::DataType to);
  absl::Status EmitArg(const PtoInstr& in);
  // TSIGNBIT: 1.0/0.0 where the f32 bits, read as int32, are negative.
  absl::Status EmitSignbit(const PtoInstr& in);
  // TCUMSUM, TCUMPROD and TREDLAST along the last dim, and down the columns
  // of the flattened tile (EmitColumnScan) (ascend_scan.h).
  absl::Status EmitScan(const PtoInstr& in);
  // Whether a scan along dim k runs down the flattened tile's columns: k is
  // before the last dim and the tile's other dims before the last are 1
  // (dim 0 of a rank-2 tile), so its carry is one row.
  bool ColumnScanDim(int k) const {
    if (k < 0 || k >= rank_ - 1) return false;
    for (int d = 0; d + 1 < rank_; ++d) {
      if (d != k && fn_.tile[d] != 1) return false;
    }
    return true;
  }
  absl::Status EmitColumnScan(const PtoInstr& in);
  ascend::ScanIndex ScanIndexTiles();
  // A full int32 tile at the UB address of the full f32 tile `full` (its
  // bits on the device); declared after the UB plan.
  std::string BitsView(const std::string& full) {
    const std::string v = absl::StrCat(full, "_bits");
    bits_views_.emplace(v, full);
    return v;
  }
  // The index instructions (ascend_index_codegen.cc):
  // MGATHER and MSCATTER at linear offsets computed in int32 tiles.
  struct Indexed {
    std::string g;      // the whole buffer as a GlobalTensor
    std::string off;    // full int32 tile: each element's linear offset
    std::string valid;  // flat f32 view: 1.0 where the index is in range
    std::string e, row, col;  // flat int32 views: position, row, column
    std::string zero;         // flat int32 view of zeros
  };
  absl::StatusOr<Indexed> IndexOffsets(const PtoInstr& in, int idx, int i, bool in_region);
  // The tile MGATHER writes or MSCATTER reads for a buffer of `dtype`
  // (elements of the buffer's size): `tile` itself or a staging tile.
  absl::StatusOr<std::string> IndexStage(const PtoInstr& in, pto::v1::DataType dtype,
                                         const std::string& tile);
  absl::Status EmitGather(const PtoInstr& in, int i);
  absl::Status EmitScatter(const PtoInstr& in, int i);
  // p (an f32 row tile; column tile: `row` false) = the first position
  // along the last dim (dim 0) where the full f32 tile x equals m, a row
  // (column) tile, NaN matching NaN, as f32; 0 where none does.
  void FirstMatch(const std::string& x, const std::string& m, const std::string& p, bool row);
  // f32 row scratch tile k (1: rtmp, 2: rtmp2, ...).
  std::string RowTmpK(int k) {
    if (k == 1) return RowScratch();
    if (static_cast<int>(need_rtmp_.size()) < k) need_rtmp_.resize(k, false);
    need_rtmp_[k - 1] = true;
    return absl::StrCat("rtmp", k);
  }
  // f32 column scratch tile k (1: ctmp, 2: ctmp2, ...).
  std::string ColTmpK(int k) {
    if (k == 1) return ColScratch();
    if (static_cast<int>(need_ctmp_.size()) < k) need_ctmp_.resize(k, false);
    need_ctmp_[k - 1] = true;
    return absl::StrCat("ctmp", k);
  }
  // Full int32 scratch tile k (1: itmp, 2: itmp2, ...).
  std::string IntTmpK(int k) {
    if (k == 1) return IntTmp();
    if (static_cast<int>(need_itmp_.size()) < k) need_itmp_.resize(k, false);
    need_itmp_[k - 1] = true;
    return absl::StrCat("itmp", k);
  }
  // The flat [1, rows8 * cols8] int32 view of a full int32 tile.
  std::string FlatI(const std::string& full) {
    const std::string f = absl::StrCat("f", full);
    int_flat_views_.insert(f);
    Line(absl::StrCat("TRESHAPE(", f, ", ", full, ");"));
    return f;
  }
  // dst (full) = mask ? 1 : 0 (or 0 : 1 with `invert`).
  void SelectOneZero(const std::string& dst, bool invert);
  // A full uint8 scratch tile (BOOL data in GM).
  std::string ByteTmp() { need_byte_ = true; return "btmp"; }
  // A full int32 scratch tile (TCVT's rounding modes).
  std::string IntTmp() { need_int_ = true; return "itmp"; }
  std::string IntScratch() override { return IntTmp(); }
  std::string IntScratchK(int k) override { return IntTmpK(k); }
  void IntSelect(const std::string& dst, const std::string& x, const char* mode,
                 const std::string& c, const std::string& a, const std::string& b) override {
    Line(absl::StrCat("TCMPS(", Mask(), ", ", FlatI(x), ", ", c, ", CmpMode::", mode, ");"));
    const std::string fa = FlatI(a), fb = FlatI(b), fd = FlatI(dst);
    Line(absl::StrCat("TSEL(", fd, ", ", Mask(), ", ", fa, ", ", fb, ");"));
    Line(absl::StrCat("TRESHAPE(", dst, ", ", fd, ");"));
  }
  void Select(const std::string& dst, const std::string& x, const char* mode,
              const std::string& c, const std::string& a, const std::string& b) override {
    Line(absl::StrCat("TCMPS(", Mask(), ", ", Flat(x), ", ", c, ", CmpMode::", mode, ");"));
    const std::string fa = Flat(a), fb = Flat(b), fd = Flat(dst);
    Line(absl::StrCat("TSEL(", fd, ", ", Mask(), ", ", fa, ", ", fb, ");"));
    Line(absl::StrCat("TRESHAPE(", dst, ", ", fd, ");"));
  }
  // INT64 sums and products (ascend_int64.h): words tiles, by the result's
  // shape.
  static Kind KindOf(ascend::Int64Shape s) {
    return s == ascend::Int64Shape::kRow   ? Kind::kRow
           : s == ascend::Int64Shape::kCol ? Kind::kCol
                                           : Kind::kFull;
  }
  static const char* WordsSuffix(Kind k) {
    return k == Kind::kRow ? "Row" : k == Kind::kCol ? "Col" : "Full";
  }
  std::string ReducedF32(ascend::Int64Shape s) override {
    return s == ascend::Int64Shape::kRow   ? RowTmpK(2)
           : s == ascend::Int64Shape::kCol ? ColTmpK(2)
                                           : Scratch(3);
  }
  std::string WordsInt(ascend::Int64Shape s, int k) override {
    words_scratch_.insert({static_cast<int>(KindOf(s)), k});
    return absl::StrCat("w", absl::AsciiStrToLower(WordsSuffix(KindOf(s))), k);
  }
  std::string WordsF32(ascend::Int64Shape s) override {
    words_scratch_.insert({static_cast<int>(KindOf(s)), 0});
    return absl::StrCat("w", absl::AsciiStrToLower(WordsSuffix(KindOf(s))), "f");
  }
  void FullIndex(const std::string& dst) override {
    const std::string f = FlatI(dst);
    Line(absl::StrCat("TCI<FlatInt, int32_t, 0>(", f, ", 0);"));
    Line(absl::StrCat("TRESHAPE(", dst, ", ", f, ");"));
  }
  void WordsIndex(ascend::Int64Shape s, const std::string& dst) override {
    const char* suffix = WordsSuffix(KindOf(s));
    words_flat_.insert(static_cast<int>(KindOf(s)));
    const std::string f = absl::StrCat("fw", absl::AsciiStrToLower(suffix));
    Line(absl::StrCat("TRESHAPE(", f, ", ", dst, ");"));
    Line(absl::StrCat("TCI<FlatWords", suffix, ", int32_t, 0>(", f, ", 0);"));
    Line(absl::StrCat("TRESHAPE(", dst, ", ", f, ");"));
  }
  // TREDSUM/TREDPROD of INT32 values or INT64 words into an INT64 words tile.
  absl::Status EmitInt64Reduce(const PtoInstr& in);
  // INT64 values computed on (ascend_words_codegen.cc): instructions with a
  // words tile as result or operand, other than TREDSUM/TREDPROD.
  bool UsesWords(const PtoInstr& in) const;
  absl::Status EmitWordsCompute(const PtoInstr& in);
  absl::Status EmitWordsCompare(const PtoInstr& in, ascend::Int64Words& w);
  // The pair (Int64Words) of the f32 tile t's values converted to INT64,
  // into words scratch `at`, at + 1.
  absl::StatusOr<ascend::Int64Words::Pair> WordsFromF32(ascend::Int64Words& w, int t, int at);
  // Scalar j of `in` as an INT64 value's low and high words (C++ int32
  // expressions); UNIMPLEMENTED for an immediate that is not an int64.
  absl::StatusOr<std::pair<std::string, std::string>> Int64ScalarWords(const PtoInstr& in,
                                                                       size_t j) const;
  // BF16 (ascend_bf16.h).
  static Pipe FromBf16(ascend::Bf16Pipe p) {
    return p == ascend::Bf16Pipe::kMte2 ? Pipe::kMte2
           : p == ascend::Bf16Pipe::kV  ? Pipe::kV
                                        : Pipe::kMte3;
  }
  void SyncTo(ascend::Bf16Pipe next) override { Sync(FromBf16(next)); }
  ascend::Bf16Pipe PipeNow() const override {
    return pipe_ == Pipe::kMte2 ? ascend::Bf16Pipe::kMte2
           : pipe_ == Pipe::kV  ? ascend::Bf16Pipe::kV
                                : ascend::Bf16Pipe::kMte3;
  }
  void SetPipeNow(ascend::Bf16Pipe p) override { pipe_ = FromBf16(p); }
  std::string Bf16Stage(ascend::Bf16Tile shape) override {
    switch (shape) {
      case ascend::Bf16Tile::kRow: need_bf16_row_ = true; return "bfrow";
      case ascend::Bf16Tile::kCol: need_bf16_col_ = true; return "bfcol";
      default: need_bf16_ = true; return "bftmp";
    }
  }
  std::string Int16Stage(ascend::Bf16Tile shape) override {
    switch (shape) {
      case ascend::Bf16Tile::kRow: need_i16_row_ = true; return "i16row";
      case ascend::Bf16Tile::kCol: need_i16_col_ = true; return "i16col";
      default: need_i16_ = true; return "i16tmp";
    }
  }
  std::string ScratchF32(ascend::Bf16Tile shape) override {
    return shape == ascend::Bf16Tile::kCol ? ColScratch() : RowScratch();
  }
  std::string WorkspaceF32() override { need_ws_ = true; return "wsf"; }
  std::string WorkspaceI32() override { need_ws_ = true; return "wsi"; }
  void Directive(const std::string& line) override { absl::StrAppend(&body_, line, "\n"); }
  void UseBf16RoundFunction() override { need_bf16_round_ = true; }
  // A BF16 result in tile t rounded (a row tile through a full one).
  absl::Status RoundToBf16(const PtoInstr& in);
  std::string HalfTmp() { need_half_ = true; return "htmp"; }
  std::string HalfRowTmp() { need_half_row_ = true; return "hrow"; }
  std::string HalfColTmp() { need_half_col_ = true; return "hcol"; }
  // The half scratch tile of tile t's shape.
  std::string HalfFor(int t) {
    return kind_[t] == Kind::kRow   ? HalfRowTmp()
           : kind_[t] == Kind::kCol ? HalfColTmp()
                                    : HalfTmp();
  }
  void RoundToHalf(int t) {
    const std::string h = HalfFor(t);
    Line(absl::StrCat("TCVT(", h, ", ", T(t), ", RoundMode::CAST_RINT);"));
    Line(absl::StrCat("TCVT(", T(t), ", ", h, ", RoundMode::CAST_NONE);"));
  }

  const PtoProgram& p_;
  PtoFunction fn_;  // a copy: SplitMixedIntTiles renames tiles
  int index_;
  int rank_ = 0;
  int64_t rows_ = 1, cols_ = 1;
  std::vector<Kind> kind_;
  std::string body_;
  bool started_ = false;
  Pipe pipe_ = Pipe::kV;
  std::vector<bool> need_tmp_;
  bool need_int_ = false;
  bool need_half_ = false, need_half_row_ = false, need_half_col_ = false, need_row_nd_ = false;
  bool need_mask_ = false, need_one_zero_ = false, need_byte_ = false, need_index_ = false;
  bool need_row_tmp_ = false, need_col_tmp_ = false;
  std::set<std::string> flat_views_;
  // Each extremum's lines: exact, plain (EmitExtremum).
  std::vector<std::pair<std::string, std::string>> extrema_;
  std::vector<bool> need_xtmp_;
  std::set<int> buffers_;
  std::vector<Elem> elem_;
  std::vector<bool> need_itmp_, need_rtmp_, need_ctmp_;
  std::set<std::string> int_flat_views_;
  // GM staging tiles: int64 (full, row), int8, int16 (uint8 is btmp).
  bool need_long_ = false, need_long_row_ = false, need_i8_ = false, need_i16_ = false;
  bool need_int_row_ = false, need_int_col_ = false, need_long_col_ = false;
  bool need_long_nd_ = false;
  bool need_flat_max_ = false;  // MSCATTER's last selected element
  bool need_bf16_ = false, need_bf16_row_ = false, need_i16_row_ = false, need_ws_ = false;
  bool need_bf16_col_ = false, need_i16_col_ = false;
  bool need_bf16_round_ = false;  // BF16's staging tile and workspace
  // Words scratch tiles (kind, number; 0: the f32 one) and flat views (kind).
  std::set<std::pair<int, int>> words_scratch_;
  std::set<int> words_flat_;
  bool need_sim_ws_ = false;      // the workspace in every CPU-simulation build
  std::map<std::string, std::string> bits_views_;  // view -> the f32 tile it aliases
};

}  // namespace pto::compiler::ascend

#endif  // PTO_COMPILER_TARGETS_ASCEND_ASCEND_FUNCTION_EMITTER_H_
