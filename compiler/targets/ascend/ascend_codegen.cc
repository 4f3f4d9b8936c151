#include "compiler/targets/ascend/ascend_codegen.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/dtype.h"
#include "compiler/targets/ascend/ascend_bf16.h"
#include "compiler/targets/ascend/ascend_cube_codegen.h"
#include "compiler/targets/ascend/ascend_int64.h"
#include "compiler/targets/ascend/ascend_int_math.h"
#include "compiler/targets/ascend/ascend_math.h"
#include "compiler/targets/ascend/ascend_scan.h"
#include "compiler/targets/ascend/ascend_sort_codegen.h"
#include "compiler/targets/ascend/ascend_unmapped.h"
#include "compiler/targets/host/host_function_plan.h"
#include "compiler/targets/memory_model.h"
#include "runtime/kernel_abi.h"

namespace pto::compiler {

namespace ascend {

const char* GmElem(pto::v1::DataType dtype) {
  switch (dtype) {
    case pto::v1::DT_FP16: return "half";
    case pto::v1::DT_BF16: return "bfloat16_t";
    case pto::v1::DT_BOOL: return "uint8_t";
    case pto::v1::DT_UINT8: return "uint8_t";
    case pto::v1::DT_INT8: return "int8_t";
    case pto::v1::DT_INT16: return "int16_t";
    case pto::v1::DT_INT32: return "int32_t";
    case pto::v1::DT_INT64: return "int64_t";
    default: return "float";
  }
}

}  // namespace ascend

namespace {

using host_plan::Access;
using host_plan::MakeAccess;
using host_plan::Viewed;
using ascend::FloatLiteral;
using ascend::GmElem;

constexpr int64_t kUbAlign = 32;  // bytes: a Tile's rows (or columns) and base

int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// Where an instruction runs: the pipes set_flag/wait_flag order.
enum class Pipe { kMte2, kV, kMte3 };

const char* PipeName(Pipe p) {
  switch (p) {
    case Pipe::kMte2: return "PIPE_MTE2";
    case Pipe::kV: return "PIPE_V";
    case Pipe::kMte3: return "PIPE_MTE3";
  }
  return "PIPE_V";
}

// The shape of a UB tile in the flattened [rows, cols] view.
enum class Kind { kFull, kRow, kCol };

bool Reduces(PtoOpcode op) {
  return op == PtoOpcode::kTRedSum || op == PtoOpcode::kTRedMax ||
         op == PtoOpcode::kTRedMin || op == PtoOpcode::kTRedProd ||
         op == PtoOpcode::kTArgFirst || op == PtoOpcode::kTArgSel || op == PtoOpcode::kTRedLast;
}

bool Compares(PtoOpcode op) {
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
bool IntGm(pto::v1::DataType t) {
  return t == pto::v1::DT_INT32 || t == pto::v1::DT_INT64 || t == pto::v1::DT_INT8 ||
         t == pto::v1::DT_INT16 || t == pto::v1::DT_UINT8;
}

// The narrow integer types, held exactly in f32 tiles.
bool NarrowInt(pto::v1::DataType t) {
  return t == pto::v1::DT_INT8 || t == pto::v1::DT_INT16 || t == pto::v1::DT_UINT8;
}

// A tile's values are stored as f32 (BOOL as 0.0/1.0, exactly; DOUBLE: the
// scans' accumulator, rounded to f32, in workspaces only: PlanTiles).
bool StoredAsF32(pto::v1::DataType t) {
  return t == pto::v1::DT_FP32 || t == pto::v1::DT_BOOL || t == pto::v1::DT_DOUBLE;
}

// One block function being emitted.
class FunctionEmitter : public ascend::Bf16Code, public ascend::Int64Code {
 public:
  // `exact_extrema`: maxima and minima keep a NaN from any position and the
  // host's zero (two full scratch tiles; see EmitCompute).
  FunctionEmitter(const PtoProgram& p, int index, bool exact_extrema)
      : p_(p), fn_(p.functions[index]), index_(index), exact_extrema_(exact_extrema) {}

  absl::StatusOr<std::string> Emit();
  // Whether Emit's function took the exact extrema's scratch and did not fit
  // the UB with it.
  bool ExtremaOverflowedUb() const { return used_extrema_scratch_ && over_ub_; }

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
  // Integers (ascend_codegen.cc, "Integer tiles"): the element kinds of the
  // program's INT64-storage tiles, TLOAD/TSTORE of integer buffers, the
  // instructions on int32 tiles and casts to and from them, and argmax/
  // argmin's TARGFIRST/TARGSEL.
  absl::Status PlanIntTiles();
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
  // TCUMSUM, TCUMPROD and TREDLAST along the last dim (ascend_scan.h).
  absl::Status EmitScan(const PtoInstr& in);
  ascend::ScanIndex ScanIndexTiles();
  // A full int32 tile at the UB address of the full f32 tile `full` (its
  // bits on the device); declared after the UB plan.
  std::string BitsView(const std::string& full) {
    const std::string v = absl::StrCat(full, "_bits");
    bits_views_.emplace(v, full);
    return v;
  }
  // The index instructions (ascend_codegen.cc, "Index instructions"):
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
  // The half scratch tile of tile t's shape.
  std::string HalfFor(int t) { return kind_[t] == Kind::kRow ? HalfRowTmp() : HalfTmp(); }
  void RoundToHalf(int t) {
    const std::string h = HalfFor(t);
    Line(absl::StrCat("TCVT(", h, ", ", T(t), ", RoundMode::CAST_RINT);"));
    Line(absl::StrCat("TCVT(", T(t), ", ", h, ", RoundMode::CAST_NONE);"));
  }

  const PtoProgram& p_;
  const PtoFunction& fn_;
  int index_;
  int rank_ = 0;
  int64_t rows_ = 1, cols_ = 1;
  std::vector<Kind> kind_;
  std::string body_;
  bool started_ = false;
  Pipe pipe_ = Pipe::kV;
  std::vector<bool> need_tmp_;
  bool need_int_ = false;
  bool need_half_ = false, need_half_row_ = false, need_row_nd_ = false;
  bool need_mask_ = false, need_one_zero_ = false, need_byte_ = false, need_index_ = false;
  bool need_row_tmp_ = false, need_col_tmp_ = false;
  std::set<std::string> flat_views_;
  const bool exact_extrema_;
  bool used_extrema_scratch_ = false, over_ub_ = false;
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

// TRESHAPE (bitcast) between two element types: PTO-ISA's TRESHAPE keeps
// float as float and integer as integer (the CPU simulation static_asserts
// it), so f32 bits read as INT32 (or back) have no instruction; between two
// float (or two integer) types, the f32 tiles hold the values widened (FP16
// as f32), not their bits. A bitcast to its own type is TRESHAPE
// (EmitCompute).
absl::Status FunctionEmitter::CheckBitcast() const {
  for (size_t i = 0; i < fn_.body.size(); ++i) {
    const PtoInstr& in = fn_.body[i];
    switch (in.op) {
      case PtoOpcode::kTReshape: {
        const pto::v1::DataType from = host_plan::ValueType(
            fn_, static_cast<int>(i), in.srcs.empty() ? -1 : in.srcs[0], in.dtype);
        auto is_float = [](pto::v1::DataType t) {
          return IsFloatComputeDType(t) || IsFp8DType(t) || t == pto::v1::DT_DOUBLE;
        };
        if (from != in.dtype) {
          return Unsupported(
              in.op, absl::StrCat("(bitcast) of ", pto::v1::DataType_Name(from), " to ",
                                  pto::v1::DataType_Name(in.dtype), ": ",
                                  is_float(from) != is_float(in.dtype)
                                      ? "PTO-ISA's TRESHAPE reads float bits only as float "
                                        "and integer bits only as integer"
                                      : "the target's f32 tiles hold these values widened, "
                                        "not their bits"));
        }
        break;
      }
      default:
        break;
    }
  }
  return absl::OkStatus();
}

absl::Status FunctionEmitter::PlanTiles() {
  for (const PtoInstr& in : fn_.body) {  // (TPHILOX named before its INT64 tile is)
    if (const char* why = AscendUnmappedReason(in.op)) return Unsupported(in.op, why);
  }
  rank_ = static_cast<int>(fn_.tile.size());
  // A rank-0 tile (one value: an op on a full reduction's result) is a 1x1 one.
  if (rank_ > 0) cols_ = fn_.tile.back();
  for (int d = 0; d + 1 < rank_; ++d) rows_ *= fn_.tile[d];
  // An integer scan's running value is INT64 (torch's), in every function
  // of the program (the one filling its carry comes first).
  for (const PtoFunction& f : p_.functions) {
    for (const PtoInstr& in : f.body) {
      if (PtoIsScan(in.op) && in.dtype == pto::v1::DT_INT64) {
        return Unsupported(in.op, "of DT_INT64 running values (an integer scan's, as torch's: "
                                  "the vector unit has no 64-bit arithmetic)");
      }
    }
  }
  for (const PtoInstr& in : fn_.body) {  // (before their carries' loads are refused)
    if (PtoIsScan(in.op) || in.op == PtoOpcode::kTRedLast) {
      if (in.reduce_dim != rank_ - 1) {
        return Unsupported(in.op, absl::StrCat("along dim ", in.reduce_dim, " of a rank-", rank_,
                                               " tile (the target scans along the last dim)"));
      }
    }
  }
  // DOUBLE tiles hold f32 only as a scan's running value: in a scan
  // function, or one filling the scan's workspace (TFILL, TSTORE).
  bool scan_values = true;
  for (const PtoInstr& in : fn_.body) {
    scan_values = scan_values && (in.op == PtoOpcode::kTFill || in.op == PtoOpcode::kTStore);
  }
  for (const PtoInstr& in : fn_.body) scan_values = scan_values || PtoIsScan(in.op);
  kind_.assign(fn_.num_tiles, Kind::kFull);
  for (int t = 0; t < fn_.num_tiles; ++t) {
    if (t < static_cast<int>(fn_.ub_rows.size()) && fn_.ub_rows[t]) kind_[t] = Kind::kRow;
    if (t < static_cast<int>(fn_.ub_types.size()) && fn_.ub_types[t] != pto::v1::DT_INT64 &&
        (!StoredAsF32(fn_.ub_types[t]) || (fn_.ub_types[t] == pto::v1::DT_DOUBLE && !scan_values))) {
      // Named by the first instruction that writes the tile.
      PtoOpcode writer = PtoOpcode::kTLoad;
      for (const PtoInstr& in : fn_.body) {
        if (in.dst == t) {
          writer = in.op;
          break;
        }
      }
      return Unsupported(writer, absl::StrCat("into tile %t", t, " of ",
                                              pto::v1::DataType_Name(fn_.ub_types[t]),
                                              " values (the target computes in f32 tiles only)"));
    }
  }
  for (const PtoInstr& in : fn_.body) {
    if (!Reduces(in.op) || in.dst < 0) continue;
    if (in.reduce_dim == rank_ - 1) {
      kind_[in.dst] = Kind::kRow;
    } else if (rank_ == 2 && in.reduce_dim == 0) {
      kind_[in.dst] = Kind::kCol;
    } else {
      return Unsupported(in.op, absl::StrCat("over dim ", in.reduce_dim, " of a rank-",
                                             rank_, " tile"));
    }
  }
  // An accumulator of a reduction over the last dim (a symbolic or
  // loop-dependent one): a tile read from one slot per row (TLOAD with
  // dim), and a value computed from such rows only that is stored to one
  // slot per row, is a row tile too.
  for (const PtoInstr& in : fn_.body) {
    if (in.op == PtoOpcode::kTLoad && in.reduce_dim == rank_ - 1) kind_[in.dst] = Kind::kRow;
  }
  std::set<int> stored_rows;
  for (const PtoInstr& in : fn_.body) {
    if (in.op == PtoOpcode::kTStore && in.reduce_dim == rank_ - 1) stored_rows.insert(in.srcs[0]);
  }
  for (const PtoInstr& in : fn_.body) {
    if (in.op == PtoOpcode::kTLoad || in.op == PtoOpcode::kTStore || in.dst < 0 ||
        !stored_rows.count(in.dst) || in.srcs.empty()) {
      continue;
    }
    bool rows_only = true;
    for (int s : in.srcs) rows_only = rows_only && kind_[s] == Kind::kRow;
    if (rows_only) kind_[in.dst] = Kind::kRow;
  }
  if (absl::Status s = PlanIntTiles(); !s.ok()) return s;
  // One column: a row tile has the full tiles' shape, and is one of them
  // (RowMajor [rows, 1], which TROW* also write).
  if (cols_ == 1) {
    for (Kind& k : kind_) {
      if (k == Kind::kRow) k = Kind::kFull;
    }
  }
  // A column tile holds only reductions' results and is read by stores.
  for (const PtoInstr& in : fn_.body) {
    // (argmax/argmin's steps read the extremum's column tile.)
    if (in.op == PtoOpcode::kTStore || in.op == PtoOpcode::kTArgFirst ||
        in.op == PtoOpcode::kTArgSel) {
      continue;
    }
    for (int s : in.srcs) {
      if (s >= 0 && kind_[s] == Kind::kCol) {
        return Unsupported(in.op, "reading a column reduction's result");
      }
    }
    if (in.dst >= 0 && kind_[in.dst] == Kind::kCol && !Reduces(in.op)) {
      return Unsupported(in.op, "writing a column reduction's tile");
    }
  }
  return absl::OkStatus();
}

std::string FunctionEmitter::Scalar(const PtoInstr& in, size_t j) const {
  const int dynamic = j < in.scalar_dynamic.size() ? in.scalar_dynamic[j] : -1;
  if (dynamic < 0) return FloatLiteral(in.scalars[j]);
  const std::string v = absl::StrCat("static_cast<float>(args[", rank_ + dynamic, "])");
  // Meeting FP16 values, a run-time scalar is first rounded to FP16 (nearest
  // even), as the host does and as an immediate already is.
  if (in.dtype == pto::v1::DT_FP16) return absl::StrCat("static_cast<float>(static_cast<half>(", v, "))");
  if (in.dtype == pto::v1::DT_BF16) return absl::StrCat("PtoBf16Round(", v, ")");
  return v;
}

void FunctionEmitter::Sync(Pipe next) {
  if (started_ && next != pipe_) {
    const std::string pair = absl::StrCat(PipeName(pipe_), ", ", PipeName(next), ", EVENT_ID0");
    Line(absl::StrCat("set_flag(", pair, ");"));
    Line(absl::StrCat("wait_flag(", pair, ");"));
  }
  started_ = true;
  pipe_ = next;
}

// A TLOAD or TSTORE: its GlobalTensor over the access's 5-D view.
absl::Status FunctionEmitter::EmitGm(const PtoInstr& in, int i, Kind kind) {
  if (in.buffer < 0 || in.buffer >= static_cast<int>(p_.buffers.size())) {
    return absl::InternalError("PTO instruction names a missing buffer");
  }
  const PtoBuffer& buf = p_.buffers[in.buffer];
  const bool bf16 = buf.dtype == pto::v1::DT_BF16;
  // (A DOUBLE workspace holds f32 values in its first half: StoredAsF32.)
  const bool f32 = buf.dtype == pto::v1::DT_FP32 || (buf.dtype == pto::v1::DT_DOUBLE && buf.param < 0);
  if (!f32 && buf.dtype != pto::v1::DT_FP16 && !bf16 &&
      buf.dtype != pto::v1::DT_BOOL && !IntGm(buf.dtype)) {
    return Unsupported(in.op, absl::StrCat("of a ", pto::v1::DataType_Name(buf.dtype),
                                           " buffer (the target moves FP32, FP16, BF16, BOOL "
                                           "and INT8/INT16/INT32/INT64/UINT8)"));
  }
  if (bf16 && kind == Kind::kRow && in.op == PtoOpcode::kTLoad) {
    return Unsupported(in.op, "of BF16 values into a row tile");
  }
  if (buf.dtype == pto::v1::DT_BOOL && kind != Kind::kFull) {
    return Unsupported(in.op, "of a BOOL row or column tile");
  }
  const bool store = in.op == PtoOpcode::kTStore;
  const int tile = store ? in.srcs[0] : in.dst;
  if (!store && kind == Kind::kCol) return Unsupported(in.op, "into a column tile");
  if (!store && kind == Kind::kRow && !f32 &&
      buf.dtype != pto::v1::DT_INT32 && buf.dtype != pto::v1::DT_INT64) {
    return Unsupported(in.op, "of FP16 values into a row tile");
  }
  if (buf.dtype == pto::v1::DT_FP16 && kind == Kind::kCol) {
    return Unsupported(in.op, "of an FP16 column tile");
  }
  if (kind == Kind::kFull && in.reduce_dim >= 0 && in.reduce_dim < rank_ &&
      fn_.tile[in.reduce_dim] != 1) {
    return Unsupported(in.op, absl::StrCat("of one slot along dim ", in.reduce_dim,
                                           " of a full tile (an accumulator)"));
  }
  // A row tile reads a [rows, 1] region (one slot per row).
  const Access a = MakeAccess(Viewed(buf, in), fn_.tile, in.index,
                              store ? in.reduce_dim : kind == Kind::kRow ? rank_ - 1 : -1,
                              in.stride_dynamic);
  std::vector<int64_t> extent = a.extent4;
  std::vector<std::string> stride = a.strides4_text;  // innermost: 1, 0 (broadcast) or a permutation's
  // INT64 values as their 32-bit words (ascend_int64.h): the INT64
  // elements, contiguous along the innermost dim, as twice as many int32
  // ones, every other stride doubled; rows are not merged (the words tile
  // is RowMajor).
  const bool words = elem_[tile] == Elem::kWords;
  if (words) {
    if (extent[3] != 1 && stride[3] != "1") {
      return Unsupported(in.op, "of INT64 sums or products strided along the last dim in GM");
    }
    extent[3] *= 2;
    stride[3] = "1";
    for (int d = 0; d < 3; ++d) {
      if (stride[d].empty()) continue;
      stride[d] = absl::ascii_isdigit(stride[d][0])
                      ? absl::StrCat(2 * std::stoll(stride[d]))
                      : absl::StrCat("(", stride[d], ") * 2");
    }
  }
  // A row tile whose rows lie unevenly in GM is stored from a RowMajor
  // [rows, 1] copy (TMOV), whose store takes the access's strides as they are.
  bool row_nd = false;
  if (kind == Kind::kRow && !words) {
    // A ColMajor [rows, 1] tile moves as one GM column: its leading dims
    // merge into one (each one's stride the inner block's stride times its
    // extent).
    int64_t merged = 1, inner = 0;
    for (int d = 2; d >= 0 && !row_nd; --d) {
      if (a.extent4[d] == 1) continue;
      if (absl::StrCat(a.strides4[d]) != a.strides4_text[d]) {
        return Unsupported(in.op, "of a row tile with a run-time stride");
      }
      if (merged == 1) {
        inner = a.strides4[d];
      } else if (a.strides4[d] != inner * merged) {
        row_nd = true;
      }
      merged *= a.extent4[d];
    }
    if (row_nd && !f32 && !IntGm(buf.dtype)) {
      return Unsupported(in.op, absl::StrCat("of an ", pto::v1::DataType_Name(buf.dtype),
                                             " row tile whose rows are not evenly spaced in GM"));
    }
    if (row_nd && fn_.runtime_extents) {
      return Unsupported(in.op, "of a row tile whose rows are not evenly spaced in GM, with "
                                "run-time extents");
    }
    if (!row_nd) {
      extent = {1, 1, merged, 1};
      stride = {"1", "1", absl::StrCat(inner), "1"};
    }
  }
  // Dims of extent 1 take stride 1 (any value would do).
  for (int d = 0; d < 4; ++d) {
    if (extent[d] == 1) stride[d] = "1";
  }
  // The extents: with run-time tile extents, a dim that is the tile's takes
  // the task's extent (args after the offsets and dynamic args), as the
  // host's TLoadN/TStoreN do; a row tile's merged rows the valid rows.
  std::vector<std::string> shape_tmpl = {"1"};
  std::vector<std::string> shape_args;
  for (int k = 0; k < 4; ++k) {
    const int d = k - (4 - rank_);
    std::string e = absl::StrCat(extent[k]);
    if (fn_.runtime_extents && extent[k] != 1 && words) {
      // (a row tile's words: two per row)
      if (d >= 0 && (k < 3 || kind != Kind::kRow)) {
        e = absl::StrCat("args[", fn_.num_args - rank_ + d, "]", k == 3 ? " * 2" : "");
      }
    } else if (fn_.runtime_extents && extent[k] != 1) {
      if (kind == Kind::kRow && !row_nd) {
        e = ValidRows();
      } else if (d >= 0) {
        e = absl::StrCat("args[", fn_.num_args - rank_ + d, "]");
      }
    }
    const bool numeric = absl::ascii_isdigit(e[0]);
    shape_tmpl.push_back(numeric ? e : "DYNAMIC");
    if (!numeric) shape_args.push_back(e);
  }
  std::vector<std::string> stride_tmpl = {"1"};
  std::vector<std::string> stride_args;
  for (int d = 0; d < 4; ++d) {
    const bool numeric = !stride[d].empty() && absl::ascii_isdigit(stride[d][0]);
    stride_tmpl.push_back(numeric ? stride[d] : "DYNAMIC");
    if (!numeric) stride_args.push_back(stride[d]);
  }
  buffers_.insert(in.buffer);
  const std::string g = absl::StrCat("g", i);
  const std::string elem = GmElem(buf.dtype);
  const std::string shape = absl::StrCat("Shape<", absl::StrJoin(shape_tmpl, ", "), ">");
  const std::string strides = absl::StrCat("Stride<", absl::StrJoin(stride_tmpl, ", "), ">");
  auto declare = [&](const std::string& type, const std::string& name, const std::string& el,
                     const std::string& ptr) {
    Line(absl::StrCat("using ", type, " = GlobalTensor<", el, ", ", shape, ", ", strides,
                      ", Layout::ND>;"));
    if (stride_args.empty() && shape_args.empty()) {
      Line(absl::StrCat(type, " ", name, "(", ptr, ");"));
    } else {
      Line(absl::StrCat(type, " ", name, "(", ptr, ", ",
                        shape_args.empty() ? "{}" : absl::StrCat(shape, "(", absl::StrJoin(shape_args, ", "), ")"),
                        ", ",
                        stride_args.empty() ? "{}" : absl::StrCat(strides, "(", absl::StrJoin(stride_args, ", "), ")"),
                        ");"));
    }
  };
  if (words) {
    declare(absl::StrCat("G", i), g, "int32_t",
            absl::StrCat("reinterpret_cast<__gm__ int32_t*>(b", in.buffer, ") + 2 * (", a.offset,
                         ")"));
    if (store) {
      Sync(Pipe::kV);
      Sync(Pipe::kMte3);
      Line(absl::StrCat("TSTORE(", g, ", ", T(tile), ");"));
    } else {
      Sync(Pipe::kMte2);
      Line(absl::StrCat("TLOAD(", T(tile), ", ", g, ");"));
    }
    return absl::OkStatus();
  }
  declare(absl::StrCat("G", i), g, elem, absl::StrCat("b", in.buffer, " + (", a.offset, ")"));
  if (bf16) {  // the same elements as 16-bit words (ascend_bf16.h)
    const std::string words = absl::StrCat("w", i);
    Directive("#if !PTO_BF16_NATIVE");
    declare(absl::StrCat("W", i), words, "int16_t",
            absl::StrCat("reinterpret_cast<__gm__ int16_t*>(b", in.buffer, ") + (", a.offset, ")"));
    Directive("#endif");
    if (store) {
      ascend::EmitBf16Store(*this, T(tile),
                            kind == Kind::kRow   ? ascend::Bf16Tile::kRow
                            : kind == Kind::kCol ? ascend::Bf16Tile::kCol
                                                 : ascend::Bf16Tile::kFull,
                            g, words);
    } else {
      ascend::EmitBf16Load(*this, T(tile), g, words);
    }
    return absl::OkStatus();
  }
  if (IntGm(buf.dtype)) return EmitIntMove(in, g, tile, kind, row_nd);
  const bool half = buf.dtype == pto::v1::DT_FP16;
  if (buf.dtype == pto::v1::DT_BOOL) {
    // Bytes 0/1 through a uint8 tile; a stored value is nonzero -> 1.
    if (store) {
      Sync(Pipe::kV);
      Line(absl::StrCat("TCVT(", ByteTmp(), ", ", T(tile), ", RoundMode::CAST_RINT);"));
      Sync(Pipe::kMte3);
      Line(absl::StrCat("TSTORE(", g, ", ", ByteTmp(), ");"));
    } else {
      Sync(Pipe::kMte2);
      Line(absl::StrCat("TLOAD(", ByteTmp(), ", ", g, ");"));
      Sync(Pipe::kV);
      Line(absl::StrCat("TCVT(", T(tile), ", ", ByteTmp(), ", RoundMode::CAST_NONE);"));
    }
    return absl::OkStatus();
  }
  if (row_nd) {
    need_row_nd_ = true;
    Sync(Pipe::kV);
    Line(absl::StrCat("TMOV(rnd, ", T(tile), ");"));
    Sync(Pipe::kMte3);
    Line(absl::StrCat("TSTORE(", g, ", rnd);"));
  } else if (store) {
    Sync(Pipe::kV);
    if (half) Line(absl::StrCat("TCVT(", HalfFor(tile), ", ", T(tile), ", RoundMode::CAST_RINT);"));
    Sync(Pipe::kMte3);
    Line(absl::StrCat("TSTORE(", g, ", ", half ? HalfFor(tile) : T(tile), ");"));
  } else {
    Sync(Pipe::kMte2);
    Line(absl::StrCat("TLOAD(", half ? HalfFor(tile) : T(tile), ", ", g, ");"));
    if (half) {
      Sync(Pipe::kV);
      Line(absl::StrCat("TCVT(", T(tile), ", ", HalfFor(tile), ", RoundMode::CAST_NONE);"));
    }
  }
  return absl::OkStatus();
}

void FunctionEmitter::SelectOneZero(const std::string& dst, bool invert) {
  if (!need_one_zero_) {  // straight-line code: the first use fills them for all
    need_one_zero_ = true;
    Line("TEXPANDS(fone, 1.0f);");
    Line("TEXPANDS(fzero, 0.0f);");
  }
  Line(absl::StrCat("TSEL(", dst, ", ", Mask(), ", ", invert ? "fzero, fone" : "fone, fzero", ");"));
}

// The comparison of a flat view `fx` with the scalar `c` into the full tile
// d as 1.0/0.0. LT/LE/GT/GE are one TCMPS each; EQ is LE and GE (TCMPS's EQ
// in the CPU simulation is |x - c| < 1e-9, not equality) and NE its
// negation, so NaN compares unequal.
absl::Status FunctionEmitter::EmitCompareFlat(const std::string& fx, const std::string& c,
                                              PtoOpcode base, const std::string& d) {
  const char* mode = base == PtoOpcode::kTCmpLt   ? "LT"
                     : base == PtoOpcode::kTCmpLe ? "LE"
                     : base == PtoOpcode::kTCmpGt ? "GT"
                     : base == PtoOpcode::kTCmpGe ? "GE"
                                                  : nullptr;
  if (mode != nullptr) {
    Line(absl::StrCat("TCMPS(", Mask(), ", ", fx, ", ", c, ", CmpMode::", mode, ");"));
    const std::string fd = Flat(d);
    SelectOneZero(fd, false);
    Line(absl::StrCat("TRESHAPE(", d, ", ", fd, ");"));
    return absl::OkStatus();
  }
  const bool ne = base == PtoOpcode::kTCmpNe;
  // g = (x >= c) (NE: its negation); d = (x <= c) ? g : (NE ? 1 : 0).
  const std::string g = Flat(Scratch(6));
  Line(absl::StrCat("TCMPS(", Mask(), ", ", fx, ", ", c, ", CmpMode::GE);"));
  SelectOneZero(g, ne);
  Line(absl::StrCat("TCMPS(", Mask(), ", ", fx, ", ", c, ", CmpMode::LE);"));
  const std::string fd = Flat(d);
  Line(absl::StrCat("TSEL(", fd, ", ", Mask(), ", ", g, ", ", ne ? "fone" : "fzero", ");"));
  Line(absl::StrCat("TRESHAPE(", d, ", ", fd, ");"));
  return absl::OkStatus();
}

absl::Status FunctionEmitter::EmitCompare(const PtoInstr& in) {
  if (kind_[in.dst] != Kind::kFull) return Unsupported(in.op, "into a row tile");
  const std::string d = T(in.dst);
  PtoOpcode base = in.op;
  switch (in.op) {
    case PtoOpcode::kTCmpEqS: base = PtoOpcode::kTCmpEq; break;
    case PtoOpcode::kTCmpNeS: base = PtoOpcode::kTCmpNe; break;
    case PtoOpcode::kTCmpLtS: base = PtoOpcode::kTCmpLt; break;
    case PtoOpcode::kTCmpLeS: base = PtoOpcode::kTCmpLe; break;
    case PtoOpcode::kTCmpGtS: base = PtoOpcode::kTCmpGt; break;
    case PtoOpcode::kTCmpGeS: base = PtoOpcode::kTCmpGe; break;
    default: break;
  }
  const std::string a = FullOperand(in.srcs[0], 1);
  if (in.srcs.size() == 1) return EmitCompareFlat(Flat(a), Scalar(in, 0), base, d);
  // Two tiles (the CPU simulation has no TCMP): s = sign(a - b), exactly
  // -1, 0 or 1, NaN where either is NaN; a - b is NaN for equal infinities
  // too, where sign(clamp(a) - clamp(b)) (clamped to +-FLT_MAX) is 0. Then
  // s compares with 0 as a scalar comparison.
  const std::string b = FullOperand(in.srcs[1], 2);
  const std::string s = Scratch(3), c = Scratch(4), c2 = Scratch(5);
  const std::string big = FloatLiteral(3.4028234663852886e38);
  const std::string nbig = FloatLiteral(-3.4028234663852886e38);
  Line(absl::StrCat("TSUB(", s, ", ", a, ", ", b, ");"));
  ascend::EmitSign(*this, s, s);
  Line(absl::StrCat("TMAXS(", c, ", ", a, ", ", nbig, ");"));
  Line(absl::StrCat("TMINS(", c, ", ", c, ", ", big, ");"));
  Line(absl::StrCat("TMAXS(", c2, ", ", b, ", ", nbig, ");"));
  Line(absl::StrCat("TMINS(", c2, ", ", c2, ", ", big, ");"));
  Line(absl::StrCat("TSUB(", c, ", ", c, ", ", c2, ");"));
  ascend::EmitSign(*this, c, c);
  const std::string fs = Flat(s), fc = Flat(c);
  Line(absl::StrCat("TCMPS(", Mask(), ", ", fs, ", -2.0f, CmpMode::GT);"));  // s is not NaN
  Line(absl::StrCat("TSEL(", fs, ", ", Mask(), ", ", fs, ", ", fc, ");"));
  return EmitCompareFlat(fs, "0.0f", base, d);
}

absl::Status FunctionEmitter::EmitSelect(const PtoInstr& in) {
  if (kind_[in.dst] != Kind::kFull) return Unsupported(in.op, "into a row tile");
  const std::string c = FullOperand(in.srcs[0], 1);
  const std::string a = FullOperand(in.srcs[1], 2);
  const std::string b = FullOperand(in.srcs[2], 3);
  const std::string d = T(in.dst);
  Line(absl::StrCat("TCMPS(", Mask(), ", ", Flat(c), ", 0.0f, CmpMode::GT);"));  // c: 0.0/1.0
  const std::string fa = Flat(a), fb = Flat(b), fd = Flat(d);
  Line(absl::StrCat("TSEL(", fd, ", ", Mask(), ", ", fa, ", ", fb, ");"));
  Line(absl::StrCat("TRESHAPE(", d, ", ", fd, ");"));
  return absl::OkStatus();
}

// Integer tiles. A tile the program stores as INT64 (UbStorageType) holds
// INT32 values in an int32 tile; INT64 values are moved between buffers in
// an int64 tile and not computed on (the vector unit has no 64-bit
// arithmetic), except an arg reduction's positions, which are computed in
// int32 tiles and widened to INT64 in GM (TCVT through an int64 tile).
absl::Status FunctionEmitter::PlanIntTiles() {
  elem_.assign(fn_.num_tiles, Elem::kF32);
  bool arg = false;
  for (const PtoInstr& in : fn_.body) {
    arg = arg || in.op == PtoOpcode::kTArgFirst || in.op == PtoOpcode::kTArgSel;
  }
  // A maximum or minimum of INT32 values across tiles keeps its partial
  // results in an INT64 workspace: int32 values all the same. Such a partial
  // (TREDMAX/TREDMIN of a tile loaded from an INT32 buffer), and a load of an
  // INT64 workspace read only by TREDMAX/TREDMIN into INT32, hold int32 values.
  auto loaded_from = [&](int tile, auto pred) {
    for (const PtoInstr& in : fn_.body) {
      if (in.dst == tile) return in.op == PtoOpcode::kTLoad && pred(p_.buffers[in.buffer]);
    }
    return false;
  };
  auto extremum = [](const PtoInstr& in) {
    return in.op == PtoOpcode::kTRedMax || in.op == PtoOpcode::kTRedMin;
  };
  auto int32_valued = [&](const PtoInstr& in) {
    if (in.dtype == pto::v1::DT_INT32) return true;
    if (extremum(in)) {
      return loaded_from(in.srcs[0], [](const PtoBuffer& b) { return b.dtype == pto::v1::DT_INT32; });
    }
    if (in.op != PtoOpcode::kTLoad || p_.buffers[in.buffer].param >= 0) return false;
    bool read = false;
    for (const PtoInstr& r : fn_.body) {
      if (std::find(r.srcs.begin(), r.srcs.end(), in.dst) == r.srcs.end()) continue;
      if (!extremum(r) || r.dtype != pto::v1::DT_INT32) return false;
      read = true;
    }
    return read;
  };
  // MGATHER's and MSCATTER's index tiles: INT64 indices loaded from GM are
  // narrowed to int32 (TCVT), each later checked against its dim's extent.
  std::set<int> index_tiles;
  for (const PtoInstr& in : fn_.body) {
    if (in.op == PtoOpcode::kMGather && !in.srcs.empty()) index_tiles.insert(in.srcs[0]);
    if (in.op == PtoOpcode::kMScatter && in.srcs.size() == 2) index_tiles.insert(in.srcs[1]);
  }
  // INT64 sums and products (ascend_int64.h): a TREDSUM/TREDPROD result
  // that is only stored or reduced again, and a load of INT64 values that
  // only such reductions read, are words tiles.
  auto int64_reduction = [](const PtoInstr& in) {
    return (in.op == PtoOpcode::kTRedSum || in.op == PtoOpcode::kTRedProd) &&
           in.dtype == pto::v1::DT_INT64;
  };
  for (int t = 0; t < fn_.num_tiles && t < static_cast<int>(fn_.ub_types.size()); ++t) {
    if (fn_.ub_types[t] != pto::v1::DT_INT64) continue;
    bool int32 = true, moved_only = true, loaded = true, words = true, reduced = false;
    const PtoInstr* user = nullptr;
    for (const PtoInstr& in : fn_.body) {
      const bool reads = std::find(in.srcs.begin(), in.srcs.end(), t) != in.srcs.end();
      if (in.dst == t) {
        reduced = reduced || int64_reduction(in);
        words = words && (int64_reduction(in) ||
                          (in.op == PtoOpcode::kTLoad &&
                           p_.buffers[in.buffer].dtype == pto::v1::DT_INT64));
      }
      if (reads) {
        reduced = reduced || int64_reduction(in);
        words = words && (int64_reduction(in) || in.op == PtoOpcode::kTStore);
      }
      if (in.dst == t) {
        int32 = int32 && int32_valued(in);
        loaded = loaded && (in.op == PtoOpcode::kTLoad || in.dtype == pto::v1::DT_INT32);
        if (in.op != PtoOpcode::kTLoad && in.op != PtoOpcode::kMGather) {
          moved_only = false;
          if (user == nullptr) user = &in;
        }
      }
      if (reads && in.op != PtoOpcode::kTStore) {
        moved_only = false;
        if (user == nullptr) user = &in;
      }
    }
    if (int32) {
      elem_[t] = Elem::kI32;
    } else if (words && reduced) {
      elem_[t] = Elem::kWords;
    } else if (arg || (index_tiles.count(t) && loaded)) {
      elem_[t] = Elem::kI32;
    } else if (moved_only) {
      elem_[t] = Elem::kI64;
    } else {
      return Unsupported(user->op, absl::StrCat("on tile %t", t, " of DT_INT64 values (the target "
                                                "moves INT64 tensors but computes on INT32 only)"));
    }
  }
  return absl::OkStatus();
}

bool FunctionEmitter::IsIntInstr(const PtoInstr& in) const {
  if (elem_[in.dst] != Elem::kF32) return true;
  for (int s : in.srcs) {
    if (elem_[s] != Elem::kF32) return true;
  }
  return (in.op == PtoOpcode::kTCvt || in.op == PtoOpcode::kTFill ||
          in.op == PtoOpcode::kTArange) &&
         IntGm(in.dtype);
}

// TLOAD/TSTORE of an integer buffer: INT32 (INT64) straight into an int32
// (int64) tile; an arg reduction's INT64 positions through the int64
// staging tile and TCVT; INT8, INT16 and UINT8 through a staging tile of
// their type and TCVT into an f32 tile (exact both ways: the tile holds
// integers of the type).
absl::Status FunctionEmitter::EmitIntMove(const PtoInstr& in, const std::string& g, int tile,
                                          Kind kind, bool row_nd) {
  const pto::v1::DataType dtype = p_.buffers[in.buffer].dtype;
  const bool store = in.op == PtoOpcode::kTStore;
  const Elem e = elem_[tile];
  const bool wide = dtype == pto::v1::DT_INT32 || dtype == pto::v1::DT_INT64;
  if (row_nd) {
    // Positions stored to INT64 rows that lie unevenly in GM: widened by
    // TCVT into a RowMajor [rows, 1] int64 tile, whose store takes the
    // access's strides as they are (as TMOV into `rnd` does for f32).
    if (!store || dtype != pto::v1::DT_INT64 || e != Elem::kI32) {
      return Unsupported(in.op, "of an integer row tile whose rows are not evenly spaced in GM");
    }
    need_long_nd_ = true;
    Sync(Pipe::kV);
    Line(absl::StrCat("TCVT(lrnd, ", T(tile), ", RoundMode::CAST_NONE);"));
    Sync(Pipe::kMte3);
    Line(absl::StrCat("TSTORE(", g, ", lrnd);"));
    return absl::OkStatus();
  }
  if (kind == Kind::kCol && (!store || e != Elem::kI32)) {
    return Unsupported(in.op, "of an integer column tile other than a stored int32 one");
  }
  if (wide && e == Elem::kF32) {
    return Unsupported(in.op, absl::StrCat("of a ", pto::v1::DataType_Name(dtype), " buffer from an f32 tile"));
  }
  if (!wide && e != Elem::kF32) {
    return Unsupported(in.op, absl::StrCat("of a ", pto::v1::DataType_Name(dtype), " buffer from an integer tile"));
  }
  std::string stage = T(tile);  // the tile TLOAD writes or TSTORE reads
  if (dtype == pto::v1::DT_INT64 && e == Elem::kI32) {
    if (kind == Kind::kRow) {
      need_long_row_ = true;
      stage = "lrow";
    } else if (kind == Kind::kCol) {
      need_long_col_ = true;
      stage = "lcol";
    } else {
      need_long_ = true;
      stage = "ltmp";
    }
  } else if (dtype == pto::v1::DT_INT32 && e == Elem::kI64) {
    return Unsupported(in.op, "of an INT32 buffer from an INT64 tile");
  } else if (!wide) {
    if (kind != Kind::kFull) {
      return Unsupported(in.op, absl::StrCat("of a ", pto::v1::DataType_Name(dtype), " row tile"));
    }
    if (dtype == pto::v1::DT_UINT8) {
      stage = ByteTmp();
    } else if (dtype == pto::v1::DT_INT8) {
      need_i8_ = true;
      stage = "i8tmp";
    } else {
      need_i16_ = true;
      stage = "i16tmp";
    }
  }
  if (store) {
    Sync(Pipe::kV);
    if (stage != T(tile)) {
      Line(absl::StrCat("TCVT(", stage, ", ", T(tile), ", RoundMode::",
                        wide ? "CAST_NONE" : "CAST_RINT", ");"));
    }
    Sync(Pipe::kMte3);
    Line(absl::StrCat("TSTORE(", g, ", ", stage, ");"));
  } else {
    Sync(Pipe::kMte2);
    Line(absl::StrCat("TLOAD(", stage, ", ", g, ");"));
    if (stage != T(tile)) {
      Sync(Pipe::kV);
      Line(absl::StrCat("TCVT(", T(tile), ", ", stage, ", RoundMode::CAST_NONE);"));
    }
  }
  return absl::OkStatus();
}

void FunctionEmitter::IntCompareFlat(const std::string& fx, const char* mode,
                                     const std::string& c, const std::string& d) {
  Line(absl::StrCat("TCMPS(", Mask(), ", ", fx, ", ", c, ", CmpMode::", mode, ");"));
  const std::string fd = Flat(d);
  SelectOneZero(fd, false);
  Line(absl::StrCat("TRESHAPE(", d, ", ", fd, ");"));
}

void FunctionEmitter::WrapNarrow(const std::string& x, pto::v1::DataType to) {
  if (to == pto::v1::DT_UINT8) {
    Line(absl::StrCat("TANDS(", x, ", ", x, ", 255);"));
    return;
  }
  // Sign-extend the low 8 (16) bits: shift them to the top and back
  // (arithmetic), the counts in a tile (the CPU simulation has no TSHLS).
  const std::string n = IntTmpK(4);
  Line(absl::StrCat("TEXPANDS(", n, ", ", to == pto::v1::DT_INT8 ? 24 : 16, ");"));
  Line(absl::StrCat("TSHL(", x, ", ", x, ", ", n, ");"));
  Line(absl::StrCat("TSHR(", x, ", ", x, ", ", n, ");"));
}

// Float -> integer truncates toward zero (TCVT CAST_TRUNC; NaN and values
// outside int32 give INT32_MIN on the CPU simulation, as the host's x86
// conversion; the device saturates), then wraps to INT8/INT16/UINT8;
// integer -> float rounds to nearest even, FP16 then again (as the host);
// integer -> BOOL is x != 0.
absl::Status FunctionEmitter::EmitIntCast(const PtoInstr& in) {
  const std::string d = T(in.dst), x = T(in.srcs[0]);
  const Elem from = elem_[in.srcs[0]], to = elem_[in.dst];
  if (from == Elem::kI64 || to == Elem::kI64) {
    return Unsupported(in.op, "of DT_INT64 values (the target computes on INT32 only)");
  }
  if (kind_[in.dst] != Kind::kFull || kind_[in.srcs[0]] != Kind::kFull) {
    return Unsupported(in.op, absl::StrCat("to ", pto::v1::DataType_Name(in.dtype),
                                           " of a row or column tile"));
  }
  if (to == Elem::kI32) {  // to INT32
    if (from == Elem::kI32) {
      Line(absl::StrCat("TADDS(", d, ", ", x, ", 0);"));
    } else {
      Line(absl::StrCat("TCVT(", d, ", ", x, ", RoundMode::CAST_TRUNC);"));
    }
    return absl::OkStatus();
  }
  if (in.dtype == pto::v1::DT_BOOL) {  // int32 -> BOOL: x != 0
    IntCompareFlat(FlatI(x), "NE", "0", d);
    return absl::OkStatus();
  }
  if (NarrowInt(in.dtype)) {  // to INT8/INT16/UINT8 in an f32 tile
    const std::string i = IntTmpK(3);
    if (from == Elem::kI32) {
      Line(absl::StrCat("TADDS(", i, ", ", x, ", 0);"));
    } else {
      Line(absl::StrCat("TCVT(", i, ", ", x, ", RoundMode::CAST_TRUNC);"));
    }
    WrapNarrow(i, in.dtype);
    Line(absl::StrCat("TCVT(", d, ", ", i, ", RoundMode::CAST_NONE);"));
    return absl::OkStatus();
  }
  if (in.dtype != pto::v1::DT_FP32 && in.dtype != pto::v1::DT_FP16 &&
      in.dtype != pto::v1::DT_BF16) {
    return Unsupported(in.op, absl::StrCat("to ", pto::v1::DataType_Name(in.dtype)));
  }
  Line(absl::StrCat("TCVT(", d, ", ", x, ", RoundMode::CAST_RINT);"));
  if (in.dtype == pto::v1::DT_FP16) RoundToHalf(in.dst);
  if (in.dtype == pto::v1::DT_BF16) return RoundToBf16(in);
  return absl::OkStatus();
}

// A comparison with an int32 operand, as 1.0/0.0 in an f32 tile. With a
// scalar s: against an integer threshold (x < s is x < ceil(s), x <= s is
// x <= floor(s), ...; a threshold past int32 gives all or nothing; a NaN
// scalar compares false, NE true). Two tiles (the CPU simulation has no
// TCMP): a == b is (a ^ b) == 0, a < b is (min(a, b) ^ b) != 0, a <= b is
// (min(a, b) ^ a) == 0; nothing overflows.
absl::Status FunctionEmitter::EmitIntCompare(const PtoInstr& in) {
  if (kind_[in.dst] != Kind::kFull) return Unsupported(in.op, "into a row tile");
  for (int s : in.srcs) {
    if (kind_[s] != Kind::kFull || elem_[s] != Elem::kI32) {
      return Unsupported(in.op, "mixing int32 tiles with f32 or row tiles");
    }
  }
  const std::string d = T(in.dst), a = T(in.srcs[0]);
  std::string mode;
  switch (in.op) {
    case PtoOpcode::kTCmpEq: case PtoOpcode::kTCmpEqS: mode = "EQ"; break;
    case PtoOpcode::kTCmpNe: case PtoOpcode::kTCmpNeS: mode = "NE"; break;
    case PtoOpcode::kTCmpLt: case PtoOpcode::kTCmpLtS: mode = "LT"; break;
    case PtoOpcode::kTCmpLe: case PtoOpcode::kTCmpLeS: mode = "LE"; break;
    case PtoOpcode::kTCmpGt: case PtoOpcode::kTCmpGtS: mode = "GT"; break;
    default: mode = "GE"; break;
  }
  if (in.srcs.size() == 2) {
    const std::string b = T(in.srcs[1]), m = IntTmpK(2), e = IntTmpK(3), t = IntTmpK(4);
    if (mode == "EQ" || mode == "NE") {
      Line(absl::StrCat("TXOR(", e, ", ", a, ", ", b, ", ", t, ");"));
    } else {
      Line(absl::StrCat("TMIN(", m, ", ", a, ", ", b, ");"));
      const bool against_b = mode == "LT" || mode == "GE";
      Line(absl::StrCat("TXOR(", e, ", ", m, ", ", against_b ? b : a, ", ", t, ");"));
      mode = mode == "LT" || mode == "GT" ? "NE" : "EQ";
    }
    IntCompareFlat(FlatI(e), mode.c_str(), "0", d);
    return absl::OkStatus();
  }
  const int dynamic = in.scalar_dynamic.empty() ? -1 : in.scalar_dynamic[0];
  if (dynamic >= 0) {  // an integer at run time
    IntCompareFlat(FlatI(a), mode.c_str(),
                   absl::StrCat("static_cast<int32_t>(args[", rank_ + dynamic, "])"), d);
    return absl::OkStatus();
  }
  const double s = in.scalars[0];
  const double lo = -2147483648.0, hi = 2147483647.0;
  auto constant = [&](bool v) { Line(absl::StrCat("TEXPANDS(", d, ", ", v ? "1.0f" : "0.0f", ");")); };
  if (std::isnan(s)) {
    constant(mode == "NE");
    return absl::OkStatus();
  }
  if (mode == "EQ" || mode == "NE") {
    if (s != std::floor(s) || s < lo || s > hi) {
      constant(mode == "NE");
    } else {
      IntCompareFlat(FlatI(a), mode.c_str(), absl::StrCat(static_cast<int64_t>(s)), d);
    }
    return absl::OkStatus();
  }
  // x >= c (GE, GT) or x <= c (LE, LT) with an integer c.
  const bool ge = mode == "GE" || mode == "GT";
  const double c = mode == "LT"   ? std::ceil(s) - 1
                   : mode == "LE" ? std::floor(s)
                   : mode == "GT" ? std::floor(s) + 1
                                  : std::ceil(s);
  if (ge ? c > hi : c < lo) {
    constant(false);
  } else if (ge ? c <= lo : c >= hi) {
    constant(true);
  } else {
    IntCompareFlat(FlatI(a), ge ? "GE" : "LE", absl::StrCat(static_cast<int64_t>(c)), d);
  }
  return absl::OkStatus();
}

// An instruction with an int32 tile (or an integer dtype) as result or
// operand: integer arithmetic wraps (two's complement), as torch and the
// host do.
absl::Status FunctionEmitter::EmitIntCompute(const PtoInstr& in) {
  for (int s : in.srcs) {
    if (elem_[s] == Elem::kI64) {
      return Unsupported(in.op, "on DT_INT64 values (the target computes on INT32 only)");
    }
  }
  if (elem_[in.dst] == Elem::kI64) {
    return Unsupported(in.op, "into DT_INT64 values (the target computes on INT32 only)");
  }
  if (in.op == PtoOpcode::kTCvt) return EmitIntCast(in);
  if (Compares(in.op)) return EmitIntCompare(in);
  if (Reduces(in.op)) return EmitIntReduce(in);
  if (kind_[in.dst] != Kind::kFull) return Unsupported(in.op, "into an integer row tile");
  for (int s : in.srcs) {
    if (kind_[s] != Kind::kFull) return Unsupported(in.op, "on an integer row tile");
  }
  const std::string d = T(in.dst);
  auto src = [&](int k) { return T(in.srcs[k]); };
  // An immediate as an int32 literal: integral and within int32, else
  // UNIMPLEMENTED; a run-time one converted.
  auto int_scalar = [&](size_t j, std::string* out) -> absl::Status {
    const int dynamic = j < in.scalar_dynamic.size() ? in.scalar_dynamic[j] : -1;
    if (dynamic >= 0) {
      *out = absl::StrCat("static_cast<int32_t>(args[", rank_ + dynamic, "])");
      return absl::OkStatus();
    }
    const double v = in.scalars[j];
    if (v != std::floor(v) || v < -2147483648.0 || v > 2147483647.0) {
      return Unsupported(in.op, absl::StrCat("of DT_INT32 values with the scalar ", v,
                                             " (not an int32 value)"));
    }
    *out = absl::StrCat(static_cast<int64_t>(v));
    return absl::OkStatus();
  };
  if (in.op == PtoOpcode::kTFill) {
    // The value converted as the host does: truncated to 32 bits (NaN and
    // values beyond: INT32_MIN), wrapped to INT8/INT16/UINT8.
    const double v = in.scalars.empty() ? 0 : in.scalars[0];
    if (!in.scalar_dynamic.empty() && in.scalar_dynamic[0] >= 0) {
      return Unsupported(in.op, "of integers with a run-time value");
    }
    int64_t i = std::isnan(v) || v >= 0x1p31 || v < -0x1p31 ? INT32_MIN : static_cast<int64_t>(v);
    if (in.dtype == pto::v1::DT_INT8) i = static_cast<int8_t>(static_cast<uint64_t>(i));
    if (in.dtype == pto::v1::DT_INT16) i = static_cast<int16_t>(static_cast<uint64_t>(i));
    if (in.dtype == pto::v1::DT_UINT8) i = static_cast<uint8_t>(static_cast<uint64_t>(i));
    if (in.dtype == pto::v1::DT_INT64) {
      return Unsupported(in.op, "of DT_INT64 values (the target computes on INT32 only)");
    }
    Line(absl::StrCat("TEXPANDS(", d, ", ", elem_[in.dst] == Elem::kI32 ? absl::StrCat(i)
                                                : FloatLiteral(static_cast<double>(i)), ");"));
    return absl::OkStatus();
  }
  if (in.op == PtoOpcode::kTArange) {
    // start + step * (a0 + i) as TARANGE of FP32 computes it, truncated
    // toward zero to int32 (and wrapped to INT8/INT16/UINT8) as a cast.
    if (rank_ != 1 || in.scalars.size() < 2) return Unsupported(in.op, "other than rank 1");
    if (in.dtype == pto::v1::DT_INT64) {
      return Unsupported(in.op, "of DT_INT64 values (the target computes on INT32 only)");
    }
    need_index_ = true;
    Line("TCI<IndexInt, int32_t, 0>(iidx, static_cast<int32_t>(args[0]));");
    const bool dynamic = std::any_of(in.scalar_dynamic.begin(), in.scalar_dynamic.end(),
                                     [](int k) { return k >= 0; });
    auto int32_value = [](double v) {
      return v == std::floor(v) && v >= -2147483648.0 && v <= 2147483647.0;
    };
    if (elem_[in.dst] == Elem::kI32 && !dynamic && int32_value(in.scalars[0]) &&
        int32_value(in.scalars[1])) {  // integers: in int32, exact within int32
      Line(absl::StrCat("TMULS(iidx, iidx, ", static_cast<int64_t>(in.scalars[1]), ");"));
      Line(absl::StrCat("TADDS(iidx, iidx, ", static_cast<int64_t>(in.scalars[0]), ");"));
      Line(absl::StrCat("TMOV(", d, ", iidx);"));
      return absl::OkStatus();
    }
    const std::string f = Tmp();
    Line("TCVT(fidx, iidx, RoundMode::CAST_NONE);");
    Line(absl::StrCat("TMULS(fidx, fidx, ", Scalar(in, 1), ");"));
    Line(absl::StrCat("TADDS(fidx, fidx, ", Scalar(in, 0), ");"));
    Line(absl::StrCat("TMOV(", f, ", fidx);"));
    if (elem_[in.dst] == Elem::kI32) {
      Line(absl::StrCat("TCVT(", d, ", ", f, ", RoundMode::CAST_TRUNC);"));
      return absl::OkStatus();
    }
    const std::string i = IntTmpK(3);
    Line(absl::StrCat("TCVT(", i, ", ", f, ", RoundMode::CAST_TRUNC);"));
    WrapNarrow(i, in.dtype);
    Line(absl::StrCat("TCVT(", d, ", ", i, ", RoundMode::CAST_NONE);"));
    return absl::OkStatus();
  }
  for (int s : in.srcs) {
    if (elem_[s] != Elem::kI32 && !(in.op == PtoOpcode::kTSel && s == in.srcs[0])) {
      return Unsupported(in.op, absl::StrCat("mixing f32 and int32 tiles (a ",
                                             pto::v1::DataType_Name(in.dtype), " result)"));
    }
  }
  if (elem_[in.dst] != Elem::kI32) {
    return Unsupported(in.op, absl::StrCat("with a ", pto::v1::DataType_Name(in.dtype),
                                           " result from int32 tiles"));
  }
  std::string s0, s1;
  switch (in.op) {
    case PtoOpcode::kTAdd: case PtoOpcode::kTSub: case PtoOpcode::kTMul:
    case PtoOpcode::kTMax: case PtoOpcode::kTMin: case PtoOpcode::kTAnd: case PtoOpcode::kTOr:
      Line(absl::StrCat(PtoOpcodeName(in.op), "(", d, ", ", src(0), ", ", src(1), ");"));
      break;
    case PtoOpcode::kTXor:
      Line(absl::StrCat("TXOR(", d, ", ", src(0), ", ", src(1), ", ", IntTmpK(4), ");"));
      break;
    case PtoOpcode::kTNot: case PtoOpcode::kTNeg:
      Line(absl::StrCat(PtoOpcodeName(in.op), "(", d, ", ", src(0), ");"));
      break;
    case PtoOpcode::kTAbs: {  // max(x, -x): |INT32_MIN| wraps to INT32_MIN
      const std::string n = IntTmpK(2);
      Line(absl::StrCat("TNEG(", n, ", ", src(0), ");"));
      Line(absl::StrCat("TMAX(", d, ", ", src(0), ", ", n, ");"));
      break;
    }
    case PtoOpcode::kTShl: case PtoOpcode::kTShr: {
      // The count modulo 32, as torch on x86; >> is arithmetic.
      const std::string c = IntTmpK(2);
      Line(absl::StrCat("TANDS(", c, ", ", src(1), ", 31);"));
      Line(absl::StrCat(PtoOpcodeName(in.op), "(", d, ", ", src(0), ", ", c, ");"));
      break;
    }
    case PtoOpcode::kTSign:  // clamp to [-1, 1]: exact for integers
      Line(absl::StrCat("TMINS(", d, ", ", src(0), ", 1);"));
      Line(absl::StrCat("TMAXS(", d, ", ", d, ", -1);"));
      break;
    case PtoOpcode::kTClip: {
      // The smallest integer >= lo and the largest <= hi, held within int32
      // (a bound past the range clips nothing), as the host's.
      if (in.scalars.size() < 2 || (!in.scalar_dynamic.empty() && (in.scalar_dynamic[0] >= 0 ||
                                    (in.scalar_dynamic.size() > 1 && in.scalar_dynamic[1] >= 0)))) {
        return Unsupported(in.op, "of DT_INT32 values with run-time bounds");
      }
      auto bound = [](double v) {
        const double c = std::min(std::max(v, -2147483648.0), 2147483647.0);
        return absl::StrCat(static_cast<int64_t>(c));
      };
      Line(absl::StrCat("TMAXS(", d, ", ", src(0), ", ", bound(std::ceil(in.scalars[0])), ");"));
      Line(absl::StrCat("TMINS(", d, ", ", d, ", ", bound(std::floor(in.scalars[1])), ");"));
      break;
    }
    case PtoOpcode::kTAddS: case PtoOpcode::kTSubS: case PtoOpcode::kTMulS:
    case PtoOpcode::kTMaxS: case PtoOpcode::kTMinS:
      if (absl::Status st = int_scalar(0, &s0); !st.ok()) return st;
      Line(absl::StrCat(PtoOpcodeName(in.op), "(", d, ", ", src(0), ", ", s0, ");"));
      break;
    case PtoOpcode::kTRSubS:
      if (absl::Status st = int_scalar(0, &s0); !st.ok()) return st;
      Line(absl::StrCat("TNEG(", d, ", ", src(0), ");"));
      Line(absl::StrCat("TADDS(", d, ", ", d, ", ", s0, ");"));
      break;
    case PtoOpcode::kTMov:
      Line(absl::StrCat("TADDS(", d, ", ", src(0), ", 0);"));
      break;
    case PtoOpcode::kTSel: {  // the f32 condition's mask selects int32 values
      if (elem_[in.srcs[0]] != Elem::kF32 || kind_[in.srcs[0]] != Kind::kFull) {
        return Unsupported(in.op, "with an int32 or row condition");
      }
      Line(absl::StrCat("TCMPS(", Mask(), ", ", Flat(src(0)), ", 0.0f, CmpMode::GT);"));
      const std::string fa = FlatI(src(1)), fb = FlatI(src(2)), fd = FlatI(d);
      Line(absl::StrCat("TSEL(", fd, ", ", Mask(), ", ", fa, ", ", fb, ");"));
      Line(absl::StrCat("TRESHAPE(", d, ", ", fd, ");"));
      break;
    }
    default:
      if (ascend::IsAscendIntComposition(in.op)) {
        ascend::EmitAscendIntComposition(*this, in.op, d, src(0), src(1));
        break;
      }
      return Unsupported(in.op, "of DT_INT32 values has no PTO-ISA mapping in this target yet");
  }
  return absl::OkStatus();
}

// Extrema of int32 values: the signed top halves x >> 16 reduced in f32
// (TROWMAX / TCOLMAX, ...), then the low halves x & 65535 of the elements
// whose top half is the extremum (the others -1 for max, 65536 for min),
// reduced the same way; hi * 65536 + lo. Exact for every int32. (A sum or
// product of INT32 values is INT64, torch's, which PlanIntTiles refuses.)
absl::Status FunctionEmitter::EmitIntReduce(const PtoInstr& in) {
  if (elem_[in.dst] == Elem::kWords) return EmitInt64Reduce(in);
  const int x = in.srcs[0];
  if (kind_[x] != Kind::kFull || elem_[x] != Elem::kI32) {
    return Unsupported(in.op, "of an integer row tile, or of f32 values into an int32 tile");
  }
  if (in.op != PtoOpcode::kTRedMax && in.op != PtoOpcode::kTRedMin) {
    return Unsupported(in.op, "of DT_INT32 values into an int32 tile");
  }
  const bool row = in.reduce_dim == rank_ - 1;
  const std::string d = T(in.dst), src = T(x);
  if (kind_[in.dst] == Kind::kFull) {  // one column: each row's one value
    if (!row || cols_ != 1) return Unsupported(in.op, "of DT_INT32 values into a full tile");
    Line(absl::StrCat("TADDS(", d, ", ", src, ", 0);"));
    return absl::OkStatus();
  }
  auto reduce = [&](const char* what, const std::string& to, const std::string& from) {
    Line(row ? absl::StrCat("TROW", what, "(", to, ", ", from, ", ", Tmp(), ");")
             : absl::StrCat("TCOL", what, "(", to, ", ", from, ");"));
  };
  const std::string part = IntTmpK(2), count = IntTmpK(3), fpart = Scratch(2);
  const std::string rf = row ? RowTmpK(2) : ColTmpK(2), rf2 = row ? RowTmpK(3) : ColTmpK(3);
  const std::string ri = row ? "irow" : "icol";
  (row ? need_int_row_ : need_int_col_) = true;
  const bool max = in.op == PtoOpcode::kTRedMax;
  const char* what = max ? "MAX" : "MIN";
  const std::string e = Scratch(3), fill = Scratch(4);
  Line(absl::StrCat("TEXPANDS(", count, ", 16);"));
  Line(absl::StrCat("TSHR(", part, ", ", src, ", ", count, ");"));
  Line(absl::StrCat("TCVT(", fpart, ", ", part, ", RoundMode::CAST_RINT);"));
  reduce(what, rf, fpart);
  Line(absl::StrCat(row ? "TROWEXPAND(" : "TCOLEXPAND(", e, ", ", rf, ");"));
  Line(absl::StrCat("TSUB(", e, ", ", fpart, ", ", e, ");"));  // 0 where the top half is it
  Line(absl::StrCat("TANDS(", part, ", ", src, ", 65535);"));
  Line(absl::StrCat("TCVT(", fpart, ", ", part, ", RoundMode::CAST_RINT);"));
  Line(absl::StrCat("TEXPANDS(", fill, ", ", max ? "-1.0f" : "65536.0f", ");"));
  Select(fpart, e, max ? "GE" : "LE", "0.0f", fpart, fill);
  reduce(what, rf2, fpart);
  Line(absl::StrCat("TCVT(", d, ", ", rf, ", RoundMode::CAST_RINT);"));
  Line(absl::StrCat("TMULS(", d, ", ", d, ", 65536);"));
  Line(absl::StrCat("TCVT(", ri, ", ", rf2, ", RoundMode::CAST_RINT);"));
  Line(absl::StrCat("TADD(", d, ", ", d, ", ", ri, ");"));
  return absl::OkStatus();
}

// A sum or product into INT64 (ascend_int64.h) of a full tile of INT32
// values or of INT64 words (partial results), into a words tile.
absl::Status FunctionEmitter::EmitInt64Reduce(const PtoInstr& in) {
  const int x = in.srcs[0];
  if (kind_[x] != Kind::kFull || (elem_[x] != Elem::kI32 && elem_[x] != Elem::kWords)) {
    return Unsupported(in.op, "into DT_INT64 of other than a full tile of INT32 values or of "
                              "INT64 partial results");
  }
  ascend::Int64Reduction r;
  r.op = in.op;
  r.along_row = in.reduce_dim == rank_ - 1;
  r.result = kind_[in.dst] == Kind::kRow   ? ascend::Int64Shape::kRow
             : kind_[in.dst] == Kind::kCol ? ascend::Int64Shape::kCol
                                           : ascend::Int64Shape::kFull;
  r.src = T(x);
  r.words = elem_[x] == Elem::kWords;
  r.dst = T(in.dst);
  r.n_max = r.along_row ? cols_ : rows_;
  r.n = !fn_.runtime_extents ? absl::StrCat(r.n_max)
                             : absl::StrCat("static_cast<int32_t>(",
                                            r.along_row ? ValidCols() : ValidRows(), ")");
  r.cols_pad = RoundUp(cols_, kUbAlign / 4);
  r.flat = RoundUp(rows_, kUbAlign / 4) * r.cols_pad;
  if (absl::Status s = ascend::EmitInt64Reduction(*this, r); !s.ok()) {
    return Unsupported(in.op, s.message());
  }
  return absl::OkStatus();
}

void FunctionEmitter::FirstMatch(const std::string& x, const std::string& m,
                                 const std::string& p, bool row) {
  // match = x - m == 0, or where that is NaN (equal infinities, a NaN) x and
  // m both NaN or neither: isnan(v) is !(v <= inf).
  const std::string me = Scratch(8), dd = Scratch(9), nx = Scratch(10), nm = Scratch(11);
  const std::string eq = Scratch(12), pos = Scratch(13);
  const std::string inf = "__builtin_huge_valf()";
  Line(absl::StrCat(row ? "TROWEXPAND(" : "TCOLEXPAND(", me, ", ", m, ");"));
  Line(absl::StrCat("TSUB(", dd, ", ", x, ", ", me, ");"));
  for (const auto& [v, n] : {std::pair{x, nx}, std::pair{me, nm}}) {
    Line(absl::StrCat("TCMPS(", Mask(), ", ", Flat(v), ", ", inf, ", CmpMode::LE);"));
    const std::string fn = Flat(n);
    SelectOneZero(fn, true);
    Line(absl::StrCat("TRESHAPE(", n, ", ", fn, ");"));
  }
  Line(absl::StrCat("TSUB(", nx, ", ", nx, ", ", nm, ");"));
  (void)EmitCompareFlat(Flat(nx), "0.0f", PtoOpcode::kTCmpEq, nm);  // NaN-ness agrees
  (void)EmitCompareFlat(Flat(dd), "0.0f", PtoOpcode::kTCmpEq, eq);
  Line(absl::StrCat("TCMPS(", Mask(), ", ", Flat(dd), ", ", inf, ", CmpMode::LE);"));
  const std::string feq = Flat(eq), fnm = Flat(nm);
  Line(absl::StrCat("TSEL(", feq, ", ", Mask(), ", ", feq, ", ", fnm, ");"));
  Line(absl::StrCat("TRESHAPE(", eq, ", ", feq, ");"));
  // Each element's position along the dim: its column (TCI, expanded down
  // the rows), or its row (TCI over the flat view, floor((i + 1/2) /
  // cols8)); `n` (the dim's extent) where it does not match; the minimum
  // along the dim; `n` (none) becomes 0.
  const int64_t n = row ? cols_ : rows_;
  if (row) {
    need_index_ = true;
    Line("TCI<IndexInt, int32_t, 0>(iidx, 0);");
    Line("TCVT(fidx, iidx, RoundMode::CAST_NONE);");
    Line(absl::StrCat("TCOLEXPAND(", pos, ", fidx);"));
  } else {
    const std::string i = IntTmpK(2), fi = FlatI(i), fpos = Flat(pos);
    Line(absl::StrCat("TCI<FlatInt, int32_t, 0>(", fi, ", 0);"));
    Line(absl::StrCat("TCVT(", fpos, ", ", fi, ", RoundMode::CAST_NONE);"));
    Line(absl::StrCat("TADDS(", fpos, ", ", fpos, ", 0.5f);"));
    Line(absl::StrCat("TMULS(", fpos, ", ", fpos, ", ",
                      FloatLiteral(1.0 / static_cast<double>(RoundUp(cols_, kUbAlign / 4))), ");"));
    Line(absl::StrCat("TRESHAPE(", pos, ", ", fpos, ");"));
    Line(absl::StrCat("TCVT(", i, ", ", pos, ", RoundMode::CAST_FLOOR);"));
    Line(absl::StrCat("TCVT(", pos, ", ", i, ", RoundMode::CAST_NONE);"));
  }
  Line(absl::StrCat("TEXPANDS(", me, ", ", FloatLiteral(static_cast<double>(n)), ");"));
  const std::string fpos = Flat(pos), fme = Flat(me);
  Line(absl::StrCat("TCMPS(", Mask(), ", ", Flat(eq), ", 0.5f, CmpMode::GT);"));
  const std::string fdd = Flat(dd);
  Line(absl::StrCat("TSEL(", fdd, ", ", Mask(), ", ", fpos, ", ", fme, ");"));
  Line(absl::StrCat("TRESHAPE(", dd, ", ", fdd, ");"));
  Line(row ? absl::StrCat("TROWMIN(", p, ", ", dd, ", ", Tmp(), ");")
           : absl::StrCat("TCOLMIN(", p, ", ", dd, ");"));
  const std::string r = row ? RowScratch() : ColScratch();
  Line(absl::StrCat("TADDS(", r, ", ", p, ", ", FloatLiteral(1.0 - static_cast<double>(n)), ");"));
  Line(absl::StrCat("TMAXS(", r, ", ", r, ", 0.0f);"));
  Line(absl::StrCat("TMULS(", r, ", ", r, ", ", FloatLiteral(static_cast<double>(n)), ");"));
  Line(absl::StrCat("TSUB(", p, ", ", p, ", ", r, ");"));
}

// argmax/argmin over the last dim (row tiles) or dim 0 of a rank-2 tile
// (column tiles): TARGFIRST's position is the first one along the dim
// where x equals the extremum (FirstMatch), plus the task's offset
// (int32); TARGSEL's is the index tile's element there, picked by a mask
// of that position (TSEL) and summed along the dim in two 16-bit halves
// (f32 sums of one nonzero value: exact), rejoined as hi * 65536 + lo in
// int32. The positions are int32 in UB and INT64 in GM.
absl::Status FunctionEmitter::EmitArg(const PtoInstr& in) {
  const bool row = in.reduce_dim == rank_ - 1 && kind_[in.dst] == Kind::kRow;
  const bool col = rank_ == 2 && in.reduce_dim == 0 && kind_[in.dst] == Kind::kCol;
  if (!row && !col) {
    return Unsupported(in.op, absl::StrCat("over dim ", in.reduce_dim, " of a rank-", rank_,
                                           " tile (argmax/argmin map over the last dim, or dim 0 "
                                           "of a rank-2 tile)"));
  }
  const Kind reduced = row ? Kind::kRow : Kind::kCol;
  const int x = in.srcs[0], m = in.srcs.back();
  if (elem_[x] != Elem::kF32 || elem_[m] != Elem::kF32 || kind_[x] != Kind::kFull ||
      kind_[m] != reduced) {
    return Unsupported(in.op, "of integer values (argmax/argmin map over f32 tiles)");
  }
  const std::string d = T(in.dst), pr = row ? RowTmpK(2) : ColTmpK(2);
  FirstMatch(T(x), T(m), pr, row);
  if (in.op == PtoOpcode::kTArgFirst) {
    Line(absl::StrCat("TCVT(", d, ", ", pr, ", RoundMode::CAST_RINT);"));
    Line(absl::StrCat("TADDS(", d, ", ", d, ", static_cast<int32_t>(args[", in.reduce_dim, "]));"));
    return absl::OkStatus();
  }
  const int idx = in.srcs[1];
  if (elem_[idx] != Elem::kI32 || kind_[idx] != Kind::kFull) {
    return Unsupported(in.op, "with an index tile other than a full int32 tile");
  }
  // The position's mask: |position - first| < 1/2 (FirstMatch left the
  // positions in scratch 13).
  const std::string pos = Scratch(13), sel = Scratch(8), part = Scratch(9);
  Line(absl::StrCat(row ? "TROWEXPAND(" : "TCOLEXPAND(", sel, ", ", pr, ");"));
  Line(absl::StrCat("TSUB(", sel, ", ", pos, ", ", sel, ");"));
  Line(absl::StrCat("TABS(", sel, ", ", sel, ");"));
  const std::string h = IntTmpK(2), zero = IntTmpK(3), n16 = IntTmpK(4);
  Line(absl::StrCat("TEXPANDS(", zero, ", 0);"));
  Line(absl::StrCat("TEXPANDS(", n16, ", 16);"));
  const std::string fz = FlatI(zero);
  Line(absl::StrCat("TCMPS(", Mask(), ", ", Flat(sel), ", 0.5f, CmpMode::LT);"));
  const std::string lo = row ? RowTmpK(3) : ColTmpK(3), hi = row ? RowTmpK(4) : ColTmpK(4);
  for (const std::string& sum : {lo, hi}) {
    if (sum == lo) {
      Line(absl::StrCat("TANDS(", h, ", ", T(idx), ", 65535);"));
    } else {
      Line(absl::StrCat("TSHR(", h, ", ", T(idx), ", ", n16, ");"));  // arithmetic
    }
    const std::string fh = FlatI(h);
    Line(absl::StrCat("TSEL(", fh, ", ", Mask(), ", ", fh, ", ", fz, ");"));
    Line(absl::StrCat("TRESHAPE(", h, ", ", fh, ");"));
    Line(absl::StrCat("TCVT(", part, ", ", h, ", RoundMode::CAST_NONE);"));
    Line(row ? absl::StrCat("TROWSUM(", sum, ", ", part, ", ", Tmp(), ");")
             : absl::StrCat("TCOLSUM(", sum, ", ", part, ");"));
  }
  const std::string ilo = row ? "irow" : "icol";
  (row ? need_int_row_ : need_int_col_) = true;
  Line(absl::StrCat("TCVT(", d, ", ", hi, ", RoundMode::CAST_RINT);"));
  Line(absl::StrCat("TMULS(", d, ", ", d, ", 65536);"));
  Line(absl::StrCat("TCVT(", ilo, ", ", lo, ", RoundMode::CAST_RINT);"));
  Line(absl::StrCat("TADD(", d, ", ", d, ", ", ilo, ");"));
  return absl::OkStatus();
}

// Index instructions. MGATHER and MSCATTER take the buffer whole and, per
// element, a linear offset into it (PTO-ISA leaves the meaning of its
// indices to the target; the CPU simulation's are linear offsets it does
// not check). Ours are coordinates along dim K, narrowed to int32 tiles, so
// each element's offset is computed here in int32: the task's offsets times
// the buffer's strides (a scalar), plus the element's own coordinates in the
// other dims times theirs (from its flat position: TCI, and its row split by
// f32 divisions floor((r + 1/2) / E), exact for the few thousand positions
// of a tile), plus the index times dim K's stride. An index outside [0, n)
// (n the dim's extent) is replaced by 0 before that, so no offset leaves
// the buffer, and the element is marked invalid: a gather reads 0 there
// (TSEL), a scatter writes nothing (EmitScatter).
absl::StatusOr<FunctionEmitter::Indexed> FunctionEmitter::IndexOffsets(const PtoInstr& in,
                                                                        int idx, int i,
                                                                        bool in_region) {
  if (in.buffer < 0 || in.buffer >= static_cast<int>(p_.buffers.size()) ||
      static_cast<int>(p_.buffers[in.buffer].shape.size()) != rank_ || in.index_dim < 0 ||
      in.index_dim >= rank_ || rank_ > 4 ||
      (!in.stride_dynamic.empty() && static_cast<int>(in.stride_dynamic.size()) != rank_)) {
    return absl::InternalError(absl::StrCat(PtoOpcodeName(in.op),
                                            ": malformed buffer, dim or sources"));
  }
  if (elem_[idx] != Elem::kI32 || kind_[idx] != Kind::kFull) {
    return Unsupported(in.op, "with an index tile other than a full integer tile");
  }
  const PtoBuffer& buf = p_.buffers[in.buffer];
  // The buffer and the tile padded to 4 dims; strides row-major, or from
  // the dynamic args where they depend on symbols.
  std::vector<int64_t> shape4(4 - rank_, 1), tile4(4 - rank_, 1);
  shape4.insert(shape4.end(), buf.shape.begin(), buf.shape.end());
  tile4.insert(tile4.end(), fn_.tile.begin(), fn_.tile.end());
  std::vector<int64_t> strides4(4, 1);
  for (int k = 2; k >= 0; --k) strides4[k] = strides4[k + 1] * shape4[k + 1];
  std::vector<std::string> stride(4), offset(4);
  for (int k = 0; k < 4; ++k) {
    const int d = k - (4 - rank_);
    const int dynamic = d >= 0 && !in.stride_dynamic.empty() ? in.stride_dynamic[d] : -1;
    stride[k] = dynamic >= 0 ? absl::StrCat("args[", rank_ + dynamic, "]")
                             : absl::StrCat(strides4[k]);
    offset[k] = d < 0 ? "0" : absl::StrCat("args[", d, "]");
  }
  const int kdim = in.index_dim + 4 - rank_;
  const std::string n = in.extent_dynamic >= 0
                            ? absl::StrCat("args[", rank_ + in.extent_dynamic, "]")
                            : absl::StrCat(buf.shape[in.index_dim]);
  auto i32 = [](const std::string& v) { return absl::StrCat("static_cast<int32_t>(", v, ")"); };
  // The whole buffer: its elements up to the outermost dim's extent times
  // its stride.
  const int d0 = 4 - rank_;
  const std::string outer = d0 == kdim ? n : absl::StrCat(shape4[d0]);
  const bool static_total = absl::ascii_isdigit(stride[d0][0]) && absl::ascii_isdigit(outer[0]);
  const std::string total = static_total
                                ? absl::StrCat(std::stoll(stride[d0]) * std::stoll(outer))
                                : absl::StrCat(outer, " * ", stride[d0]);
  buffers_.insert(in.buffer);
  Indexed x;
  x.g = absl::StrCat("ga", i);
  const std::string elem = GmElem(buf.dtype);
  const std::string ptr = absl::StrCat("b", in.buffer);
  if (static_total) {
    Line(absl::StrCat("using GA", i, " = GlobalTensor<", elem, ", Shape<1, 1, 1, 1, ", total,
                      ">, Stride<1, 1, 1, 1, 1>, Layout::ND>;"));
    Line(absl::StrCat("GA", i, " ", x.g, "(", ptr, ");"));
  } else {
    Line(absl::StrCat("using GA", i, " = GlobalTensor<", elem,
                      ", Shape<1, 1, 1, 1, DYNAMIC>, Stride<1, 1, 1, 1, 1>, Layout::ND>;"));
    Line(absl::StrCat("GA", i, " ", x.g, "(", ptr, ", Shape<1, 1, 1, 1, DYNAMIC>(", total,
                      "), {});"));
  }
  Sync(Pipe::kV);
  // Flat int32 views: e (position), row, column, q (quotient), w (work),
  // off (offset), k (the index, clamped).
  const std::string e = FlatI(IntTmpK(5)), row = FlatI(IntTmpK(6)), col = FlatI(IntTmpK(7));
  const std::string q = FlatI(IntTmpK(8)), w = FlatI(IntTmpK(9)), off = FlatI(IntTmpK(10));
  const std::string k = FlatI(IntTmpK(11)), izero = FlatI(IntTmpK(12));
  const std::string f = Flat(Scratch(15));
  const int64_t cols8 = RoundUp(cols_, kUbAlign / 4);
  // x's floor division by `by` (x >= 0): quot = floor((x + 1/2) / by), and
  // x becomes the remainder x - quot * by.
  auto divide = [&](const std::string& x, int64_t by, const std::string& quot) {
    Line(absl::StrCat("TCVT(", f, ", ", x, ", RoundMode::CAST_NONE);"));
    Line(absl::StrCat("TADDS(", f, ", ", f, ", 0.5f);"));
    Line(absl::StrCat("TMULS(", f, ", ", f, ", ", FloatLiteral(1.0 / static_cast<double>(by)), ");"));
    Line(absl::StrCat("TCVT(", quot, ", ", f, ", RoundMode::CAST_FLOOR);"));
    Line(absl::StrCat("TMULS(", w, ", ", quot, ", ", by, ");"));
    Line(absl::StrCat("TSUB(", x, ", ", x, ", ", w, ");"));
  };
  Line(absl::StrCat("TCI<FlatInt, int32_t, 0>(", e, ", 0);"));
  Line(absl::StrCat("TADDS(", col, ", ", e, ", 0);"));
  divide(col, cols8, row);
  x.e = e;
  x.zero = izero;
  x.row = row;
  x.col = col;
  // The other dims' coordinates (dims 2, 1, 0 of the rows) times their
  // strides; the column's where K is another dim.
  Line(absl::StrCat("TEXPANDS(", izero, ", 0);"));
  Line(absl::StrCat("TADDS(", off, ", ", izero, ", 0);"));
  Line(absl::StrCat("TADDS(", k, ", ", row, ", 0);"));  // the row's rest
  for (int d = 2; d >= 0; --d) {
    if (tile4[d] == 1) continue;
    bool outer_dims = false;
    for (int a = d - 1; a >= 0; --a) outer_dims = outer_dims || tile4[a] != 1;
    if (outer_dims) {
      divide(k, tile4[d], q);  // k: the coordinate in dim d; q: the rest
    } else {
      Line(absl::StrCat("TADDS(", q, ", ", k, ", 0);"));
    }
    if (d != kdim) {
      Line(absl::StrCat("TMULS(", w, ", ", outer_dims ? k : q, ", ", i32(stride[d]), ");"));
      Line(absl::StrCat("TADD(", off, ", ", off, ", ", w, ");"));
    }
    if (outer_dims) Line(absl::StrCat("TADDS(", k, ", ", q, ", 0);"));
  }
  if (kdim != 3) Line(absl::StrCat("TADD(", off, ", ", off, ", ", col, ");"));
  std::string base;
  for (int d = 0; d < 4; ++d) {
    if (d == kdim || offset[d] == "0") continue;
    absl::StrAppend(&base, base.empty() ? "" : " + ", offset[d],
                    d == 3 ? "" : absl::StrCat(" * ", stride[d]));
  }
  if (!base.empty()) Line(absl::StrCat("TADDS(", off, ", ", off, ", ", i32(base), ");"));
  // valid = 0 <= index < n (and, for a scatter, the element inside the
  // task's extents); the index clamped to 0 where it is not.
  const std::string v = Flat(Scratch(14)), fx = FlatI(T(idx));
  Line(absl::StrCat("TCMPS(", Mask(), ", ", fx, ", 0, CmpMode::GE);"));
  SelectOneZero(v, false);
  auto keep_where = [&](const std::string& t, const char* mode, const std::string& c) {
    Line(absl::StrCat("TCMPS(", Mask(), ", ", t, ", ", c, ", CmpMode::", mode, ");"));
    Line(absl::StrCat("TSEL(", v, ", ", Mask(), ", ", v, ", fzero);"));
  };
  keep_where(fx, "LT", i32(n));
  if (in_region) {
    keep_where(row, "LT", i32(fn_.runtime_extents ? ValidRows() : absl::StrCat(rows_)));
    keep_where(col, "LT", i32(fn_.runtime_extents ? ValidCols() : absl::StrCat(cols_)));
  }
  x.valid = v;
  Line(absl::StrCat("TCMPS(", Mask(), ", ", v, ", 0.5f, CmpMode::GT);"));
  Line(absl::StrCat("TSEL(", k, ", ", Mask(), ", ", fx, ", ", izero, ");"));
  if (stride[kdim] == "1") {
    Line(absl::StrCat("TADD(", off, ", ", off, ", ", k, ");"));
  } else {
    Line(absl::StrCat("TMULS(", w, ", ", k, ", ", i32(stride[kdim]), ");"));
    Line(absl::StrCat("TADD(", off, ", ", off, ", ", w, ");"));
  }
  x.off = IntTmpK(10);
  Line(absl::StrCat("TRESHAPE(", x.off, ", ", off, ");"));
  return x;
}

absl::StatusOr<std::string> FunctionEmitter::IndexStage(const PtoInstr& in,
                                                        pto::v1::DataType dtype,
                                                        const std::string& tile) {
  switch (dtype) {
    case pto::v1::DT_FP32: case pto::v1::DT_INT32: return tile;
    case pto::v1::DT_FP16: return HalfTmp();
    case pto::v1::DT_BOOL: case pto::v1::DT_UINT8: return ByteTmp();
    case pto::v1::DT_INT8: need_i8_ = true; return std::string("i8tmp");
    case pto::v1::DT_INT16: need_i16_ = true; return std::string("i16tmp");
    default:
      return Unsupported(in.op, absl::StrCat("of ", pto::v1::DataType_Name(dtype),
                                             " values (the target gathers and scatters FP32, "
                                             "FP16, BOOL, INT8, INT16, INT32 and UINT8)"));
  }
}

// dst = MGATHER at the offsets (through a staging tile of the buffer's
// type), 0 where the index is out of range.
absl::Status FunctionEmitter::EmitGather(const PtoInstr& in, int i) {
  if (in.srcs.size() != 1) return absl::InternalError("MGATHER: malformed sources");
  const int dst = in.dst;
  if (dst < 0 || dst >= fn_.num_tiles) return absl::InternalError("bad destination tile");
  if (kind_[dst] != Kind::kFull) return Unsupported(in.op, "into a row or column tile");
  const pto::v1::DataType dtype = p_.buffers[in.buffer < 0 ? 0 : in.buffer].dtype;
  if ((elem_[dst] == Elem::kI32) != (dtype == pto::v1::DT_INT32)) {
    return Unsupported(in.op, absl::StrCat("of ", pto::v1::DataType_Name(dtype),
                                           " values into an ",
                                           elem_[dst] == Elem::kF32 ? "f32" : "integer", " tile"));
  }
  absl::StatusOr<std::string> stage = IndexStage(in, dtype, T(dst));
  if (!stage.ok()) return stage.status();
  absl::StatusOr<Indexed> x = IndexOffsets(in, in.srcs[0], i, false);
  if (!x.ok()) return x.status();
  Sync(Pipe::kMte2);
  Line(absl::StrCat("MGATHER(", *stage, ", ", x->g, ", ", x->off, ");"));
  Sync(Pipe::kV);
  if (*stage != T(dst)) {
    Line(absl::StrCat("TCVT(", T(dst), ", ", *stage, ", RoundMode::CAST_NONE);"));
  }
  Line(absl::StrCat("TCMPS(", Mask(), ", ", x->valid, ", 0.5f, CmpMode::GT);"));
  if (elem_[dst] == Elem::kI32) {
    const std::string fd = FlatI(T(dst));
    Line(absl::StrCat("TSEL(", fd, ", ", Mask(), ", ", fd, ", ", x->zero, ");"));
    Line(absl::StrCat("TRESHAPE(", T(dst), ", ", fd, ");"));
  } else {
    const std::string fd = Flat(T(dst));
    Line(absl::StrCat("TSEL(", fd, ", ", Mask(), ", ", fd, ", fzero);"));
    Line(absl::StrCat("TRESHAPE(", T(dst), ", ", fd, ");"));
  }
  return absl::OkStatus();
}

// MSCATTER writes every element it is given, so an element that must write
// nothing (its index out of range, or outside the task's extents) is sent
// where the last element that does write goes, with that element's value
// (TGATHER within UB): MSCATTER writes in row-major order (the CPU
// simulation; on the device the order of repeated offsets is
// implementation-defined), so that position ends with the value it must
// have. With no element to write, each writes back the value its clamped
// offset holds (read first). add and multiply read the buffer (MGATHER),
// combine, and write back one row at a time (dim K another than the last:
// a row's offsets differ in their column) or one column at a time (K the
// last dim: a column's offsets differ in their row), so a position that
// several elements name takes each of them in row-major order, as on the
// host.
absl::Status FunctionEmitter::EmitScatter(const PtoInstr& in, int i) {
  if (in.srcs.size() != 2) return absl::InternalError("MSCATTER: malformed sources");
  const int val = in.srcs[0];
  if (kind_[val] != Kind::kFull) return Unsupported(in.op, "of a row or column tile");
  const pto::v1::DataType dtype = p_.buffers[in.buffer < 0 ? 0 : in.buffer].dtype;
  const bool combine = in.scatter != ScatterReduce::kNone;
  if (combine && dtype != pto::v1::DT_FP32 && dtype != pto::v1::DT_FP16 &&
      dtype != pto::v1::DT_INT32) {
    return Unsupported(in.op, absl::StrCat("(scatter's ", ScatterReduceName(in.scatter), ") of ",
                                           pto::v1::DataType_Name(dtype),
                                           " values (the target combines FP32, FP16 and INT32)"));
  }
  const bool int_values = elem_[val] == Elem::kI32;
  if (elem_[val] == Elem::kI64 || int_values != (dtype == pto::v1::DT_INT32)) {
    return Unsupported(in.op, absl::StrCat("of ", pto::v1::DataType_Name(dtype),
                                           " values from an ",
                                           int_values ? "int32" : "f32 or int64", " tile"));
  }
  const std::string old = int_values ? IntTmpK(13) : Scratch(17);
  absl::StatusOr<std::string> stage = IndexStage(in, dtype, old);
  if (!stage.ok()) return stage.status();
  absl::StatusOr<Indexed> x = IndexOffsets(in, in.srcs[1], i, true);
  if (!x.ok()) return x.status();
  const bool by_column = in.index_dim == rank_ - 1;
  std::string sel = x->valid;
  if (combine) {
    // One pass per row (column) `rr`: the valid elements of that row.
    sel = Flat(Scratch(16));
    const std::string limit = by_column
                                  ? (fn_.runtime_extents ? ValidCols() : absl::StrCat(cols_))
                                  : (fn_.runtime_extents ? ValidRows() : absl::StrCat(rows_));
    Line(absl::StrCat("for (int32_t rr = 0; rr < static_cast<int32_t>(", limit, "); ++rr) {"));
    Line(absl::StrCat("TCMPS(", Mask(), ", ", by_column ? x->col : x->row, ", rr, CmpMode::EQ);"));
    Line(absl::StrCat("TSEL(", sel, ", ", Mask(), ", ", x->valid, ", fzero);"));
  }
  // The values the offsets hold.
  Sync(Pipe::kMte2);
  Line(absl::StrCat("MGATHER(", *stage, ", ", x->g, ", ", x->off, ");"));
  Sync(Pipe::kV);
  if (*stage != old) Line(absl::StrCat("TCVT(", old, ", ", *stage, ", RoundMode::CAST_NONE);"));
  // new = sel ? value (combined with old) : old.
  std::string value = T(val);
  if (combine) {
    value = int_values ? IntTmpK(14) : Scratch(18);
    Line(absl::StrCat(in.scatter == ScatterReduce::kAdd ? "TADD(" : "TMUL(", value, ", ", old,
                      ", ", T(val), ");"));
  }
  const std::string fold = int_values ? FlatI(old) : Flat(old);
  const std::string fval = int_values ? FlatI(value) : Flat(value);
  Line(absl::StrCat("TCMPS(", Mask(), ", ", sel, ", 0.5f, CmpMode::GT);"));
  Line(absl::StrCat("TSEL(", fold, ", ", Mask(), ", ", fval, ", ", fold, ");"));
  Line(absl::StrCat("TRESHAPE(", old, ", ", fold, ");"));
  // The last selected element's position eL (0 where none is): the
  // maximum of (e + 1) over the selected ones, less 1. Each element
  // writes its own (selected) or eL's offset and value.
  need_flat_max_ = true;
  const std::string score = Flat(Scratch(19)), pick = FlatI(IntTmpK(15));
  Line(absl::StrCat("TCVT(", score, ", ", x->e, ", RoundMode::CAST_NONE);"));
  Line(absl::StrCat("TADDS(", score, ", ", score, ", 1.0f);"));
  Line(absl::StrCat("TSEL(", score, ", ", Mask(), ", ", score, ", fzero);"));
  Line(absl::StrCat("TROWMAX(fmax, ", score, ", ", Flat(Scratch(20)), ");"));
  Line(absl::StrCat("TROWEXPAND(", score, ", fmax);"));
  Line(absl::StrCat("TADDS(", score, ", ", score, ", -1.0f);"));
  Line(absl::StrCat("TMAXS(", score, ", ", score, ", 0.0f);"));
  Line(absl::StrCat("TCVT(", pick, ", ", score, ", RoundMode::CAST_RINT);"));
  Line(absl::StrCat("TSEL(", pick, ", ", Mask(), ", ", x->e, ", ", pick, ");"));
  Line(absl::StrCat("TRESHAPE(", IntTmpK(15), ", ", pick, ");"));
  const std::string at = IntTmpK(16), out = int_values ? IntTmpK(17) : Scratch(21);
  Line(absl::StrCat("TGATHER(", at, ", ", x->off, ", ", IntTmpK(15), ");"));
  Line(absl::StrCat("TGATHER(", out, ", ", old, ", ", IntTmpK(15), ");"));
  std::string written = out;
  if (*stage != old) {
    written = *stage;
    Line(absl::StrCat("TCVT(", written, ", ", out, ", RoundMode::CAST_RINT);"));
  }
  Sync(Pipe::kMte3);
  Line(absl::StrCat("MSCATTER(", x->g, ", ", written, ", ", at, ");"));
  if (combine) {
    Sync(Pipe::kV);
    Line("}");
  }
  return absl::OkStatus();
}

// PTO-ISA keeps float and integer tiles apart (TRESHAPE), so the bits are
// an int32 Tile at the f32 tile's UB address (TASSIGN) on the device; the
// CPU simulation gives each tile its own storage and ignores TASSIGN, so
// there the bits pass through a GM workspace (TSTORE f32, TLOAD int32).
// Exact: -0.0, -inf and a NaN with its sign set give 1 (FP16 and BF16
// values keep their sign in the f32 tiles that hold them).
absl::Status FunctionEmitter::EmitSignbit(const PtoInstr& in) {
  if (kind_[in.dst] != Kind::kFull) return Unsupported(in.op, "into a row tile");
  const std::string x = FullOperand(in.srcs[0], 1);
  const std::string bits = BitsView(x);
  need_sim_ws_ = true;
  Directive("#if defined(__CPU_SIM)");
  Sync(Pipe::kMte3);
  Line(absl::StrCat("TSTORE(", WorkspaceF32(), ", ", x, ");"));
  Sync(Pipe::kMte2);
  Line(absl::StrCat("TLOAD(", bits, ", ", WorkspaceI32(), ");"));
  Sync(Pipe::kV);
  Directive("#endif");
  IntCompareFlat(FlatI(bits), "LT", "0", T(in.dst));
  return absl::OkStatus();
}

ascend::ScanIndex FunctionEmitter::ScanIndexTiles() {
  ascend::ScanIndex index{Scratch(2), IntTmpK(2), ""};
  need_index_ = true;
  Line("TCI<IndexInt, int32_t, 0>(iidx, 0);");
  Line("TCVT(fidx, iidx, RoundMode::CAST_NONE);");
  Line(absl::StrCat("TCOLEXPAND(", index.col, ", fidx);"));
  index.before_flat = FlatI(index.before);
  Line(absl::StrCat("TCI<FlatInt, int32_t, 0>(", index.before_flat, ", -1);"));
  Line(absl::StrCat("TRESHAPE(", index.before, ", ", index.before_flat, ");"));
  return index;
}

absl::Status FunctionEmitter::EmitScan(const PtoInstr& in) {
  const bool last = in.op == PtoOpcode::kTRedLast;
  if (cols_ == 1) {  // one column: the row tiles are full ones (PlanTiles)
    Line(last ? absl::StrCat("TMULS(", T(in.dst), ", ", T(in.srcs[0]), ", 1.0f);")
              : absl::StrCat(in.op == PtoOpcode::kTCumProd ? "TMUL(" : "TADD(", T(in.dst), ", ",
                             T(in.srcs[0]), ", ", T(in.srcs[1]), ");"));
    return absl::OkStatus();
  }
  if (kind_[in.srcs[0]] != Kind::kFull || kind_[in.dst] != (last ? Kind::kRow : Kind::kFull) ||
      (!last && kind_[in.srcs[1]] != Kind::kRow)) {
    return Unsupported(in.op, "of other than a full tile with a row tile's carry");
  }
  const ascend::ScanIndex index = ScanIndexTiles();
  const ascend::FlatView flat = [this](const std::string& full) { return Flat(full); };
  if (last) {
    ascend::EmitLastColumn(*this, flat, [this](const std::string& full) { return FlatI(full); },
                           T(in.dst), T(in.srcs[0]), index,
                           fn_.runtime_extents ? absl::StrCat("static_cast<int32_t>(", ValidCols(), ")")
                                               : absl::StrCat(cols_));
  } else {
    ascend::EmitScanLastDim(*this, flat, in.op == PtoOpcode::kTCumProd, T(in.dst),
                            T(in.srcs[0]), T(in.srcs[1]), index, cols_);
  }
  return absl::OkStatus();
}

absl::Status FunctionEmitter::EmitCompute(const PtoInstr& in) {
  const std::string d = T(in.dst);
  auto src = [&](int k) { return T(in.srcs[k]); };
  auto is_row = [&](int t) { return kind_[t] == Kind::kRow; };
  Sync(Pipe::kV);
  if (in.op == PtoOpcode::kTArgFirst || in.op == PtoOpcode::kTArgSel) return EmitArg(in);
  if (IsIntInstr(in)) return EmitIntCompute(in);
  switch (in.op) {
    case PtoOpcode::kTAdd: case PtoOpcode::kTSub: case PtoOpcode::kTMul:
    case PtoOpcode::kTDiv: case PtoOpcode::kTMax: case PtoOpcode::kTMin: {
      const std::string name = PtoOpcodeName(in.op);
      const bool r0 = is_row(in.srcs[0]), r1 = is_row(in.srcs[1]);
      // PTO-ISA's TMAX/TMIN (the CPU simulation's std::max/std::min) give
      // their first operand where the other is NaN or both are equal (-0.0
      // and +0.0): into a full tile, of the operands as full tiles, the
      // second first (the host's zero), into scratch; then each operand's
      // NaN is selected in (NaN is where !(x <= inf)).
      if ((in.op == PtoOpcode::kTMax || in.op == PtoOpcode::kTMin) && !is_row(in.dst) &&
          exact_extrema_) {
        used_extrema_scratch_ = true;
        const std::string inf = FloatLiteral(std::numeric_limits<double>::infinity());
        const std::string a = FullOperand(in.srcs[0], 2), b = FullOperand(in.srcs[1], 3);
        const std::string out = Tmp();
        Line(absl::StrCat(name, "(", out, ", ", b, ", ", a, ");"));
        Select(out, a, "LE", inf, out, a);
        Select(d, b, "LE", inf, out, b);
        break;
      }
      if (r0 == r1 || is_row(in.dst)) {
        if (r0 != r1 || is_row(in.dst) != r0) {
          return Unsupported(in.op, "mixing row and full tiles into a row tile");
        }
        Line(absl::StrCat(name, "(", d, ", ", src(0), ", ", src(1), ");"));
        break;
      }
      const std::string rowexp = absl::StrCat("TROWEXPAND", name.substr(1));
      if (r1) {
        Line(absl::StrCat(rowexp, "(", d, ", ", src(0), ", ", src(1), ");"));
      } else if (in.op != PtoOpcode::kTSub && in.op != PtoOpcode::kTDiv) {
        Line(absl::StrCat(rowexp, "(", d, ", ", src(1), ", ", src(0), ");"));
      } else {  // row op full: the row expanded into a full tile first
        const std::string tmp = Tmp();
        Line(absl::StrCat("TROWEXPAND(", tmp, ", ", src(0), ");"));
        Line(absl::StrCat(name, "(", d, ", ", tmp, ", ", src(1), ");"));
      }
      break;
    }
    case PtoOpcode::kTExp: case PtoOpcode::kTExpSoftmax:
      Line(absl::StrCat("TEXP(", d, ", ", src(0), ");"));
      break;
    case PtoOpcode::kTReshape:  // a bitcast to its own type (CheckBitcast)
      if (kind_[in.dst] != kind_[in.srcs[0]]) {
        return Unsupported(in.op, "(bitcast) between a row tile and a full tile");
      }
      if (in.dst != in.srcs[0]) Line(absl::StrCat("TRESHAPE(", d, ", ", src(0), ");"));
      break;
    case PtoOpcode::kTLog: case PtoOpcode::kTSqrt: case PtoOpcode::kTRsqrt:
    case PtoOpcode::kTNeg: case PtoOpcode::kTAbs: case PtoOpcode::kTRelu:
      Line(absl::StrCat(PtoOpcodeName(in.op), "(", d, ", ", src(0), ");"));
      break;
    case PtoOpcode::kTLog2: case PtoOpcode::kTLog10:  // log(x) * (1 / ln b)
      Line(absl::StrCat("TLOG(", d, ", ", src(0), ");"));
      Line(absl::StrCat("TMULS(", d, ", ", d, ", ",
                        FloatLiteral(in.op == PtoOpcode::kTLog2 ? 1.0 / std::log(2.0)
                                                                : 1.0 / std::log(10.0)),
                        ");"));
      break;
    case PtoOpcode::kTFill:
      if (in.scalars.empty()) return Unsupported(in.op, "without a value");
      Line(absl::StrCat("TEXPANDS(", d, ", ", Scalar(in, 0), ");"));
      break;
    case PtoOpcode::kTRecip:  // 1 / x correctly rounded (TRECIP is approximate on V)
      Line(absl::StrCat("TDIVS(", d, ", 1.0f, ", src(0), ");"));
      break;
    case PtoOpcode::kTMov: case PtoOpcode::kTCvt:  // f32 copy; FP16 rounds below
      if (in.op == PtoOpcode::kTCvt && in.dtype == pto::v1::DT_BOOL) {  // x != 0 (NaN: 1)
        if (kind_[in.dst] != Kind::kFull) return Unsupported(in.op, "to BOOL into a row tile");
        if (absl::Status s = EmitCompareFlat(Flat(FullOperand(in.srcs[0], 1)), "0.0f",
                                             PtoOpcode::kTCmpNe, d);
            !s.ok()) {
          return s;
        }
        break;
      }
      Line(absl::StrCat("TMULS(", d, ", ", src(0), ", 1.0f);"));
      break;
    case PtoOpcode::kTSel:
      if (absl::Status s = EmitSelect(in); !s.ok()) return s;
      break;
    case PtoOpcode::kTSignbit:
      if (absl::Status s = EmitSignbit(in); !s.ok()) return s;
      break;
    case PtoOpcode::kTCumSum: case PtoOpcode::kTCumProd: case PtoOpcode::kTRedLast:
      if (absl::Status s = EmitScan(in); !s.ok()) return s;
      break;
    case PtoOpcode::kTArange: {
      // start + step * (a0 + i): TCI's int32 indices from the task's offset,
      // converted exactly (below 2^24), TMULS, TADDS, moved into the tile.
      if (rank_ != 1 || in.scalars.size() < 2) return Unsupported(in.op, "other than rank 1");
      need_index_ = true;
      Line("TCI<IndexInt, int32_t, 0>(iidx, static_cast<int32_t>(args[0]));");
      Line("TCVT(fidx, iidx, RoundMode::CAST_NONE);");
      Line(absl::StrCat("TMULS(fidx, fidx, ", Scalar(in, 1), ");"));
      Line(absl::StrCat("TADDS(fidx, fidx, ", Scalar(in, 0), ");"));
      Line(absl::StrCat("TMOV(", d, ", fidx);"));
      break;
    }
    case PtoOpcode::kTPhilox:  // (PlanTiles refuses them first)
    case PtoOpcode::kTPhiloxNormal:
      return Unsupported(in.op, AscendUnmappedReason(in.op));
    case PtoOpcode::kTAddS: case PtoOpcode::kTSubS: case PtoOpcode::kTMulS:
    case PtoOpcode::kTDivS: case PtoOpcode::kTMaxS: case PtoOpcode::kTMinS:
      Line(absl::StrCat(PtoOpcodeName(in.op), "(", d, ", ", src(0), ", ", Scalar(in, 0), ");"));
      break;
    case PtoOpcode::kTRSubS:  // s - x == s + (-x), the same rounding
      Line(absl::StrCat("TNEG(", d, ", ", src(0), ");"));
      Line(absl::StrCat("TADDS(", d, ", ", d, ", ", Scalar(in, 0), ");"));
      break;
    case PtoOpcode::kTRDivS:
      Line(absl::StrCat("TDIVS(", d, ", ", Scalar(in, 0), ", ", src(0), ");"));
      break;
    case PtoOpcode::kTClip:  // min(max(x, lo), hi)
      Line(absl::StrCat("TMAXS(", d, ", ", src(0), ", ", Scalar(in, 0), ");"));
      Line(absl::StrCat("TMINS(", d, ", ", d, ", ", Scalar(in, 1), ");"));
      break;
    case PtoOpcode::kTSigmoid: {
      // exp(min(x, 0)) / (1 + exp(-|x|)): nothing overflows, and a large
      // negative x gives its tiny value, not 1 / inf.
      const std::string tmp = Tmp();
      Line(absl::StrCat("TABS(", tmp, ", ", src(0), ");"));
      Line(absl::StrCat("TNEG(", tmp, ", ", tmp, ");"));
      Line(absl::StrCat("TEXP(", tmp, ", ", tmp, ");"));
      Line(absl::StrCat("TADDS(", tmp, ", ", tmp, ", 1.0f);"));
      Line(absl::StrCat("TMINS(", d, ", ", src(0), ", 0.0f);"));
      Line(absl::StrCat("TEXP(", d, ", ", d, ");"));
      Line(absl::StrCat("TDIV(", d, ", ", d, ", ", tmp, ");"));
      break;
    }
    case PtoOpcode::kTRedSum: case PtoOpcode::kTRedMax: case PtoOpcode::kTRedMin: {
      const char* what = in.op == PtoOpcode::kTRedSum   ? "SUM"
                         : in.op == PtoOpcode::kTRedMax ? "MAX"
                                                        : "MIN";
      const bool row = in.reduce_dim == rank_ - 1;
      auto reduce = [&](const char* how, const std::string& to, const std::string& from) {
        Line(row ? absl::StrCat("TROW", how, "(", to, ", ", from, ", ", Tmp(), ");")
                 : absl::StrCat("TCOL", how, "(", to, ", ", from, ");"));
      };
      reduce(what, d, src(0));
      if (in.op == PtoOpcode::kTRedSum || kind_[in.dst] == Kind::kFull || !exact_extrema_) break;
      used_extrema_scratch_ = true;
      // TROWMAX/TCOLMAX/... (the CPU simulation's std::max/std::min in order)
      // keep a NaN only where it comes first: z = NaN where x is NaN, else 0
      // (NaN is where !(x <= inf)), summed along the dim, expanded with the
      // extremum, selected in where NaN and reduced again (equal values).
      const std::string inf = FloatLiteral(std::numeric_limits<double>::infinity());
      const std::string z = Scratch(2), e = Scratch(3), c = row ? RowScratch() : ColScratch();
      const std::string expand = row ? "TROWEXPAND(" : "TCOLEXPAND(";
      Line(absl::StrCat("TCMPS(", Mask(), ", ", Flat(src(0)), ", ", inf, ", CmpMode::LE);"));
      const std::string fz = Flat(z);
      SelectOneZero(fz, true);
      Line(absl::StrCat("TSEL(", fz, ", ", Mask(), ", ", fz, ", ", Flat(src(0)), ");"));
      Line(absl::StrCat("TRESHAPE(", z, ", ", fz, ");"));
      reduce("SUM", c, z);
      Line(absl::StrCat(expand, z, ", ", c, ");"));
      Line(absl::StrCat(expand, e, ", ", d, ");"));
      Select(e, z, "LE", inf, e, z);
      reduce(what, d, e);
      break;
    }
    case PtoOpcode::kTRedProd: {
      // exp(sum(log|x|)) times (-1)^(the count of negatives): zeros give 0
      // (log 0 = -inf), infinities inf, 0 * inf and NaN give NaN. A value
      // counts as negative where min(x, 1 / x) < 0, its sign bit: -0.0 too
      // (1 / -0.0 = -inf), so a product with a -0.0 factor has torch's sign.
      // The count's parity: expanded back to full tiles,
      // 1 - 2 (c - 2 floor(c / 2)), reduced by TROWMAX/TCOLMAX (equal along
      // the dim).
      const bool row = in.reduce_dim == rank_ - 1;
      const std::string x = src(0);
      if (kind_[in.srcs[0]] != Kind::kFull) return Unsupported(in.op, "of a row tile");
      const std::string l = Scratch(2), neg = Scratch(3), e = Scratch(4);
      const std::string c = kind_[in.dst] == Kind::kRow   ? RowScratch()
                            : kind_[in.dst] == Kind::kCol ? ColScratch()
                                                          : Scratch(7);
      auto reduce = [&](const char* what, const std::string& to, const std::string& from) {
        Line(row ? absl::StrCat("TROW", what, "(", to, ", ", from, ", ", Tmp(), ");")
                 : absl::StrCat("TCOL", what, "(", to, ", ", from, ");"));
      };
      Line(absl::StrCat("TDIVS(", l, ", 1.0f, ", x, ");"));
      Line(absl::StrCat("TMIN(", l, ", ", l, ", ", x, ");"));
      Line(absl::StrCat("TCMPS(", Mask(), ", ", Flat(l), ", 0.0f, CmpMode::LT);"));
      const std::string fneg = Flat(neg);
      SelectOneZero(fneg, false);
      Line(absl::StrCat("TRESHAPE(", neg, ", ", fneg, ");"));
      Line(absl::StrCat("TABS(", l, ", ", x, ");"));
      Line(absl::StrCat("TLOG(", l, ", ", l, ");"));
      reduce("SUM", d, l);
      Line(absl::StrCat("TEXP(", d, ", ", d, ");"));
      reduce("SUM", c, neg);
      if (kind_[in.dst] == Kind::kFull) {
        Line(absl::StrCat("TMULS(", e, ", ", c, ", 1.0f);"));
      } else {
        Line(absl::StrCat(row ? "TROWEXPAND(" : "TCOLEXPAND(", e, ", ", c, ");"));
      }
      Line(absl::StrCat("TMULS(", neg, ", ", e, ", 0.5f);"));
      ascend::EmitRoundIntegral(*this, neg, neg, "CAST_FLOOR", Scratch(5), Scratch(6));
      Line(absl::StrCat("TMULS(", neg, ", ", neg, ", 4.0f);"));
      Line(absl::StrCat("TMULS(", e, ", ", e, ", -2.0f);"));
      Line(absl::StrCat("TADD(", e, ", ", e, ", ", neg, ");"));
      Line(absl::StrCat("TADDS(", e, ", ", e, ", 1.0f);"));
      reduce("MAX", c, e);
      Line(absl::StrCat("TMUL(", d, ", ", d, ", ", c, ");"));
      break;
    }
    default:
      if (ascend::IsAscendComposition(in.op)) {
        for (int t : in.srcs) {
          if (kind_[t] != Kind::kFull) return Unsupported(in.op, "on a row tile");
        }
        if (kind_[in.dst] != Kind::kFull) return Unsupported(in.op, "into a row tile");
        const bool immediate = !in.scalars.empty() &&
                               (in.scalar_dynamic.empty() || in.scalar_dynamic[0] < 0);
        ascend::EmitAscendComposition(*this, in.op, d, src(0), in.srcs.size() > 1 ? src(1) : "",
                                      in.scalars.empty() ? "" : Scalar(in, 0),
                                      immediate ? &in.scalars[0] : nullptr);
        break;
      }
      if (Compares(in.op)) {
        if (absl::Status s = EmitCompare(in); !s.ok()) return s;
        break;
      }
      return Unsupported(in.op, "has no PTO-ISA mapping in this target yet");
  }
  if (in.dtype == pto::v1::DT_BOOL &&
      (in.op == PtoOpcode::kTFill || in.op == PtoOpcode::kTArange)) {
    // A created BOOL value is its number != 0, as 1.0/0.0.
    if (kind_[in.dst] != Kind::kFull) return Unsupported(in.op, "of BOOL values into a row tile");
    if (absl::Status s = EmitCompareFlat(Flat(d), "0.0f", PtoOpcode::kTCmpNe, d); !s.ok()) {
      return s;
    }
  }
  if (in.dtype == pto::v1::DT_FP16) {
    if (kind_[in.dst] == Kind::kCol) return Unsupported(in.op, "with an FP16 column result");
    RoundToHalf(in.dst);
  } else if (in.dtype == pto::v1::DT_BF16) {
    return RoundToBf16(in);
  } else if (!StoredAsF32(in.dtype) &&
             !(NarrowInt(in.dtype) &&
               (in.op == PtoOpcode::kTSel || in.op == PtoOpcode::kTMov ||
                in.op == PtoOpcode::kTMax || in.op == PtoOpcode::kTMin ||
                in.op == PtoOpcode::kTRedMax || in.op == PtoOpcode::kTRedMin))) {
    // (INT8/INT16/UINT8 values in f32 tiles: selections, copies and
    // extrema are exact.)
    return Unsupported(in.op, absl::StrCat("with a ", pto::v1::DataType_Name(in.dtype),
                                           " result"));
  }
  return absl::OkStatus();
}

absl::Status FunctionEmitter::RoundToBf16(const PtoInstr& in) {
  switch (kind_[in.dst]) {
    case Kind::kFull:
      ascend::EmitBf16Round(*this, T(in.dst));
      break;
    case Kind::kRow: {  // expanded, rounded, and each row's (equal) maximum
      const std::string full = Scratch(2);
      Line(absl::StrCat("TROWEXPAND(", full, ", ", T(in.dst), ");"));
      ascend::EmitBf16Round(*this, full);
      Line(absl::StrCat("TROWMAX(", T(in.dst), ", ", full, ", ", Tmp(), ");"));
      break;
    }
    case Kind::kCol: {  // likewise down the columns
      const std::string full = Scratch(2);
      Line(absl::StrCat("TCOLEXPAND(", full, ", ", T(in.dst), ");"));
      ascend::EmitBf16Round(*this, full);
      Line(absl::StrCat("TCOLMAX(", T(in.dst), ", ", full, ");"));
      break;
    }
  }
  return absl::OkStatus();
}

absl::Status FunctionEmitter::EmitInstr(int i) {
  const PtoInstr& in = fn_.body[i];
  if (in.op == PtoOpcode::kTLoad) return EmitGm(in, i, kind_[in.dst]);
  if (in.op == PtoOpcode::kTStore) return EmitGm(in, i, kind_[in.srcs[0]]);
  if (in.op == PtoOpcode::kMGather) return EmitGather(in, i);
  if (in.op == PtoOpcode::kMScatter) return EmitScatter(in, i);
  for (int s : in.srcs) {
    if (s < 0 || s >= fn_.num_tiles) return absl::InternalError("bad source tile");
  }
  if (in.dst < 0 || in.dst >= fn_.num_tiles) return absl::InternalError("bad destination tile");
  return EmitCompute(in);
}

absl::StatusOr<std::string> FunctionEmitter::Emit() {
  if (fn_.core == pto::v1::CORE_TYPE_CUBE) {
    return EmitAscendCubeFunction(p_, index_);
  }
  if (IsAscendSortFunction(p_, index_)) return EmitAscendSortFunction(p_, index_);
  if (absl::Status s = CheckBitcast(); !s.ok()) return s;
  if (absl::Status s = PlanTiles(); !s.ok()) return s;
  if (fn_.runtime_extents) {
    // The tiles' valid region is the task's extents: the flattened rows are
    // one run only where the middle dims are the whole tile's.
    for (int d = 1; d + 1 < rank_; ++d) {
      if (fn_.tile[d] != 1) {
        return Unsupported(PtoOpcode::kTLoad, absl::StrCat("with run-time tile extents over a rank-",
                                                            rank_, " tile of more than one row block"));
      }
    }
  }
  for (int i = 0; i < static_cast<int>(fn_.body.size()); ++i) {
    if (absl::Status s = EmitInstr(i); !s.ok()) return s;
  }
  // bf16_round (ascend_bf16.h): its statements, made before the UB plan
  // (they name scratch tiles), from and to PIPE_V.
  std::string bf16_round;
  if (need_bf16_round_) {
    std::string body = std::move(body_);
    body_.clear();
    const Pipe pipe = pipe_;
    pipe_ = Pipe::kV;
    ascend::EmitBf16RoundFunction(*this, "x");
    pipe_ = pipe;
    bf16_round = absl::StrCat("#if !PTO_BF16_NATIVE\n",
                              "  auto bf16_round = [&](Full& x) __attribute__((noinline)) {\n",
                              body_, "  };\n#endif\n");
    body_ = std::move(body);
  }
  // The UB plan: the program's tiles in order, then the scratch tiles. Rows
  // are padded to 8 (a row tile's 32 bytes), so that full and row tiles
  // have the same row count, as TROW* require.
  const int64_t cols_pad = RoundUp(cols_, kUbAlign / 4);
  const int64_t rows_pad = RoundUp(rows_, kUbAlign / 4);
  const int64_t half_cols_pad = RoundUp(cols_, kUbAlign / 2);
  // The valid region: the tile, or (run-time extents) the task's extents.
  const bool dyn = fn_.runtime_extents;
  const std::string vr = dyn && rank_ > 1 ? "DYNAMIC" : absl::StrCat(rows_);
  const std::string vc = dyn ? "DYNAMIC" : absl::StrCat(cols_);
  const std::string full_ctor =
      !dyn ? "" : rank_ > 1 ? absl::StrCat("(", ValidRows(), ", ", ValidCols(), ")")
                            : absl::StrCat("(", ValidCols(), ")");
  const std::string row_ctor = dyn && rank_ > 1 ? absl::StrCat("(", ValidRows(), ")") : "";
  const std::string col_ctor = dyn ? absl::StrCat("(", ValidCols(), ")") : "";
  std::string decl = absl::StrCat(
      "  using Full = Tile<TileType::Vec, float, ", rows_pad, ", ", cols_pad,
      ", BLayout::RowMajor, ", vr, ", ", vc, ">;\n");
  bool any_row = false, any_col = false;
  for (Kind k : kind_) {
    any_row = any_row || k == Kind::kRow;
    any_col = any_col || k == Kind::kCol;
  }
  if (any_row) {
    absl::StrAppend(&decl, "  using Row = Tile<TileType::Vec, float, ", rows_pad,
                    ", 1, BLayout::ColMajor, ", vr, ", 1>;\n");
  }
  if (any_col) {
    absl::StrAppend(&decl, "  using Col = Tile<TileType::Vec, float, 1, ", cols_pad,
                    ", BLayout::RowMajor, 1, ", vc, ">;\n");
  }
  if (need_half_) {
    absl::StrAppend(&decl, "  using FullHalf = Tile<TileType::Vec, half, ", rows_pad, ", ",
                    half_cols_pad, ", BLayout::RowMajor, ", vr, ", ", vc, ">;\n");
  }
  int64_t ub = 0;
  std::map<std::string, int64_t> address;
  auto place = [&](const char* type, const std::string& name, int64_t bytes,
                   const std::string& ctor = "") {
    absl::StrAppend(&decl, "  ", type, " ", name, ctor, ";\n  TASSIGN(", name,
                    absl::StrFormat(", 0x%x);\n", ub));
    address[name] = ub;
    ub += RoundUp(bytes, kUbAlign);
  };
  // Integer tiles: int32 ones of the f32 tiles' shapes, int64 ones for
  // INT64 values moved between GM buffers (and staging an arg reduction's
  // positions).
  bool int_full = need_int_ || need_itmp_.size() > 1 || !bits_views_.empty();
  bool int_row = need_int_row_;
  bool long_full = need_long_, long_row = need_long_row_;
  bool int_col = need_int_col_, long_col = need_long_col_;
  for (int t = 0; t < fn_.num_tiles; ++t) {
    if (elem_[t] == Elem::kF32 || elem_[t] == Elem::kWords) continue;
    const bool i32 = elem_[t] == Elem::kI32;
    switch (kind_[t]) {
      case Kind::kFull: (i32 ? int_full : long_full) = true; break;
      case Kind::kRow: (i32 ? int_row : long_row) = true; break;
      case Kind::kCol: (i32 ? int_col : long_col) = true; break;
    }
  }
  if (int_col) {
    absl::StrAppend(&decl, "  using ColInt = Tile<TileType::Vec, int32_t, 1, ", cols_pad,
                    ", BLayout::RowMajor, 1, ", vc, ">;\n");
  }
  if (long_col) {
    absl::StrAppend(&decl, "  using ColLong = Tile<TileType::Vec, int64_t, 1, ", cols_pad,
                    ", BLayout::RowMajor, 1, ", vc, ">;\n");
  }
  if (int_full) {
    absl::StrAppend(&decl, "  using FullInt = Tile<TileType::Vec, int32_t, ", rows_pad, ", ",
                    cols_pad, ", BLayout::RowMajor, ", vr, ", ", vc, ">;\n");
  }
  if (int_row) {
    absl::StrAppend(&decl, "  using RowInt = Tile<TileType::Vec, int32_t, ", rows_pad,
                    ", 1, BLayout::ColMajor, ", vr, ", 1>;\n");
  }
  if (long_full) {
    absl::StrAppend(&decl, "  using FullLong = Tile<TileType::Vec, int64_t, ", rows_pad, ", ",
                    cols_pad, ", BLayout::RowMajor, ", vr, ", ", vc, ">;\n");
  }
  if (long_row) {
    absl::StrAppend(&decl, "  using RowLong = Tile<TileType::Vec, int64_t, ", rows_pad,
                    ", 1, BLayout::ColMajor, ", vr, ", 1>;\n");
  }
  // Words tiles (ascend_int64.h): INT64 values as int32 pairs, by shape.
  std::set<int> words_kinds = words_flat_;
  for (const auto& [k, n] : words_scratch_) words_kinds.insert(k);
  for (int t = 0; t < fn_.num_tiles; ++t) {
    if (elem_[t] == Elem::kWords) words_kinds.insert(static_cast<int>(kind_[t]));
  }
  const std::string vc2 = dyn ? "DYNAMIC" : absl::StrCat(2 * cols_);
  auto words_type = [&](Kind k) {
    return absl::StrCat(k == Kind::kRow ? "Row" : k == Kind::kCol ? "Col" : "Full", "Words");
  };
  auto words_ctor = [&](Kind k) -> std::string {
    if (!dyn) return "";
    if (k == Kind::kRow) return row_ctor;
    const std::string c2 = absl::StrCat(ValidCols(), " * 2");
    return k == Kind::kFull && rank_ > 1 ? absl::StrCat("(", ValidRows(), ", ", c2, ")")
                                         : absl::StrCat("(", c2, ")");
  };
  auto words_bytes = [&](Kind k) -> int64_t {
    return k == Kind::kRow ? rows_pad * ascend::kRowWordsCols * 4
           : k == Kind::kCol ? 2 * cols_pad * 4
                             : rows_pad * 2 * cols_pad * 4;
  };
  for (int ki : words_kinds) {
    const Kind k = static_cast<Kind>(ki);
    for (const char* el : {"int32_t", "float"}) {
      const std::string name = absl::StrCat(words_type(k), el[0] == 'f' ? "F" : "");
      std::string shape;
      switch (k) {
        case Kind::kRow:
          shape = absl::StrCat(rows_pad, ", ", ascend::kRowWordsCols, ", BLayout::RowMajor, ", vr, ", 2");
          break;
        case Kind::kCol:
          shape = absl::StrCat("1, ", 2 * cols_pad, ", BLayout::RowMajor, 1, ", vc2);
          break;
        case Kind::kFull:
          shape = absl::StrCat(rows_pad, ", ", 2 * cols_pad, ", BLayout::RowMajor, ", vr, ", ", vc2);
          break;
      }
      absl::StrAppend(&decl, "  using ", name, " = Tile<TileType::Vec, ", el, ", ", shape, ">;\n");
    }
  }
  for (int t = 0; t < fn_.num_tiles; ++t) {
    if (elem_[t] == Elem::kWords) {
      place(words_type(kind_[t]).c_str(), T(t), words_bytes(kind_[t]), words_ctor(kind_[t]));
      continue;
    }
    if (elem_[t] != Elem::kF32) {
      const bool i32 = elem_[t] == Elem::kI32;
      const int64_t size = i32 ? 4 : 8;
      switch (kind_[t]) {
        case Kind::kFull:
          place(i32 ? "FullInt" : "FullLong", T(t), rows_pad * cols_pad * size, full_ctor);
          break;
        case Kind::kRow: place(i32 ? "RowInt" : "RowLong", T(t), rows_pad * size, row_ctor); break;
        case Kind::kCol: place(i32 ? "ColInt" : "ColLong", T(t), cols_pad * size, col_ctor); break;
      }
      continue;
    }
    switch (kind_[t]) {
      case Kind::kFull: place("Full", T(t), rows_pad * cols_pad * 4, full_ctor); break;
      case Kind::kRow: place("Row", T(t), rows_pad * 4, row_ctor); break;
      case Kind::kCol: place("Col", T(t), cols_pad * 4, col_ctor); break;
    }
  }
  const int64_t half_rows_pad = RoundUp(rows_, kUbAlign / 2);
  if (need_half_row_) {
    absl::StrAppend(&decl, "  using RowHalf = Tile<TileType::Vec, half, ", half_rows_pad,
                    ", 1, BLayout::ColMajor, ", vr, ", 1>;\n");
  }
  if (need_row_nd_) {
    absl::StrAppend(&decl, "  using RowNd = Tile<TileType::Vec, float, ", rows_pad, ", ",
                    kUbAlign / 4, ", BLayout::RowMajor, ", vr, ", 1>;\n");
  }
  for (size_t k = 0; k < need_tmp_.size(); ++k) {
    if (need_tmp_[k]) {
      place("Full", k == 0 ? "tmp" : absl::StrCat("tmp", k + 1), rows_pad * cols_pad * 4, full_ctor);
    }
  }
  if (need_int_) place("FullInt", "itmp", rows_pad * cols_pad * 4, full_ctor);
  for (size_t k = 1; k < need_itmp_.size(); ++k) {
    if (need_itmp_[k]) {
      place("FullInt", absl::StrCat("itmp", k + 1), rows_pad * cols_pad * 4, full_ctor);
    }
  }
  for (const auto& [ki, n] : words_scratch_) {
    const Kind k = static_cast<Kind>(ki);
    const std::string lower = absl::AsciiStrToLower(WordsSuffix(k));
    place(absl::StrCat(words_type(k), n == 0 ? "F" : "").c_str(),
          n == 0 ? absl::StrCat("w", lower, "f") : absl::StrCat("w", lower, n), words_bytes(k),
          words_ctor(k));
  }
  for (int ki : words_flat_) {
    const Kind k = static_cast<Kind>(ki);
    absl::StrAppend(&decl, "  using FlatWords", WordsSuffix(k), " = Tile<TileType::Vec, int32_t, 1, ",
                    words_bytes(k) / 4, ">;\n  FlatWords", WordsSuffix(k), " fw",
                    absl::AsciiStrToLower(WordsSuffix(k)), ";  // a view (TRESHAPE)\n");
  }
  if (need_int_row_) place("RowInt", "irow", rows_pad * 4, row_ctor);
  if (need_long_) place("FullLong", "ltmp", rows_pad * cols_pad * 8, full_ctor);
  if (need_long_row_) place("RowLong", "lrow", rows_pad * 8, row_ctor);
  if (need_int_col_) place("ColInt", "icol", cols_pad * 4, col_ctor);
  if (need_long_nd_) {
    absl::StrAppend(&decl, "  using RowLongNd = Tile<TileType::Vec, int64_t, ", rows_pad, ", ",
                    kUbAlign / 8, ", BLayout::RowMajor, ", vr, ", 1>;\n");
    place("RowLongNd", "lrnd", rows_pad * kUbAlign, row_ctor);
  }
  if (need_long_col_) place("ColLong", "lcol", cols_pad * 8, col_ctor);
  if (need_i8_ || need_i16_) {
    const int64_t c8 = RoundUp(cols_, kUbAlign), c16 = RoundUp(cols_, kUbAlign / 2);
    if (need_i8_) {
      absl::StrAppend(&decl, "  using FullInt8 = Tile<TileType::Vec, int8_t, ", rows_pad, ", ", c8,
                      ", BLayout::RowMajor, ", vr, ", ", vc, ">;\n");
      place("FullInt8", "i8tmp", rows_pad * c8, full_ctor);
    }
    if (need_i16_) {
      absl::StrAppend(&decl, "  using FullInt16 = Tile<TileType::Vec, int16_t, ", rows_pad, ", ",
                      c16, ", BLayout::RowMajor, ", vr, ", ", vc, ">;\n");
      place("FullInt16", "i16tmp", rows_pad * c16 * 2, full_ctor);
    }
  }
  if (need_row_nd_) place("RowNd", "rnd", rows_pad * kUbAlign, row_ctor);
  if (need_half_row_) place("RowHalf", "hrow", half_rows_pad * 2, row_ctor);
  if (need_half_) place("FullHalf", "htmp", rows_pad * half_cols_pad * 2, full_ctor);
  if (need_bf16_) {
    absl::StrAppend(&decl, "  using FullBf16 = Tile<TileType::Vec, bfloat16_t, ", rows_pad, ", ",
                    half_cols_pad, ", BLayout::RowMajor, ", vr, ", ", vc, ">;\n");
    place("FullBf16", "bftmp", rows_pad * half_cols_pad * 2, full_ctor);
  }
  if (need_bf16_row_) {
    absl::StrAppend(&decl, "  using RowBf16 = Tile<TileType::Vec, bfloat16_t, ", half_rows_pad,
                    ", 1, BLayout::ColMajor, ", vr, ", 1>;\n");
    place("RowBf16", "bfrow", half_rows_pad * 2, row_ctor);
  }
  if (need_i16_row_) {
    absl::StrAppend(&decl, "  using RowInt16 = Tile<TileType::Vec, int16_t, ", half_rows_pad,
                    ", 1, BLayout::ColMajor, ", vr, ", 1>;\n");
    place("RowInt16", "i16row", half_rows_pad * 2, row_ctor);
  }
  if (need_bf16_col_) {
    absl::StrAppend(&decl, "  using ColBf16 = Tile<TileType::Vec, bfloat16_t, 1, ", half_cols_pad,
                    ", BLayout::RowMajor, 1, ", vc, ">;\n");
    place("ColBf16", "bfcol", half_cols_pad * 2, col_ctor);
  }
  if (need_i16_col_) {
    absl::StrAppend(&decl, "  using ColInt16 = Tile<TileType::Vec, int16_t, 1, ", half_cols_pad,
                    ", BLayout::RowMajor, 1, ", vc, ">;\n");
    place("ColInt16", "i16col", half_cols_pad * 2, col_ctor);
  }
  for (const auto& [view, full] : bits_views_) {  // (EmitSignbit) no UB of their own
    absl::StrAppend(&decl, "  FullInt ", view, full_ctor, ";\n  TASSIGN(", view,
                    absl::StrFormat(", 0x%x);  // %s's bytes\n", address.at(full), full));
  }
  if (need_ws_) {
    // A GM workspace of one full tile as f32 and as int32: BF16's words path
    // (ascend_bf16.h) and TSIGNBIT in the CPU simulation.
    const std::string ws_shape = absl::StrCat("Shape<1, 1, 1, ", vr, ", ", vc, ">");
    const std::string ws_stride = absl::StrCat("Stride<1, 1, 1, ", cols_pad, ", 1>");
    std::string ws_ctor;
    if (dyn) {
      ws_ctor = absl::StrCat(", ", ws_shape, "(",
                             rank_ > 1 ? absl::StrCat(ValidRows(), ", ") : "", ValidCols(), "), {}");
    }
    absl::StrAppend(
        &decl, need_sim_ws_ ? "#if defined(__CPU_SIM)\n" : "#if !PTO_BF16_NATIVE\n",
        "  alignas(64) int32_t bf16_ws[", rows_pad * cols_pad,
        "];\n", "  using WsF = GlobalTensor<float, ", ws_shape, ", ", ws_stride, ", Layout::ND>;\n",
        "  using WsI = GlobalTensor<int32_t, ", ws_shape, ", ", ws_stride, ", Layout::ND>;\n",
        "  WsF wsf(reinterpret_cast<float*>(bf16_ws)", ws_ctor, ");\n",
        "  WsI wsi(bf16_ws", ws_ctor, ");\n", "#endif\n");
  }
  // Comparisons: flat [1, n] views (n = rows8 * cols8) and their bit mask,
  // one bit per element in row-major order (TCMPS writes it, TSEL reads it).
  const int64_t flat_n = rows_pad * cols_pad;
  const int64_t mask_bytes = flat_n / 8;
  if (need_mask_ || need_one_zero_ || !flat_views_.empty()) {
    absl::StrAppend(&decl, "  using Flat = Tile<TileType::Vec, float, 1, ", flat_n, ">;\n");
  }
  if (need_mask_) {
    absl::StrAppend(&decl, "  using Mask = Tile<TileType::Vec, uint8_t, 1, ", RoundUp(mask_bytes, kUbAlign),
                    ", BLayout::RowMajor, 1, ", mask_bytes, ">;\n");
    place("Mask", "mask", mask_bytes);
  }
  if (need_one_zero_) {
    place("Flat", "fone", flat_n * 4);
    place("Flat", "fzero", flat_n * 4);
  }
  for (const std::string& f : flat_views_) absl::StrAppend(&decl, "  Flat ", f, ";  // a view (TRESHAPE)\n");
  if (!int_flat_views_.empty()) {
    absl::StrAppend(&decl, "  using FlatInt = Tile<TileType::Vec, int32_t, 1, ", flat_n, ">;\n");
  }
  for (const std::string& f : int_flat_views_) {
    absl::StrAppend(&decl, "  FlatInt ", f, ";  // a view (TRESHAPE)\n");
  }
  if (need_byte_) {
    const int64_t byte_cols = RoundUp(cols_, kUbAlign);
    absl::StrAppend(&decl, "  using FullByte = Tile<TileType::Vec, uint8_t, ", rows_pad, ", ", byte_cols,
                    ", BLayout::RowMajor, ", vr, ", ", vc, ">;\n");
    place("FullByte", "btmp", rows_pad * byte_cols, full_ctor);
  }
  if (need_row_tmp_) place("Row", "rtmp", rows_pad * 4, row_ctor);
  for (size_t k = 1; k < need_rtmp_.size(); ++k) {
    if (need_rtmp_[k]) place("Row", absl::StrCat("rtmp", k + 1), rows_pad * 4, row_ctor);
  }
  if (need_flat_max_) {  // a flat view's row maximum
    absl::StrAppend(&decl, "  using FlatMax = Tile<TileType::Vec, float, ", kUbAlign / 4,
                    ", 1, BLayout::ColMajor, 1, 1>;\n");
    place("FlatMax", "fmax", kUbAlign);
  }
  if (need_col_tmp_) place("Col", "ctmp", cols_pad * 4, col_ctor);
  for (size_t k = 1; k < need_ctmp_.size(); ++k) {
    if (need_ctmp_[k]) place("Col", absl::StrCat("ctmp", k + 1), cols_pad * 4, col_ctor);
  }
  if (need_index_) {  // TARANGE's indices: one row
    absl::StrAppend(&decl, "  using IndexInt = Tile<TileType::Vec, int32_t, 1, ", cols_pad,
                    ", BLayout::RowMajor, 1, ", vc, ">;\n");
    absl::StrAppend(&decl, "  using Index = Tile<TileType::Vec, float, 1, ", cols_pad,
                    ", BLayout::RowMajor, 1, ", vc, ">;\n");
    place("IndexInt", "iidx", cols_pad * 4, col_ctor);
    place("Index", "fidx", cols_pad * 4, col_ctor);
  }
  if (ub > kAiCoreMemoryModel.ub_bytes) {
    over_ub_ = true;
    return absl::UnimplementedError(absl::StrCat(
        "ascend target: function @f", index_, " needs ", ub, " bytes of UB with its scratch "
        "tiles, more than the ", kAiCoreMemoryModel.ub_bytes, " an AI core has"));
  }
  std::vector<std::string> params;
  for (int b : buffers_) {
    params.push_back(absl::StrCat("__gm__ ", GmElem(p_.buffers[b].dtype), "* b", b));
  }
  params.push_back("__gm__ const int64_t* args");
  return absl::StrCat("// @f", index_, ": vector, tile [", absl::StrJoin(fn_.tile, ", "),
                      "] as [", rows_, ", ", cols_, "], ", ub, " bytes of UB\n",
                      "__global__ AICORE void pto_f", index_, "(", absl::StrJoin(params, ", "),
                      ") {\n", decl, bf16_round, body_, "}\n\n");
}

// The executor's view of block f: (buffers, args) -> the AICORE entry.
std::string Adapter(const PtoProgram& p, int f) {
  std::set<int> used;
  for (const PtoInstr& in : p.functions[f].body) {
    if (in.op == PtoOpcode::kTLoad || in.op == PtoOpcode::kTStore ||
        in.op == PtoOpcode::kMGather || in.op == PtoOpcode::kMScatter ||
        in.op == PtoOpcode::kMSort) {
      used.insert(in.buffer);
    }
  }
  std::vector<std::string> args;
  for (int b : used) {
    args.push_back(absl::StrCat("static_cast<", GmElem(p.buffers[b].dtype), "*>(buffers[", b,
                                "])"));
  }
  args.push_back("args");
  return absl::StrCat("static void pto_block_f", f,
                      "(void* const* buffers, const int64_t* args) {\n  pto_f", f, "(",
                      absl::StrJoin(args, ", "), ");\n}\n");
}

}  // namespace

absl::StatusOr<std::string> GenerateAscendSource(const PtoProgram& p) {
  std::string out = absl::StrCat(
      "// Generated by the PTO compiler (Ascend target, PTO-ISA). Do not edit.\n"
      "// kernel ", p.kernel_name, ", target ", p.target, "\n"
      "#include <pto/pto-inst.hpp>\n"
      "using namespace pto;\n\n");
  bool bf16 = false;
  for (const PtoBuffer& b : p.buffers) bf16 = bf16 || b.dtype == pto::v1::DT_BF16;
  for (const PtoFunction& f : p.functions) {
    for (const PtoInstr& in : f.body) bf16 = bf16 || in.dtype == pto::v1::DT_BF16;
  }
  if (bf16) absl::StrAppend(&out, ascend::Bf16Preamble());
  for (int f = 0; f < static_cast<int>(p.functions.size()); ++f) {
    FunctionEmitter exact(p, f, /*exact_extrema=*/true);
    absl::StatusOr<std::string> fn = exact.Emit();
    // A function whose UB cannot hold the exact extrema's scratch besides its
    // tiles takes PTO-ISA's TMAX/TMIN/TROWMAX/... as they are (docs/pto-isa.md).
    if (exact.ExtremaOverflowedUb()) fn = FunctionEmitter(p, f, false).Emit();
    if (!fn.ok()) return fn.status();
    absl::StrAppend(&out, *fn);
  }
  absl::StrAppend(&out,
                  "#ifdef __CPU_SIM\n"
                  "// The executor's C ABI (runtime/kernel_abi.h) over the AICORE entries.\n"
                  "#define PTO_EXPORT extern \"C\" __attribute__((visibility(\"default\")))\n"
                  "typedef void (*pto_block_fn)(void* const* buffers, const int64_t* args);\n"
                  "namespace {\n");
  for (int f = 0; f < static_cast<int>(p.functions.size()); ++f) {
    absl::StrAppend(&out, Adapter(p, f));
  }
  absl::StrAppend(&out, "const pto_block_fn kBlocks[] = {");
  for (size_t f = 0; f < p.functions.size(); ++f) {
    absl::StrAppend(&out, f == 0 ? "" : ", ", "pto_block_f", f);
  }
  absl::StrAppend(&out, p.functions.empty() ? "nullptr" : "", "};\n}  // namespace\n",
                  "PTO_EXPORT int pto_abi_version(void) { return ", PTO_KERNEL_FORMAT_VERSION,
                  "; }\n"
                  "PTO_EXPORT int pto_num_blocks(void) { return ",
                  p.functions.size(),
                  "; }\n"
                  "PTO_EXPORT pto_block_fn pto_block(int index) {\n"
                  "  return index >= 0 && index < pto_num_blocks() ? kBlocks[index] : nullptr;\n"
                  "}\n"
                  "#endif  // __CPU_SIM\n");
  return out;
}

}  // namespace pto::compiler
