// FunctionEmitter's arg reductions and index instructions
// (ascend_function_emitter.h).
#include "compiler/targets/ascend/ascend_function_emitter.h"

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
#include "compiler/targets/ascend/ascend_codegen.h"
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

namespace pto::compiler::ascend {

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

}  // namespace pto::compiler::ascend
