// InstructionEmitter: a vector function's instructions in order (the
// one-row fusions are in host_emit_fused_rows.cc), and the C++ spelling of
// types and scalars every emitter shares.
#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/targets/host/host_emit.h"

namespace pto::compiler::host_emit {

using host_plan::Access;
using host_plan::FusesSoftmaxRow;
using host_plan::FusesSubExpSum;
using host_plan::FindRowRun;
using host_plan::MakeAccess;
using host_plan::RowOffset;
using host_plan::RowRun;
using host_plan::ValueType;
using host_plan::Viewed;

namespace {

// An exact C++ expression for a float scalar.
std::string FloatLiteral(double v) {
  if (std::isnan(v)) return "__builtin_nanf(\"\")";
  if (std::isinf(v)) return v > 0 ? "__builtin_inff()" : "(-__builtin_inff())";
  return absl::StrFormat("static_cast<float>(%a)", v);
}

// An exact C++ expression for a scalar immediate of an instruction on tiles
// of storage type `storage`: f32 tiles take f32 immediates (the scalar
// rounded once, as the reference does), int64 and double tiles double ones
// (a DOUBLE x * 0.1 keeps double precision).
std::string ScalarLiteral(double v, pto::v1::DataType storage) {
  if (storage == pto::v1::DT_FP32) return FloatLiteral(v);
  if (std::isnan(v)) return "__builtin_nan(\"\")";
  if (std::isinf(v)) return v > 0 ? "__builtin_inf()" : "(-__builtin_inf())";
  return absl::StrFormat("%a", v);
}

// The call of MGATHER/MSCATTER/MSORT `in` (pto_tile.h MGather, MScatter,
// MSort): the buffer padded to 4 dims like the tile (`tile4`), the task's offsets, the
// buffer's row-major strides and its extent along the indexed dim (each
// from its dynamic arg where it depends on symbols: stride_dynamic,
// extent_dynamic). A function with run-time extents (a tail) calls the N
// forms with the task's extents.
absl::StatusOr<std::string> IndexedCall(const PtoProgram& p, const PtoFunction& fn,
                                        const PtoInstr& in,
                                        const std::vector<std::string>& name,
                                        const std::vector<int64_t>& tile4) {
  const int rank = static_cast<int>(fn.tile.size());
  if (in.buffer < 0 || in.buffer >= static_cast<int>(p.buffers.size()) ||
      static_cast<int>(p.buffers[in.buffer].shape.size()) != rank || in.index_dim < 0 ||
      in.index_dim >= rank || rank > 4 ||
      static_cast<int>(in.srcs.size()) != PtoNumTileSources(in.op) ||
      (!in.stride_dynamic.empty() && static_cast<int>(in.stride_dynamic.size()) != rank)) {
    return absl::InternalError(absl::StrCat(PtoOpcodeName(in.op),
                                            ": malformed buffer, dim or sources"));
  }
  const PtoBuffer& buf = p.buffers[in.buffer];
  std::vector<int64_t> shape4(4 - rank, 1);
  shape4.insert(shape4.end(), buf.shape.begin(), buf.shape.end());
  std::vector<int64_t> strides4(4, 1);
  for (int k = 2; k >= 0; --k) strides4[k] = strides4[k + 1] * shape4[k + 1];
  std::vector<std::string> strides;
  std::vector<std::string> offsets;
  std::vector<std::string> extents;
  for (int k = 0; k < 4; ++k) {
    const int d = k - (4 - rank);
    offsets.push_back(d < 0 ? std::string("0") : absl::StrCat("args[", d, "]"));
    const int dynamic = d >= 0 && !in.stride_dynamic.empty() ? in.stride_dynamic[d] : -1;
    strides.push_back(dynamic >= 0 ? absl::StrCat("args[", rank + dynamic, "]")
                                   : absl::StrCat(strides4[k]));
    extents.push_back(d < 0 || tile4[k] == 1
                          ? std::string("1")
                          : absl::StrCat("args[", fn.num_args - rank + d, "]"));
  }
  const std::string n = in.extent_dynamic >= 0
                            ? absl::StrCat("args[", rank + in.extent_dynamic, "]")
                            : absl::StrCat(buf.shape[in.index_dim]);
  const std::string type = GmType(buf.dtype);
  const int k = in.index_dim + 4 - rank;
  const std::string tail = absl::StrCat(
      absl::StrJoin(offsets, ", "), ", ", strides[0], ", ", strides[1], ", ", strides[2], ", ",
      n, fn.runtime_extents ? absl::StrCat(", ", absl::StrJoin(extents, ", ")) : "", ");\n");
  const char* form = fn.runtime_extents ? "N<" : "<";
  if (in.op == PtoOpcode::kMSort) {
    return absl::StrCat("pto_tile::MSort", form, type, ", ", absl::StrJoin(tile4, ", "), ", ", k,
                        ", ", in.descending ? "true" : "false", ">(t", in.dst,
                        ", static_cast<const ", type, "*>(buffers[", in.buffer, "]), ", tail);
  }
  if (in.op == PtoOpcode::kMGather) {
    return absl::StrCat("pto_tile::MGather", form, type, ", ", absl::StrJoin(tile4, ", "), ", ",
                        k, ">(t", in.dst, ", static_cast<const ", type, "*>(buffers[",
                        in.buffer, "]), ", name[in.srcs[0]], ", ", tail);
  }
  return absl::StrCat("pto_tile::MScatter", form, type, ", ", absl::StrJoin(tile4, ", "), ", ",
                      k, ", ", static_cast<int>(in.scatter), ">(static_cast<", type,
                      "*>(buffers[", in.buffer, "]), ", name[in.srcs[0]], ", ",
                      name[in.srcs[1]], ", ", tail);
}

// The padding of the run-time-extent load `i` (TLoadN): the identity of the
// reduction that first reads its tile (directly or through one TCVT), so the
// padding does not change the result; "" (zero) otherwise.
std::string LoadPad(const PtoFunction& fn, int i) {
  int tile = fn.body[i].dst;
  for (size_t k = i + 1; k < fn.body.size(); ++k) {
    const PtoInstr& in = fn.body[k];
    if (std::find(in.srcs.begin(), in.srcs.end(), tile) == in.srcs.end()) {
      if (in.dst == tile) return "";  // overwritten unread
      continue;
    }
    if (in.op == PtoOpcode::kTCvt) {
      tile = in.dst;
      continue;
    }
    const pto::v1::DataType storage =
        tile < static_cast<int>(fn.ub_types.size()) ? fn.ub_types[tile] : pto::v1::DT_FP32;
    const bool i64 = storage == pto::v1::DT_INT64;
    switch (in.op) {
      case PtoOpcode::kTRedMax:
        return i64 ? "(-9223372036854775807LL - 1)" : "(-__builtin_inf())";
      case PtoOpcode::kTRedMin:
        return i64 ? "9223372036854775807LL" : "__builtin_inf()";
      case PtoOpcode::kTRedProd:
        return "1";
      default:
        return "";
    }
  }
  return "";
}

}  // namespace

const char* GmType(pto::v1::DataType dtype) {
  switch (dtype) {
    case pto::v1::DT_FP16: return "pto_tile::half";
    case pto::v1::DT_BF16: return "pto_tile::bf16";
    case pto::v1::DT_BOOL: return "pto_tile::boolean";
    case pto::v1::DT_INT8: return "int8_t";
    case pto::v1::DT_INT16: return "int16_t";
    case pto::v1::DT_INT32: return "int32_t";
    case pto::v1::DT_INT64: return "int64_t";
    case pto::v1::DT_UINT8: return "uint8_t";
    case pto::v1::DT_DOUBLE: return "double";
    case pto::v1::DT_FP8E4M3: return "pto_tile::fp8e4m3";
    case pto::v1::DT_FP8E5M2: return "pto_tile::fp8e5m2";
    case pto::v1::DT_FP8E8M0: return "pto_tile::fp8e8m0";
    default: return "float";
  }
}

const char* UbType(pto::v1::DataType storage) {
  switch (storage) {
    case pto::v1::DT_INT64: return "int64_t";
    case pto::v1::DT_DOUBLE: return "double";
    default: return "float";
  }
}

std::string ScalarOperand(const PtoInstr& in, size_t j, pto::v1::DataType storage,
                          pto::v1::DataType values, int rank) {
  const int dynamic = j < in.scalar_dynamic.size() ? in.scalar_dynamic[j] : -1;
  if (dynamic < 0) return ScalarLiteral(in.scalars[j], storage);
  const std::string value =
      absl::StrCat("static_cast<", storage == pto::v1::DT_FP32 ? "float" : "double",
                   ">(args[", rank + dynamic, "])");
  if (storage != pto::v1::DT_FP32 ||
      (values != pto::v1::DT_FP16 && values != pto::v1::DT_BF16)) {
    return value;
  }
  return absl::StrCat("pto_tile::Round<", GmType(values), ">::Apply(", value, ")");
}

bool WrapsInt32(PtoOpcode op) {
  switch (op) {
    case PtoOpcode::kTAdd: case PtoOpcode::kTSub: case PtoOpcode::kTMul:
    case PtoOpcode::kTMax: case PtoOpcode::kTMin: case PtoOpcode::kTNeg:
    case PtoOpcode::kTAbs: case PtoOpcode::kTFloorDiv: case PtoOpcode::kTRem:
    case PtoOpcode::kTFmod: case PtoOpcode::kTGcd: case PtoOpcode::kTAnd:
    case PtoOpcode::kTOr: case PtoOpcode::kTXor: case PtoOpcode::kTNot:
    case PtoOpcode::kTShl: case PtoOpcode::kTShr:
      return true;
    default:
      return false;
  }
}

std::string FunctionHeader(int index) {
  return absl::StrCat("// @f", index, "\nstatic void pto_f", index,
                      "(void* const* buffers, const int64_t* args) {\n");
}

bool VectorFunction::IsRow(int t) const {
  return t >= 0 && t < static_cast<int>(fn->ub_rows.size()) && fn->ub_rows[t];
}

std::string InPlaceLoadPointer(const VectorFunction& f, int i) {
  const PtoInstr& in = f.fn->body[i];
  const Access a = MakeAccess(Viewed(f.p->buffers[in.buffer], in), f.fn->tile, in.index, -1);
  return absl::StrCat("  const float* g", i, " = static_cast<const float*>(buffers[", in.buffer,
                      "]) + (", a.offset, ");\n");
}

std::string InPlaceLoadPointers(const VectorFunction& f) {
  std::string lines;
  for (int i = 0; i < static_cast<int>(f.fn->body.size()); ++i) {
    if (f.plan.load_in_place[i]) absl::StrAppend(&lines, InPlaceLoadPointer(f, i));
  }
  return lines;
}

std::string TileArrays(const VectorFunction& f, const std::string& indent,
                       const std::function<int64_t(int)>& values) {
  std::string lines;
  for (int t = 0; t < f.fn->num_tiles; ++t) {
    const pto::v1::DataType storage =
        t < static_cast<int>(f.fn->ub_types.size()) ? f.fn->ub_types[t] : pto::v1::DT_FP32;
    absl::StrAppend(&lines, indent, "alignas(64) ", UbType(storage), " t", t, "[", values(t),
                    "];\n");
  }
  return lines;
}

InstructionEmitter::InstructionEmitter(const VectorFunction& f, std::string indent,
                                       std::string* out)
    : f_(f), p_(*f.p), fn_(*f.fn), indent_(std::move(indent)), out_(out) {
  name_.resize(fn_.num_tiles);
  for (int t = 0; t < fn_.num_tiles; ++t) name_[t] = absl::StrCat("t", t);
  columns_.assign(fn_.num_tiles, false);
  row_values_.assign(fn_.num_tiles, false);
  const bool per_row = f_.kind == FunctionKind::kPerRow;
  if (per_row || f_.kind == FunctionKind::kChunked) {
    folds_ = host_plan::FoldCasts(p_, fn_, f_.plan, [this](int t) { return IsRow(t); });
  }
  if (per_row) prefetch_ = host_plan::RowPrefetches(p_, fn_, f_.plan);
  prefetch_pending_ = !prefetch_.reads.empty() || !prefetch_.writes.empty();
}

std::string InstructionEmitter::RowAt(const Access& a) const {
  return f_.kind == FunctionKind::kPerRow ? RowOffset(a) : std::string();
}

// x read in place per row (tile x_tile, before instruction `before`): ", "
// and its next row in the tile (after the last, the row after it: the
// next tile's, where tiles follow), to prefetch; else "".
std::string InstructionEmitter::NextRow(int before, int x_tile) const {
  for (int k = before - 1; f_.kind == FunctionKind::kPerRow && k >= 0; --k) {
    const PtoInstr& ld = fn_.body[k];
    if (ld.op == PtoOpcode::kTLoad && ld.dst == x_tile) {
      const Access a = MakeAccess(Viewed(p_.buffers[ld.buffer], ld), fn_.tile, ld.index, -1);
      for (int d = 2; f_.plan.load_in_place[k] && d >= 0; --d) {
        if (a.extent4[d] > 1 && a.strides4[d] != 0) {
          return absl::StrCat(", ", name_[x_tile], " + ", a.strides4[d]);
        }
      }
      break;
    }
  }
  return std::string();
}

absl::Status InstructionEmitter::EmitBody() {
  auto is_row = [this](int t) { return IsRow(t); };
  for (int i = 0; i < static_cast<int>(fn_.body.size()); ++i) {
    const PtoInstr& in = fn_.body[i];
    if (f_.plan.elided[i]) continue;
    if (in.op != PtoOpcode::kTStore && in.dst >= 0 && in.dst < fn_.num_tiles) {
      row_values_[in.dst] = false;
    }
    if (!folds_.folded.empty() && folds_.folded[i]) {
      if (in.dtype != pto::v1::DT_FP32) name_[in.dst] = name_[in.srcs[0]];  // the stores round
      columns_[in.dst] = false;
      continue;
    }
    if (f_.plan.load_in_place[i]) {
      i = InPlaceLoad(i);
    } else if (in.op == PtoOpcode::kTLoad || in.op == PtoOpcode::kTStore) {
      i = LoadOrStore(i);
    } else if (f_.one_row && FusesSoftmaxRow(fn_, i, is_row, columns_, f_.plan)) {
      i = SoftmaxRow(i);
    } else if (f_.one_row && FusesSubExpSum(fn_, i, is_row, columns_, f_.plan)) {
      i = SubExpSum(i);
    } else if (const RowRun run =
                   f_.one_row ? FindRowRun(fn_, i, f_.cols, is_row, columns_, f_.plan) : RowRun();
               run.length > 0) {
      i = RowRunLoop(i, run);
    } else {
      const absl::Status status =
          PtoAddressesWholeBuffer(in.op) ? Indexed(i) : Call(i);
      if (!status.ok()) return status;
    }
  }
  return absl::OkStatus();
}

int InstructionEmitter::InPlaceLoad(int i) {
  const PtoInstr& in = fn_.body[i];
  if (f_.kind == FunctionKind::kWholeTile) absl::StrAppend(out_, InPlaceLoadPointer(f_, i));
  const std::string row =
      f_.kind == FunctionKind::kPerRow
          ? RowOffset(MakeAccess(Viewed(p_.buffers[in.buffer], in), fn_.tile, in.index, -1))
          : std::string();
  name_[in.dst] = f_.kind == FunctionKind::kChunked ? absl::StrCat("(g", i, " + c)")
                  : !row.empty()                    ? absl::StrCat("(g", i, row, ")")
                                                    : absl::StrCat("g", i);
  columns_[in.dst] = f_.plan.load_columns[i];
  return i;
}

int InstructionEmitter::LoadOrStore(int i) {
  const PtoInstr& in = fn_.body[i];
  const PtoBuffer& buf = p_.buffers[in.buffer];
  const bool load = in.op == PtoOpcode::kTLoad;
  // The tile it loads: its own, or a folded cast's (FoldCasts).
  const int into =
      load && !folds_.load_into.empty() && folds_.load_into[i] >= 0 ? folds_.load_into[i] : in.dst;
  if (load) {
    name_[into] = absl::StrCat("t", into);
    columns_[into] = false;
  }
  // (A load with reduce_dim reads one slot along it: an accumulator.)
  const int reduced = IsRow(load ? in.dst : in.srcs[0]) ? f_.rank - 1 : in.reduce_dim;
  // A load through a reshape addresses the buffer as its view shape.
  Access a = MakeAccess(Viewed(buf, in), fn_.tile, in.index, reduced, in.stride_dynamic);
  if (f_.kind == FunctionKind::kChunked) {  // n dense elements at c
    a.extent4 = {1, 1, 1, f_.n};
    a.strides4 = {0, 0, 0};
    a.strides4_text = {"0", "0", "0"};
    a.offset += " + c";
  }
  if (f_.kind == FunctionKind::kPerRow) {  // one row (one value for a row tile) at (i0, i1, i2)
    a.offset += RowOffset(a);
    a.extent4 = {1, 1, 1, a.extent4[3]};
  }
  if (load && f_.plan.load_rows[i]) {  // one value per row, not repeated along it
    a.extent4[3] = 1;
    a.bcast3 = false;
    row_values_[into] = true;
  }
  const std::string type = GmType(buf.dtype);
  if (fn_.runtime_extents) {
    // n0..n3: the task's extent per padded dim (args after the tile
    // offsets and dynamic offsets), 1 where the tile has extent 1.
    std::vector<std::string> ext;
    for (int k = 0; k < 4; ++k) {
      const int d = k - (4 - f_.rank);
      ext.push_back(d < 0 || a.extent4[k] == 1
                        ? std::string("1")
                        : absl::StrCat("args[", fn_.num_args - f_.rank + d, "]"));
    }
    const std::string s3 = a.bcast3 ? "0" : a.strides4_text[3];
    const std::string pad = load ? LoadPad(fn_, i) : std::string();
    absl::StrAppend(
        out_, "  pto_tile::", load ? "TLoadN<" : "TStoreN<", type, ", ",
        absl::StrJoin(a.extent4, ", "), ">(",
        load ? absl::StrCat("t", into, ", static_cast<const ", type, "*>(buffers[", in.buffer,
                            "]) + (", a.offset, ")")
             : absl::StrCat("static_cast<", type, "*>(buffers[", in.buffer, "]) + (", a.offset,
                            "), ", name_[in.srcs[0]]),
        ", ", a.strides4_text[0], ", ", a.strides4_text[1], ", ", a.strides4_text[2],
        load ? absl::StrCat(", ", s3) : "", ", ", absl::StrJoin(ext, ", "),
        pad.empty() ? "" : absl::StrCat(", ", pad), ");\n");
    return i;
  }
  // A transposed load (its innermost dim not contiguous) passes s3.
  const bool strided3 = load && a.strides4[3] > 1 && a.extent4[3] > 1;
  absl::StrAppend(
      out_, indent_, "pto_tile::", load ? (strided3 ? "TLoadStrided<" : "TLoad<") : "TStore<",
      type, ", ", absl::StrJoin(a.extent4, ", "), load && a.bcast3 ? ", true" : "", ">(",
      load ? absl::StrCat("t", into, ", static_cast<const ", type, "*>(buffers[", in.buffer,
                          "]) + (", a.offset, ")")
           : absl::StrCat("static_cast<", type, "*>(buffers[", in.buffer, "]) + (", a.offset,
                          "), ", name_[in.srcs[0]]),
      ", ", a.strides4_text[0], ", ", a.strides4_text[1], ", ", a.strides4_text[2],
      strided3 ? absl::StrCat(", ", a.strides4_text[3]) : "", ");\n");
  return i;
}

absl::Status InstructionEmitter::Indexed(int i) {
  const PtoInstr& in = fn_.body[i];
  absl::StatusOr<std::string> call = IndexedCall(p_, fn_, in, name_, f_.tile4);
  if (!call.ok()) return call.status();
  if (in.op != PtoOpcode::kMScatter) name_[in.dst] = absl::StrCat("t", in.dst);
  absl::StrAppend(out_, indent_, *call);
  return absl::OkStatus();
}

absl::Status InstructionEmitter::Call(int i) {
  const PtoInstr& in = fn_.body[i];
  const char* f = PtoHostFunction(in.op);
  if (static_cast<int>(in.srcs.size()) != PtoNumTileSources(in.op) ||
      static_cast<int>(in.scalars.size()) != PtoNumScalars(in.op)) {
    return absl::InternalError(
        absl::StrCat(PtoOpcodeName(in.op), ": wrong number of sources or scalars"));
  }
  std::vector<std::string> args;
  for (int s : in.srcs) args.push_back(name_[s]);
  // Source layouts for a Rows form (before the destination's name changes).
  std::vector<const char*> layout;
  bool rows_form = false;
  for (int s : in.srcs) {
    layout.push_back(IsRow(s) || row_values_[s] ? "pto_tile::kRow"
                     : columns_[s]              ? "pto_tile::kCol"
                                                : "pto_tile::kFull");
    rows_form = rows_form || IsRow(s) || row_values_[s] || columns_[s];
  }
  columns_[in.dst] = false;
  if (f_.plan.writes_store[i] >= 0) {
    const PtoInstr& st = fn_.body[f_.plan.writes_store[i]];
    const Access a = MakeAccess(p_.buffers[st.buffer], fn_.tile, st.index, -1);
    absl::StrAppend(out_, indent_, "float* o", i, " = static_cast<float*>(buffers[", st.buffer,
                    "]) + (", a.offset, f_.kind == FunctionKind::kChunked ? " + c" : "",
                    RowAt(a), ");\n");
    name_[in.dst] = absl::StrCat("o", i);
  } else {
    name_[in.dst] = absl::StrCat("t", in.dst);
  }
  args.insert(args.begin(), name_[in.dst]);
  // Immediates take the type of the tiles they meet: the first source's,
  // or (TFILL, no sources) the destination's.
  const int scalar_tile = in.srcs.empty() ? in.dst : in.srcs[0];
  const pto::v1::DataType scalar_storage =
      scalar_tile >= 0 && scalar_tile < static_cast<int>(fn_.ub_types.size())
          ? fn_.ub_types[scalar_tile]
          : pto::v1::DT_FP32;
  const pto::v1::DataType scalar_values =
      in.srcs.empty() ? in.dtype : ValueType(fn_, i, in.srcs[0], in.dtype);
  for (size_t j = 0; j < in.scalars.size(); ++j) {
    // (TARANGE's start and step, TPHILOX's words are doubles whatever the
    // tile type.)
    args.push_back(PtoReadsTileOffset(in.op)
                       ? ScalarOperand(in, j, pto::v1::DT_DOUBLE, in.dtype, f_.rank)
                       : ScalarOperand(in, j, scalar_storage, scalar_values, f_.rank));
  }
  if (in.reduce_dim >= 0) {
    // Reductions: template <E0, E1, E2, E3, K[, D]> over the padded tile;
    // TARGFIRST also takes the task's offset along the reduced dim.
    std::vector<int64_t> e4 = f_.tile4;
    if (f_.kind == FunctionKind::kPerRow) e4 = {1, 1, 1, f_.cols};
    if (in.op == PtoOpcode::kTArgFirst) {
      args.push_back(absl::StrCat("args[", in.reduce_dim, "]"));
    }
    const bool narrow = in.dtype == pto::v1::DT_FP16 || in.dtype == pto::v1::DT_BF16;
    absl::StrAppend(out_, indent_, "pto_tile::", f, "<", absl::StrJoin(e4, ", "), ", ",
                    in.reduce_dim + 4 - f_.rank, narrow ? absl::StrCat(", ", GmType(in.dtype)) : "",
                    ">(", absl::StrJoin(args, ", "), ");\n");
    return absl::OkStatus();
  }
  // The destination's type: TCVT always names it; other instructions
  // only when their f32 result must be rounded (FP16, BF16).
  // INT32 arithmetic on int64 tiles wraps to 32 bits the same way.
  const bool narrow =
      ((in.dtype == pto::v1::DT_FP16 || in.dtype == pto::v1::DT_BF16) &&
       !f_.plan.unrounded[i]) ||
      (in.dtype == pto::v1::DT_INT32 && WrapsInt32(in.op));
  const bool typed = in.op == PtoOpcode::kTCvt || in.op == PtoOpcode::kTFill ||
                     PtoReadsTileOffset(in.op) || in.op == PtoOpcode::kTReshape;
  if (PtoReadsTileOffset(in.op)) args.push_back("args[0]");
  std::string round_to =
      typed || narrow ? absl::StrCat(", ", GmType(in.dtype)) : std::string();
  // TRESHAPE also names the source's element type (its bits are read).
  if (in.op == PtoOpcode::kTReshape) {
    absl::StrAppend(&round_to, ", ", GmType(ValueType(fn_, i, in.srcs[0], in.dtype)));
  }
  // A full destination with row or column sources: the binary op's Rows
  // form (template <R, C, layout a, layout b[, D]>) repeats their values
  // along each row or down each column.
  if (!IsRow(in.dst) && rows_form) {
    if (in.srcs.size() != 2 || !PtoHasRowsForm(in.op)) {
      return absl::InternalError(
          absl::StrCat(PtoOpcodeName(in.op), ": no form that reads a row tile"));
    }
    absl::StrAppend(out_, indent_, "pto_tile::", f, "Rows<", f_.row_n, ", ", f_.cols, ", ",
                    layout[0], ", ", layout[1], round_to, ">(", absl::StrJoin(args, ", "),
                    ");\n");
    return absl::OkStatus();
  }
  absl::StrAppend(out_, indent_, "pto_tile::", f, "<", IsRow(in.dst) ? f_.row_n : f_.n, round_to,
                  ">(", absl::StrJoin(args, ", "), ");\n");
  return absl::OkStatus();
}

}  // namespace pto::compiler::host_emit
