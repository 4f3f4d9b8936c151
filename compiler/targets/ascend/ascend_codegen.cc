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
#include "absl/strings/str_replace.h"
#include "compiler/ir/dtype.h"
#include "compiler/targets/ascend/ascend_bf16.h"
#include "compiler/targets/ascend/ascend_cube_codegen.h"
#include "compiler/targets/ascend/ascend_function_emitter.h"
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
  SplitMixedIntTiles();
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
      if (in.reduce_dim != rank_ - 1 && !ColumnScanDim(in.reduce_dim)) {
        return Unsupported(in.op, absl::StrCat("along dim ", in.reduce_dim, " of a rank-", rank_,
                                               " tile (the target scans along the last dim, and "
                                               "along another where the tile's other dims before "
                                               "the last are 1)"));
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
    } else if ((rank_ == 2 && in.reduce_dim == 0) ||
               (in.op == PtoOpcode::kTRedLast && ColumnScanDim(in.reduce_dim))) {
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
  // The carry of a scan down the columns (ColumnScanDim): a row of GM in a
  // column tile.
  for (const PtoInstr& in : fn_.body) {
    if (PtoIsScan(in.op) && ColumnScanDim(in.reduce_dim) && in.srcs.size() > 1) {
      for (const PtoInstr& load : fn_.body) {
        if (load.op == PtoOpcode::kTLoad && load.dst == in.srcs[1] &&
            load.reduce_dim == in.reduce_dim) {
          kind_[load.dst] = Kind::kCol;
        }
      }
    }
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
    // (A scan down the columns reads its carry's.)
    if (in.op == PtoOpcode::kTStore || in.op == PtoOpcode::kTArgFirst ||
        in.op == PtoOpcode::kTArgSel || PtoIsScan(in.op)) {
      continue;
    }
    if (in.op == PtoOpcode::kTLoad && kind_[in.dst] == Kind::kCol) continue;  // (its carry)
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
  if (buf.dtype == pto::v1::DT_BOOL && kind != Kind::kFull) {
    return Unsupported(in.op, "of a BOOL row or column tile");
  }
  const bool store = in.op == PtoOpcode::kTStore;
  const int tile = store ? in.srcs[0] : in.dst;
  if (!store && kind == Kind::kCol && !ColumnScanDim(in.reduce_dim)) {
    return Unsupported(in.op, "into a column tile");
  }
  if (!store && kind == Kind::kRow && !f32 && !bf16 && buf.dtype != pto::v1::DT_FP16 &&
      buf.dtype != pto::v1::DT_INT32 && buf.dtype != pto::v1::DT_INT64) {
    return Unsupported(in.op, absl::StrCat("of ", pto::v1::DataType_Name(buf.dtype),
                                           " values into a row tile"));
  }
  if (kind == Kind::kFull && in.reduce_dim >= 0 && in.reduce_dim < rank_ &&
      fn_.tile[in.reduce_dim] != 1) {
    return Unsupported(in.op, absl::StrCat("of one slot along dim ", in.reduce_dim,
                                           " of a full tile (an accumulator)"));
  }
  // A row tile reads a [rows, 1] region (one slot per row).
  const Access a = MakeAccess(Viewed(buf, in), fn_.tile, in.index,
                              store ? in.reduce_dim
                              : kind == Kind::kRow ? rank_ - 1
                              : kind == Kind::kCol ? in.reduce_dim
                                                   : -1,
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
      return Unsupported(in.op, "of INT64 values strided along the last dim in GM");
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
  // A row tile whose rows lie unevenly in GM is stored from (loaded into) a
  // RowMajor [rows, 1] copy (TMOV), whose TSTORE (TLOAD) takes the access's
  // strides as they are.
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
      ascend::EmitBf16Load(*this, T(tile),
                           kind == Kind::kRow ? ascend::Bf16Tile::kRow : ascend::Bf16Tile::kFull,
                           g, words);
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
  if (row_nd && store) {
    need_row_nd_ = true;
    Sync(Pipe::kV);
    Line(absl::StrCat("TMOV(rnd, ", T(tile), ");"));
    Sync(Pipe::kMte3);
    Line(absl::StrCat("TSTORE(", g, ", rnd);"));
  } else if (row_nd) {  // loaded as stored, then moved into the row tile
    need_row_nd_ = true;
    Sync(Pipe::kMte2);
    Line(absl::StrCat("TLOAD(rnd, ", g, ");"));
    Sync(Pipe::kV);
    Line(absl::StrCat("TMOV(", T(tile), ", rnd);"));
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

absl::Status FunctionEmitter::EmitColumnScan(const PtoInstr& in) {
  const bool last = in.op == PtoOpcode::kTRedLast;
  if (kind_[in.srcs[0]] != Kind::kFull || kind_[in.dst] != (last ? Kind::kCol : Kind::kFull) ||
      (!last && kind_[in.srcs[1]] != Kind::kCol)) {
    return Unsupported(in.op, "down the columns of other than a full tile with a column tile's carry");
  }
  const int64_t cols8 = RoundUp(cols_, kUbAlign / 4);
  const ascend::FlatView flat = [this](const std::string& full) { return Flat(full); };
  const ascend::FlatView flat_int = [this](const std::string& full) { return FlatI(full); };
  need_index_ = true;
  Line("TCI<IndexInt, int32_t, 0>(iidx, 0);");
  Line("TCVT(fidx, iidx, RoundMode::CAST_NONE);");
  if (last) {
    const std::string column = Scratch(2);
    Line(absl::StrCat("TCOLEXPAND(", column, ", fidx);"));
    ascend::EmitLastRow(*this, flat, flat_int, T(in.dst), T(in.srcs[0]), column,
                        fn_.runtime_extents ? absl::StrCat("static_cast<int32_t>(", ValidRows(), ")")
                                            : absl::StrCat(rows_),
                        cols8);
    return absl::OkStatus();
  }
  // Each element's flat position p, and its row (p - its column) / cols8
  // (exact in f32: p < 2^24).
  const ascend::ColumnScanIndex index{Scratch(2), IntTmpK(2)};
  const std::string carry = Scratch(3);
  const std::string fpos = FlatI(index.pos);
  Line(absl::StrCat("TCI<FlatInt, int32_t, 0>(", fpos, ", 0);"));
  Line(absl::StrCat("TRESHAPE(", index.pos, ", ", fpos, ");"));
  Line(absl::StrCat("TCVT(", index.row, ", ", index.pos, ", RoundMode::CAST_NONE);"));
  Line(absl::StrCat("TCOLEXPAND(", carry, ", fidx);"));
  Line(absl::StrCat("TSUB(", index.row, ", ", index.row, ", ", carry, ");"));
  Line(absl::StrCat("TDIVS(", index.row, ", ", index.row, ", ", cols8, ".0f);"));
  Line(absl::StrCat("TCOLEXPAND(", carry, ", ", T(in.srcs[1]), ");"));
  ascend::EmitScanFirstDim(*this, flat, flat_int, in.op == PtoOpcode::kTCumProd,
                           in.dtype == pto::v1::DT_DOUBLE, T(in.dst), T(in.srcs[0]), carry, index,
                           rows_, cols8);
  return absl::OkStatus();
}

absl::Status FunctionEmitter::EmitScan(const PtoInstr& in) {
  const bool last = in.op == PtoOpcode::kTRedLast;
  if (in.reduce_dim != rank_ - 1) return EmitColumnScan(in);
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
    // A double running value (the host's FP32 scans) is held in f32: the
    // log-step form's roundings are within an f32 scan's bound. An f32 one
    // (FP16, BF16) takes the host's order.
    ascend::EmitScanLastDim(*this, flat, [this](const std::string& full) { return FlatI(full); },
                            in.op == PtoOpcode::kTCumProd, in.dtype == pto::v1::DT_DOUBLE,
                            T(in.dst), T(in.srcs[0]), T(in.srcs[1]), index, cols_);
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
      auto plain = [&]() -> absl::Status {
        if (r0 == r1 || is_row(in.dst)) {
          if (r0 != r1 || is_row(in.dst) != r0) {
            return Unsupported(in.op, "mixing row and full tiles into a row tile");
          }
          Line(absl::StrCat(name, "(", d, ", ", src(0), ", ", src(1), ");"));
          return absl::OkStatus();
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
        return absl::OkStatus();
      };
      if ((in.op != PtoOpcode::kTMax && in.op != PtoOpcode::kTMin) || is_row(in.dst)) {
        if (absl::Status s = plain(); !s.ok()) return s;
        break;
      }
      // PTO-ISA's TMAX/TMIN (the CPU simulation's std::max/std::min) give
      // their first operand where the other is NaN or both are equal (-0.0
      // and +0.0). The exact form: of the operands as full tiles (a row one
      // expanded), the second first (the host's zero), into d where d is
      // neither, else into scratch; then each operand's NaN is selected in
      // (NaN is where !(x <= inf)).
      auto exact = [&]() -> absl::Status {
        const std::string inf = FloatLiteral(std::numeric_limits<double>::infinity());
        auto full = [&](int k) {
          if (!is_row(in.srcs[k])) return src(k);
          const std::string x = ExtremaScratch(2 + k);
          Line(absl::StrCat("TROWEXPAND(", x, ", ", src(k), ");"));
          return x;
        };
        const std::string a = full(0), b = full(1);
        const std::string out = d != a && d != b ? d : ExtremaScratch(1);
        Line(absl::StrCat(name, "(", out, ", ", b, ", ", a, ");"));
        Select(out, a, "LE", inf, out, a);
        Select(d, b, "LE", inf, out, b);
        return absl::OkStatus();
      };
      if (absl::Status s = EmitExtremum(exact, plain); !s.ok()) return s;
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
    case PtoOpcode::kTNeg: case PtoOpcode::kTRelu:
      Line(absl::StrCat(PtoOpcodeName(in.op), "(", d, ", ", src(0), ");"));
      break;
    case PtoOpcode::kTAbs:  // + 0: -0.0 to +0.0 (the CPU simulation's TABS keeps -0.0)
      Line(absl::StrCat("TABS(", d, ", ", src(0), ");"));
      Line(absl::StrCat("TADDS(", d, ", ", d, ", 0.0f);"));
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
      if (in.op == PtoOpcode::kTRedSum || kind_[in.dst] == Kind::kFull) break;
      // TROWMAX/TCOLMAX/... (the CPU simulation's std::max/std::min in order)
      // keep a NaN only where it comes first. The exact form: z = NaN where
      // x is NaN, else +0 (NaN is where !(x <= inf)), summed along the dim
      // (NaN or +0) and subtracted from the extremum (x - +0 is x, -0.0
      // too).
      auto exact = [&]() -> absl::Status {
        const std::string inf = FloatLiteral(std::numeric_limits<double>::infinity());
        const std::string z = ExtremaScratch(1), c = row ? RowScratch() : ColScratch();
        Line(absl::StrCat("TEXPANDS(", z, ", 0.0f);"));
        Line(absl::StrCat("TCMPS(", Mask(), ", ", Flat(src(0)), ", ", inf, ", CmpMode::LE);"));
        const std::string fz = Flat(z);
        Line(absl::StrCat("TSEL(", fz, ", ", Mask(), ", ", fz, ", ", Flat(src(0)), ");"));
        Line(absl::StrCat("TRESHAPE(", z, ", ", fz, ");"));
        reduce("SUM", c, z);
        Line(absl::StrCat("TSUB(", d, ", ", d, ", ", c, ");"));
        return absl::OkStatus();
      };
      if (absl::Status s = EmitExtremum(exact, [] { return absl::OkStatus(); }); !s.ok()) {
        return s;
      }
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
  if (need_half_col_) {
    absl::StrAppend(&decl, "  using ColHalf = Tile<TileType::Vec, half, 1, ", half_cols_pad,
                    ", BLayout::RowMajor, 1, ", vc, ">;\n");
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
  if (need_half_col_) place("ColHalf", "hcol", half_cols_pad * 2, col_ctor);
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
  // The exact extrema's scratch, last: kept where the UB holds it.
  const size_t decl_before_extrema = decl.size();
  const int64_t ub_before_extrema = ub;
  for (size_t k = 0; k < need_xtmp_.size(); ++k) {
    if (need_xtmp_[k]) {
      place("Full", k == 0 ? "xtmp" : absl::StrCat("xtmp", k + 1), rows_pad * cols_pad * 4, full_ctor);
    }
  }
  const bool exact_extrema = ub <= kAiCoreMemoryModel.ub_bytes;
  if (!exact_extrema) {
    decl.resize(decl_before_extrema);
    ub = ub_before_extrema;
  }
  std::vector<std::pair<std::string, std::string>> extrema;
  for (size_t k = 0; k < extrema_.size(); ++k) {
    extrema.emplace_back(ExtremumMarker(k) + "\n",
                         exact_extrema ? extrema_[k].first : extrema_[k].second);
  }
  body_ = absl::StrReplaceAll(body_, extrema);
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
                      ") {\n", decl, bf16_round, body_, "}\n\n");
}

}  // namespace ascend

namespace {

using ascend::FunctionEmitter;
using ascend::GmElem;

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
