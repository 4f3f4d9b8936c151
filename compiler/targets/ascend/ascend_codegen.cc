#include "compiler/targets/ascend/ascend_codegen.h"

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/dtype.h"
#include "compiler/targets/ascend/ascend_cube_codegen.h"
#include "compiler/targets/ascend/ascend_math.h"
#include "compiler/targets/host/host_function_plan.h"
#include "compiler/targets/memory_model.h"
#include "runtime/kernel_abi.h"

namespace pto::compiler {
namespace {

using host_plan::Access;
using host_plan::MakeAccess;
using host_plan::Viewed;
using ascend::FloatLiteral;

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
         op == PtoOpcode::kTRedMin || op == PtoOpcode::kTRedProd;
}

const char* GmElem(pto::v1::DataType dtype) {
  switch (dtype) {
    case pto::v1::DT_FP16: return "half";
    case pto::v1::DT_BOOL: return "uint8_t";
    default: return "float";
  }
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

// A tile's values are stored as f32 (BOOL as 0.0/1.0, exactly).
bool StoredAsF32(pto::v1::DataType t) {
  return t == pto::v1::DT_FP32 || t == pto::v1::DT_BOOL;
}

// One block function being emitted.
class FunctionEmitter : public ascend::VectorCode {
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
  absl::Status CheckIndexAndBitcast() const;
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
  // dst (full) = mask ? 1 : 0 (or 0 : 1 with `invert`).
  void SelectOneZero(const std::string& dst, bool invert);
  // A full uint8 scratch tile (BOOL data in GM).
  std::string ByteTmp() { need_byte_ = true; return "btmp"; }
  // A full int32 scratch tile (TCVT's rounding modes).
  std::string IntTmp() { need_int_ = true; return "itmp"; }
  std::string IntScratch() override { return IntTmp(); }
  void Select(const std::string& dst, const std::string& x, const char* mode,
              const std::string& c, const std::string& a, const std::string& b) override {
    Line(absl::StrCat("TCMPS(", Mask(), ", ", Flat(x), ", ", c, ", CmpMode::", mode, ");"));
    const std::string fa = Flat(a), fb = Flat(b), fd = Flat(dst);
    Line(absl::StrCat("TSEL(", fd, ", ", Mask(), ", ", fa, ", ", fb, ");"));
    Line(absl::StrCat("TRESHAPE(", dst, ", ", fd, ");"));
  }
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
  std::set<int> buffers_;
};

// MSORT: PTO-ISA's sorts (TSORT32 over 32-element blocks, TMRGSORT merging
// sorted lists) order score/index pairs descending, with the order of ties
// and of NaN target-defined; sort's contract (stable, NaN the largest, -0.0
// equal to 0.0, ascending or descending, INT64 positions) is not theirs.
// MGATHER, MSCATTER: PTO-ISA's take per-element indices whose meaning is
// target-defined (the CPU simulation's: unchecked linear offsets), ours
// INT64 coordinates along one dim, an index outside the dim reading 0 or
// writing nothing, scatter's add and multiply reducing duplicates in order;
// and INT64 index tiles are beyond the f32 tiles the target holds.
// TRESHAPE (bitcast) between two element types: PTO-ISA's TRESHAPE keeps
// float as float and integer as integer (the CPU simulation static_asserts
// it), so f32 bits read as INT32 (or back) have no instruction; between two
// float (or two integer) types, the f32 tiles hold the values widened (FP16
// as f32), not their bits. A bitcast to its own type is TRESHAPE
// (EmitCompute).
absl::Status FunctionEmitter::CheckIndexAndBitcast() const {
  for (size_t i = 0; i < fn_.body.size(); ++i) {
    const PtoInstr& in = fn_.body[i];
    switch (in.op) {
      case PtoOpcode::kMSort:
        return Unsupported(in.op, "(sort): PTO-ISA's TSORT32 and TMRGSORT sort descending "
                                  "with the order of ties and NaN target-defined, not "
                                  "stable with NaN the largest, and its positions are INT64");
      case PtoOpcode::kMGather:
      case PtoOpcode::kMScatter:
        return Unsupported(in.op, "(gather, index_select, scatter, index_copy, index_add): "
                                  "PTO-ISA's takes target-defined linear indices, not INT64 "
                                  "indices along a dim with out-of-range ones ignored, and the "
                                  "target holds no INT64 index tiles");
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
  rank_ = static_cast<int>(fn_.tile.size());
  if (rank_ == 0) return absl::UnimplementedError("ascend target: a rank-0 tile");
  cols_ = fn_.tile.back();
  for (int d = 0; d + 1 < rank_; ++d) rows_ *= fn_.tile[d];
  kind_.assign(fn_.num_tiles, Kind::kFull);
  for (int t = 0; t < fn_.num_tiles; ++t) {
    if (t < static_cast<int>(fn_.ub_rows.size()) && fn_.ub_rows[t]) kind_[t] = Kind::kRow;
    if (t < static_cast<int>(fn_.ub_types.size()) && !StoredAsF32(fn_.ub_types[t])) {
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
  // One column: a row tile has the full tiles' shape, and is one of them
  // (RowMajor [rows, 1], which TROW* also write).
  if (cols_ == 1) {
    for (Kind& k : kind_) {
      if (k == Kind::kRow) k = Kind::kFull;
    }
  }
  // A column tile holds only reductions' results and is read by stores.
  for (const PtoInstr& in : fn_.body) {
    if (in.op == PtoOpcode::kTStore) continue;
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
  if (buf.dtype != pto::v1::DT_FP32 && buf.dtype != pto::v1::DT_FP16 &&
      buf.dtype != pto::v1::DT_BOOL) {
    return Unsupported(in.op, absl::StrCat("of a ", pto::v1::DataType_Name(buf.dtype),
                                           " buffer (the target moves FP32, FP16 and BOOL)"));
  }
  if (buf.dtype == pto::v1::DT_BOOL && kind != Kind::kFull) {
    return Unsupported(in.op, "of a BOOL row or column tile");
  }
  const bool store = in.op == PtoOpcode::kTStore;
  const int tile = store ? in.srcs[0] : in.dst;
  if (!store && kind == Kind::kCol) return Unsupported(in.op, "into a column tile");
  if (!store && kind == Kind::kRow && buf.dtype != pto::v1::DT_FP32) {
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
  // A row tile whose rows lie unevenly in GM is stored from a RowMajor
  // [rows, 1] copy (TMOV), whose store takes the access's strides as they are.
  bool row_nd = false;
  if (kind == Kind::kRow) {
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
    if (row_nd && buf.dtype != pto::v1::DT_FP32) {
      return Unsupported(in.op, "of an FP16 row tile whose rows are not evenly spaced in GM");
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
    if (fn_.runtime_extents && extent[k] != 1) {
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
  Line(absl::StrCat("using G", i, " = GlobalTensor<", elem, ", ", shape, ", ", strides,
                    ", Layout::ND>;"));
  const std::string ptr = absl::StrCat("b", in.buffer, " + (", a.offset, ")");
  if (stride_args.empty() && shape_args.empty()) {
    Line(absl::StrCat("G", i, " ", g, "(", ptr, ");"));
  } else {
    Line(absl::StrCat("G", i, " ", g, "(", ptr, ", ",
                      shape_args.empty() ? "{}" : absl::StrCat(shape, "(", absl::StrJoin(shape_args, ", "), ")"),
                      ", ",
                      stride_args.empty() ? "{}" : absl::StrCat(strides, "(", absl::StrJoin(stride_args, ", "), ")"),
                      ");"));
  }
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

absl::Status FunctionEmitter::EmitCompute(const PtoInstr& in) {
  const std::string d = T(in.dst);
  auto src = [&](int k) { return T(in.srcs[k]); };
  auto is_row = [&](int t) { return kind_[t] == Kind::kRow; };
  Sync(Pipe::kV);
  switch (in.op) {
    case PtoOpcode::kTAdd: case PtoOpcode::kTSub: case PtoOpcode::kTMul:
    case PtoOpcode::kTDiv: case PtoOpcode::kTMax: case PtoOpcode::kTMin: {
      const std::string name = PtoOpcodeName(in.op);
      const bool r0 = is_row(in.srcs[0]), r1 = is_row(in.srcs[1]);
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
    case PtoOpcode::kTReshape:  // a bitcast to its own type (CheckIndexAndBitcast)
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
      if (in.reduce_dim == rank_ - 1) {
        Line(absl::StrCat("TROW", what, "(", d, ", ", src(0), ", ", Tmp(), ");"));
      } else {
        Line(absl::StrCat("TCOL", what, "(", d, ", ", src(0), ");"));
      }
      break;
    }
    case PtoOpcode::kTRedProd: {
      // exp(sum(log|x|)) times (-1)^(the count of negatives): zeros give 0
      // (log 0 = -inf), infinities inf, 0 * inf and NaN give NaN. The count's
      // parity: expanded back to full tiles, 1 - 2 (c - 2 floor(c / 2)),
      // reduced by TROWMAX/TCOLMAX (equal along the dim).
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
      Line(absl::StrCat("TCMPS(", Mask(), ", ", Flat(x), ", 0.0f, CmpMode::LT);"));
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
  } else if (!StoredAsF32(in.dtype)) {
    return Unsupported(in.op, absl::StrCat("with a ", pto::v1::DataType_Name(in.dtype),
                                           " result"));
  }
  return absl::OkStatus();
}

absl::Status FunctionEmitter::EmitInstr(int i) {
  const PtoInstr& in = fn_.body[i];
  if (in.op == PtoOpcode::kTLoad) return EmitGm(in, i, kind_[in.dst]);
  if (in.op == PtoOpcode::kTStore) return EmitGm(in, i, kind_[in.srcs[0]]);
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
  if (absl::Status s = CheckIndexAndBitcast(); !s.ok()) return s;
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
  auto place = [&](const char* type, const std::string& name, int64_t bytes,
                   const std::string& ctor = "") {
    absl::StrAppend(&decl, "  ", type, " ", name, ctor, ";\n  TASSIGN(", name,
                    absl::StrFormat(", 0x%x);\n", ub));
    ub += RoundUp(bytes, kUbAlign);
  };
  for (int t = 0; t < fn_.num_tiles; ++t) {
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
  if (need_int_) {
    absl::StrAppend(&decl, "  using FullInt = Tile<TileType::Vec, int32_t, ", rows_pad, ", ",
                    cols_pad, ", BLayout::RowMajor, ", vr, ", ", vc, ">;\n");
  }
  for (size_t k = 0; k < need_tmp_.size(); ++k) {
    if (need_tmp_[k]) {
      place("Full", k == 0 ? "tmp" : absl::StrCat("tmp", k + 1), rows_pad * cols_pad * 4, full_ctor);
    }
  }
  if (need_int_) place("FullInt", "itmp", rows_pad * cols_pad * 4, full_ctor);
  if (need_row_nd_) place("RowNd", "rnd", rows_pad * kUbAlign, row_ctor);
  if (need_half_row_) place("RowHalf", "hrow", half_rows_pad * 2, row_ctor);
  if (need_half_) place("FullHalf", "htmp", rows_pad * half_cols_pad * 2, full_ctor);
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
  if (need_byte_) {
    const int64_t byte_cols = RoundUp(cols_, kUbAlign);
    absl::StrAppend(&decl, "  using FullByte = Tile<TileType::Vec, uint8_t, ", rows_pad, ", ", byte_cols,
                    ", BLayout::RowMajor, ", vr, ", ", vc, ">;\n");
    place("FullByte", "btmp", rows_pad * byte_cols, full_ctor);
  }
  if (need_row_tmp_) place("Row", "rtmp", rows_pad * 4, row_ctor);
  if (need_col_tmp_) place("Col", "ctmp", cols_pad * 4, col_ctor);
  if (need_index_) {  // TARANGE's indices: one row
    absl::StrAppend(&decl, "  using IndexInt = Tile<TileType::Vec, int32_t, 1, ", cols_pad,
                    ", BLayout::RowMajor, 1, ", vc, ">;\n");
    absl::StrAppend(&decl, "  using Index = Tile<TileType::Vec, float, 1, ", cols_pad,
                    ", BLayout::RowMajor, 1, ", vc, ">;\n");
    place("IndexInt", "iidx", cols_pad * 4, col_ctor);
    place("Index", "fidx", cols_pad * 4, col_ctor);
  }
  if (ub > kAiCoreMemoryModel.ub_bytes) {
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
                      ") {\n", decl, body_, "}\n\n");
}

// The executor's view of block f: (buffers, args) -> the AICORE entry.
std::string Adapter(const PtoProgram& p, int f) {
  std::set<int> used;
  for (const PtoInstr& in : p.functions[f].body) {
    if (in.op == PtoOpcode::kTLoad || in.op == PtoOpcode::kTStore) used.insert(in.buffer);
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
  for (int f = 0; f < static_cast<int>(p.functions.size()); ++f) {
    absl::StatusOr<std::string> fn = FunctionEmitter(p, f).Emit();
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
