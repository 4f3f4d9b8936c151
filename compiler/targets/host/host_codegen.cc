#include "compiler/targets/host/host_codegen.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/targets/host/cube_codegen.h"
#include "compiler/targets/host/host_function_plan.h"

namespace pto::compiler {
namespace {

using host_plan::Access;
using host_plan::CastFolds;
using host_plan::ChunkElements;
using host_plan::DirectPlan;
using host_plan::FindRowRun;
using host_plan::FoldCasts;
using host_plan::FusesSoftmaxRow;
using host_plan::FusesSubExpSum;
using host_plan::kRowChunkElements;
using host_plan::MakeAccess;
using host_plan::NoDirectOperands;
using host_plan::PerRow;
using host_plan::PlanDirect;
using host_plan::ReadLater;
using host_plan::RowOffset;
using host_plan::RowPrefetch;
using host_plan::RowPrefetches;
using host_plan::RowRun;
using host_plan::SoftmaxExpAt;
using host_plan::ValueType;
using host_plan::Viewed;

// The C++ element type of a GM buffer of `dtype` (pto_tile.h's Elem<T>).
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
    default: return "float";
  }
}

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

// Scalar operand j of `in` (on tiles of storage type `storage` holding
// values of type `values`, in a function whose tile has rank `rank`): its
// immediate, or for a scalar over symbols (x * n: PtoInstr::scalar_dynamic)
// its int64 dynamic arg converted to the type the immediate would have.
// With FP16/BF16 values that arg is also rounded to their type (through
// f32, nearest even), as pypto rounds a Python number and torch an int
// meeting such a tensor (FP16 x * n at n = 2049 is x * 2048); the
// instruction then computes in f32 as with an immediate.
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

// The C++ type of a UB tile of storage type `storage`.
const char* UbType(pto::v1::DataType storage) {
  switch (storage) {
    case pto::v1::DT_INT64: return "int64_t";
    case pto::v1::DT_DOUBLE: return "double";
    default: return "float";
  }
}

// The integer arithmetic of pto_tile.h (int64 tiles) that takes the tensor's
// type to wrap its result to (INT32: 32 bits).
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

// The call of MGATHER/MSCATTER `in` (pto_tile.h MGather, MScatter): the
// buffer padded to 4 dims like the tile (`tile4`), the task's offsets, the
// buffer's row-major strides and its extent along the indexed dim.
absl::StatusOr<std::string> IndexedCall(const PtoProgram& p, const PtoFunction& fn,
                                        const PtoInstr& in,
                                        const std::vector<std::string>& name,
                                        const std::vector<int64_t>& tile4) {
  const int rank = static_cast<int>(fn.tile.size());
  if (in.buffer < 0 || in.buffer >= static_cast<int>(p.buffers.size()) ||
      static_cast<int>(p.buffers[in.buffer].shape.size()) != rank || in.index_dim < 0 ||
      in.index_dim >= rank || rank > 4 ||
      static_cast<int>(in.srcs.size()) != PtoNumTileSources(in.op)) {
    return absl::InternalError(absl::StrCat(PtoOpcodeName(in.op),
                                            ": malformed buffer, dim or sources"));
  }
  const PtoBuffer& buf = p.buffers[in.buffer];
  std::vector<int64_t> shape4(4 - rank, 1);
  shape4.insert(shape4.end(), buf.shape.begin(), buf.shape.end());
  std::vector<int64_t> strides4(4, 1);
  for (int k = 2; k >= 0; --k) strides4[k] = strides4[k + 1] * shape4[k + 1];
  std::vector<std::string> offsets;
  for (int k = 0; k < 4; ++k) {
    const int d = k - (4 - rank);
    offsets.push_back(d < 0 ? std::string("0") : absl::StrCat("args[", d, "]"));
  }
  const std::string type = GmType(buf.dtype);
  const int k = in.index_dim + 4 - rank;
  const std::string tail = absl::StrCat(
      absl::StrJoin(offsets, ", "), ", ", strides4[0], ", ", strides4[1], ", ", strides4[2],
      ", ", buf.shape[in.index_dim], ");\n");
  if (in.op == PtoOpcode::kMGather) {
    return absl::StrCat("pto_tile::MGather<", type, ", ", absl::StrJoin(tile4, ", "), ", ", k,
                        ">(t", in.dst, ", static_cast<const ", type, "*>(buffers[",
                        in.buffer, "]), ", name[in.srcs[0]], ", ", tail);
  }
  return absl::StrCat("pto_tile::MScatter<", type, ", ", absl::StrJoin(tile4, ", "), ", ", k,
                      ", ", static_cast<int>(in.scatter), ">(static_cast<", type,
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


// Per UB tile of a whole-tile function (`elems` values): the values it
// holds if it is a reduction step's result (written only by TRED*,
// TARGFIRST or TARGSEL, read only by them and TSTORE: the tile's elements
// over its extent along the reduced dim), else 0 (the whole tile). Such a
// tile is declared that long (sum over dim 0 of a [64, 256] tile: 256
// values, not 16384), as ExpandToTiles counts it against UB.
std::vector<int64_t> ReducedTileElements(const PtoFunction& fn, int64_t elems) {
  auto reduces = [](PtoOpcode op) {
    return op == PtoOpcode::kTRedSum || op == PtoOpcode::kTRedMax ||
           op == PtoOpcode::kTRedMin || op == PtoOpcode::kTRedProd ||
           op == PtoOpcode::kTArgFirst || op == PtoOpcode::kTArgSel;
  };
  const int rank = static_cast<int>(fn.tile.size());
  std::vector<int64_t> values(fn.num_tiles, 0);
  std::vector<bool> other(fn.num_tiles, false);  // a whole-tile writer or reader
  for (const PtoInstr& in : fn.body) {
    if (in.dst >= 0 && in.dst < fn.num_tiles) {
      if (reduces(in.op) && in.reduce_dim >= 0 && in.reduce_dim < rank &&
          fn.tile[in.reduce_dim] > 0) {
        values[in.dst] = std::max(values[in.dst], elems / fn.tile[in.reduce_dim]);
      } else {
        other[in.dst] = true;
      }
    }
    if (in.op == PtoOpcode::kTStore || reduces(in.op)) continue;
    for (int s : in.srcs) {
      if (s >= 0 && s < fn.num_tiles) other[s] = true;
    }
  }
  for (int t = 0; t < fn.num_tiles; ++t) {
    if (other[t]) values[t] = 0;
  }
  return values;
}

absl::StatusOr<std::string> EmitFunction(const PtoProgram& p, int index) {
  const PtoFunction& fn = p.functions[index];
  if (fn.core == pto::v1::CORE_TYPE_CUBE) return EmitCubeFunction(p, index);
  int64_t elems = 1;
  for (int64_t e : fn.tile) elems *= e;
  const int rank = static_cast<int>(fn.tile.size());
  // Row tiles (fused last-dim reductions) hold one value per row.
  const int64_t cols = rank > 0 && fn.tile.back() > 0 ? fn.tile.back() : 1;
  const int64_t rows = elems / cols;
  auto is_row = [&](int t) {
    return t >= 0 && t < static_cast<int>(fn.ub_rows.size()) && fn.ub_rows[t];
  };
  std::string out = absl::StrCat("// @f", index, "\nstatic void pto_f", index,
                                 "(void* const* buffers, const int64_t* args) {\n");
  for (const PtoInstr& in : fn.body) {
    if ((in.op == PtoOpcode::kTLoad || in.op == PtoOpcode::kTStore) &&
        (in.buffer < 0 || in.buffer >= static_cast<int>(p.buffers.size()))) {
      return absl::InternalError("PTO instruction names a missing buffer");
    }
  }
  // Run-time extents (a tail in a loop body): no GM-direct operands and no
  // chunks (the instructions run on the whole, zero-padded tile).
  bool runtime_strides = false;
  for (const PtoInstr& in : fn.body) {
    for (int k : in.stride_dynamic) runtime_strides = runtime_strides || k >= 0;
  }
  // MGATHER/MSCATTER address GM through their index tiles: the plain form
  // (whole tiles, every operand in UB).
  bool indexed = false;
  for (const PtoInstr& in : fn.body) {
    indexed = indexed || in.op == PtoOpcode::kMGather || in.op == PtoOpcode::kMScatter;
  }
  // Run-time strides: no per-row form either (its row offsets are constants).
  const bool per_row = !runtime_strides && !indexed && PerRow(p, fn, is_row, rank, rows);
  DirectPlan plan = PlanDirect(p, fn, is_row, per_row);
  if (fn.runtime_extents || runtime_strides || indexed) {
    const size_t count = fn.body.size();
    plan.load_in_place.assign(count, false);
    plan.load_columns.assign(count, false);
    plan.load_rows.assign(count, false);
    plan.writes_store.assign(count, -1);
    plan.unrounded.assign(count, 0);
    plan.elided.assign(count, false);
  }
  // Chunked (ChunkElements): GM pointers first, then a loop over chunks c
  // with the tiles inside it, each instruction over `n` elements at c.
  const int64_t chunk =
      fn.runtime_extents || runtime_strides || per_row || indexed ? 0
                                                       : ChunkElements(p, fn, is_row, elems);
  // Per row (PerRow): GM pointers first, then loops over the tile's rows
  // (i0, i1, i2 over its leading dims) with one-row tiles inside.
  const int64_t n = chunk > 0 ? chunk : per_row ? cols : elems;
  const int64_t row_n = per_row ? 1 : rows;  // a row tile's values
  const std::string at = chunk > 0 ? " + c" : "";
  // The GM offset of this row of an access (per row only).
  auto row_at = [&](const Access& a) { return per_row ? RowOffset(a) : std::string(); };
  std::vector<int64_t> tile4(4 - rank, 1);
  tile4.insert(tile4.end(), fn.tile.begin(), fn.tile.end());
  // Instructions on one row at a time (per row, or a row group's tile one
  // row long): where FusesSubExpSum and FindRowRun apply.
  bool row_tiles = false;
  for (int t = 0; t < fn.num_tiles; ++t) row_tiles = row_tiles || is_row(t);
  const bool one_row = per_row || (rows == 1 && chunk == 0 && row_tiles);
  // Per row: prefetched once, in the row's first pass that can carry it.
  RowPrefetch prefetch = per_row ? RowPrefetches(p, fn, plan) : RowPrefetch();
  bool prefetch_pending = !prefetch.reads.empty() || !prefetch.writes.empty();
  for (int i = 0; (chunk > 0 || per_row) && i < static_cast<int>(fn.body.size()); ++i) {
    const PtoInstr& in = fn.body[i];
    if (plan.load_in_place[i]) {
      const Access a = MakeAccess(Viewed(p.buffers[in.buffer], in), fn.tile, in.index, -1);
      absl::StrAppend(&out, "  const float* g", i, " = static_cast<const float*>(buffers[",
                      in.buffer, "]) + (", a.offset, ");\n");
    }
  }
  if (chunk > 0) {
    absl::StrAppend(&out, "  for (int64_t c = 0; c < ", elems, "; c += ", chunk, ") {\n");
  }
  if (per_row) {
    absl::StrAppend(&out, " ");
    for (int k = 0; k < 3; ++k) {
      if (tile4[k] > 1) {
        absl::StrAppend(&out, " for (int64_t i", k, " = 0; i", k, " < ", tile4[k], "; ++i", k,
                        ")");
      }
    }
    absl::StrAppend(&out, " {\n");
  }
  const std::string indent = chunk > 0 || per_row ? "    " : "  ";
  const std::vector<int64_t> reduced = ReducedTileElements(fn, elems);
  for (int t = 0; t < fn.num_tiles; ++t) {
    const pto::v1::DataType storage =
        t < static_cast<int>(fn.ub_types.size()) ? fn.ub_types[t] : pto::v1::DT_FP32;
    const int64_t size = is_row(t)                                    ? row_n
                         : chunk == 0 && !per_row && reduced[t] > 0 ? reduced[t]
                                                                      : n;
    absl::StrAppend(&out, indent, "alignas(64) ", UbType(storage), " t", t, "[", size, "];\n");
  }
  // The C++ name of each UB tile's current value: its array, or a pointer
  // into GM (g<i>: a load read in place; o<i>: a result written there).
  std::vector<std::string> name(fn.num_tiles);
  for (int t = 0; t < fn.num_tiles; ++t) name[t] = absl::StrCat("t", t);
  std::vector<bool> columns(fn.num_tiles, false);  // value read in place as [C]
  std::vector<bool> row_values(fn.num_tiles, false);  // one value per row (DirectPlan::load_rows)
  // x read in place per row (tile x_tile, before instruction `before`): ", "
  // and its next row in the tile (after the last, the row after it: the
  // next tile's, where tiles follow), to prefetch; else "".
  auto next_row = [&](int before, int x_tile) {
    for (int k = before - 1; per_row && k >= 0; --k) {
      const PtoInstr& ld = fn.body[k];
      if (ld.op == PtoOpcode::kTLoad && ld.dst == x_tile) {
        const Access a = MakeAccess(Viewed(p.buffers[ld.buffer], ld), fn.tile, ld.index, -1);
        for (int d = 2; plan.load_in_place[k] && d >= 0; --d) {
          if (a.extent4[d] > 1 && a.strides4[d] != 0) {
            return absl::StrCat(", ", name[x_tile], " + ", a.strides4[d]);
          }
        }
        break;
      }
    }
    return std::string();
  };
  // Per row: casts folded into loads and stores (FoldCasts).
  const CastFolds folds =
      per_row || chunk > 0 ? FoldCasts(p, fn, plan, is_row) : CastFolds();
  for (int i = 0; i < static_cast<int>(fn.body.size()); ++i) {
    const PtoInstr& in = fn.body[i];
    if (plan.elided[i]) continue;
    if (in.op != PtoOpcode::kTStore && in.dst >= 0 && in.dst < fn.num_tiles) {
      row_values[in.dst] = false;
    }
    if (!folds.folded.empty() && folds.folded[i]) {
      if (in.dtype != pto::v1::DT_FP32) name[in.dst] = name[in.srcs[0]];  // the stores round
      columns[in.dst] = false;
      continue;
    }
    if (plan.load_in_place[i]) {
      if (chunk == 0 && !per_row) {
        const Access a = MakeAccess(Viewed(p.buffers[in.buffer], in), fn.tile, in.index, -1);
        absl::StrAppend(&out, "  const float* g", i, " = static_cast<const float*>(buffers[",
                        in.buffer, "]) + (", a.offset, ");\n");
      }
      const std::string row =
          per_row ? RowOffset(MakeAccess(Viewed(p.buffers[in.buffer], in), fn.tile, in.index, -1))
                  : std::string();
      name[in.dst] = chunk > 0 ? absl::StrCat("(g", i, " + c)")
                     : !row.empty() ? absl::StrCat("(g", i, row, ")")
                                    : absl::StrCat("g", i);
      columns[in.dst] = plan.load_columns[i];
      continue;
    }
    if (in.op == PtoOpcode::kTLoad || in.op == PtoOpcode::kTStore) {
      const PtoBuffer& buf = p.buffers[in.buffer];
      const bool load = in.op == PtoOpcode::kTLoad;
      // The tile it loads: its own, or a folded cast's (FoldCasts).
      const int into = load && !folds.load_into.empty() && folds.load_into[i] >= 0
                           ? folds.load_into[i]
                           : in.dst;
      if (load) {
        name[into] = absl::StrCat("t", into);
        columns[into] = false;
      }
      // (A load with reduce_dim reads one slot along it: an accumulator.)
      const int reduced = is_row(load ? in.dst : in.srcs[0]) ? rank - 1 : in.reduce_dim;
      // A load through a reshape addresses the buffer as its view shape.
      Access a = MakeAccess(Viewed(buf, in), fn.tile, in.index, reduced, in.stride_dynamic);
      if (chunk > 0) {  // n dense elements at c
        a.extent4 = {1, 1, 1, n};
        a.strides4 = {0, 0, 0};
        a.strides4_text = {"0", "0", "0"};
        a.offset += at;
      }
      if (per_row) {  // one row (one value for a row tile) at (i0, i1, i2)
        a.offset += RowOffset(a);
        a.extent4 = {1, 1, 1, a.extent4[3]};
      }
      if (load && plan.load_rows[i]) {  // one value per row, not repeated along it
        a.extent4[3] = 1;
        a.bcast3 = false;
        row_values[into] = true;
      }
      const std::string type = GmType(buf.dtype);
      if (fn.runtime_extents) {
        // n0..n3: the task's extent per padded dim (args after the tile
        // offsets and dynamic offsets), 1 where the tile has extent 1.
        std::vector<std::string> ext;
        for (int k = 0; k < 4; ++k) {
          const int d = k - (4 - rank);
          ext.push_back(d < 0 || a.extent4[k] == 1
                          ? std::string("1")
                          : absl::StrCat("args[", fn.num_args - rank + d, "]"));
        }
        const std::string s3 = a.bcast3 ? "0" : a.strides4_text[3];
        const std::string pad = load ? LoadPad(fn, i) : std::string();
        absl::StrAppend(
            &out, "  pto_tile::", load ? "TLoadN<" : "TStoreN<", type, ", ",
            absl::StrJoin(a.extent4, ", "), ">(",
            load ? absl::StrCat("t", into, ", static_cast<const ", type,
                                "*>(buffers[", in.buffer, "]) + (", a.offset, ")")
                 : absl::StrCat("static_cast<", type, "*>(buffers[", in.buffer,
                                "]) + (", a.offset, "), ", name[in.srcs[0]]),
            ", ", a.strides4_text[0], ", ", a.strides4_text[1], ", ", a.strides4_text[2],
            load ? absl::StrCat(", ", s3) : "", ", ", absl::StrJoin(ext, ", "),
            pad.empty() ? "" : absl::StrCat(", ", pad), ");\n");
        continue;
      }
      // A transposed load (its innermost dim not contiguous) passes s3.
      const bool strided3 = load && a.strides4[3] > 1 && a.extent4[3] > 1;
      absl::StrAppend(
          &out, indent, "pto_tile::", load ? (strided3 ? "TLoadStrided<" : "TLoad<")
                                     : "TStore<",
          type, ", ", absl::StrJoin(a.extent4, ", "),
          load && a.bcast3 ? ", true" : "", ">(",
          load ? absl::StrCat("t", into, ", static_cast<const ", type,
                              "*>(buffers[", in.buffer, "]) + (", a.offset, ")")
               : absl::StrCat("static_cast<", type, "*>(buffers[", in.buffer,
                              "]) + (", a.offset, "), ", name[in.srcs[0]]),
          ", ", a.strides4_text[0], ", ", a.strides4_text[1], ", ", a.strides4_text[2],
          strided3 ? absl::StrCat(", ", a.strides4_text[3]) : "", ");\n");
      continue;
    }
    if (one_row && FusesSoftmaxRow(fn, i, is_row, columns, plan)) {
      // One call writes the row's result into GM (it prefetches that row
      // for writing itself) or its UB tile; the row tiles and e are never
      // written.
      const PtoInstr& mul = fn.body[i + 5];
      std::string o = absl::StrCat("t", mul.dst);
      if (plan.writes_store[i + 5] >= 0) {
        const PtoInstr& st = fn.body[plan.writes_store[i + 5]];
        const Access a = MakeAccess(p.buffers[st.buffer], fn.tile, st.index, -1);
        o = absl::StrCat("o", i + 5);
        absl::StrAppend(&out, indent, "float* ", o, " = static_cast<float*>(buffers[", st.buffer,
                        "]) + (", a.offset, row_at(a), ");\n");
      }
      absl::StrAppend(&out, indent, "pto_tile::TSoftmaxRow<", cols, ">(", o, ", ",
                      name[in.srcs[0]], next_row(i, in.srcs[0]), ");\n");
      name[mul.dst] = o;
      columns[mul.dst] = false;
      prefetch_pending = false;
      i += 5;
      continue;
    }
    if (one_row && FusesSubExpSum(fn, i, is_row, columns, plan)) {
      const PtoInstr& exp = fn.body[i + 1];
      const PtoInstr& sum = fn.body[i + 2];
      const std::string x = name[in.srcs[0]], m = name[in.srcs[1]];
      // x read in place per row: prefetch the next row of the tile, and
      // (RowPrefetch) this row of the function's GM result.
      std::string next = next_row(i, in.srcs[0]);
      name[exp.dst] = absl::StrCat("t", exp.dst);
      name[sum.dst] = absl::StrCat("t", sum.dst);
      columns[exp.dst] = false;
      if (prefetch_pending && !prefetch.writes.empty()) {
        absl::StrAppend(&next, next.empty() ? ", nullptr" : "", ", ", prefetch.writes[0]);
      }
      prefetch_pending = false;
      absl::StrAppend(&out, indent, "pto_tile::TSubExpSumRow<", cols,
                      SoftmaxExpAt(fn, i) ? ", true" : "", ">(", name[exp.dst], ", ",
                      name[sum.dst], ", ", x, ", ", m, next, ");\n");
      i += 2;
      continue;
    }
    const RowRun run = one_row ? FindRowRun(fn, i, cols, is_row, columns, plan) : RowRun();
    if (run.length > 0) {
      const int end = i + run.length;  // one past the run's last arithmetic
      // value[t]: tile t's value at element k inside the loop. Arrays and
      // GM rows are __restrict parameters r0, r1, .. of the loop's lambda
      // (it reads and writes distinct memory: PerRow has no buffer both
      // loaded and stored, and a tile is one parameter however often used).
      std::map<int, std::string> value;
      std::vector<std::string> bases;     // the names behind r0, r1, ..
      std::vector<bool> written;
      auto restricted = [&](const std::string& base, bool write) {
        size_t k = std::find(bases.begin(), bases.end(), base) - bases.begin();
        if (k == bases.size()) {
          bases.push_back(base);
          written.push_back(false);
        }
        written[k] = written[k] || write;
        return absl::StrCat("r", k);
      };
      auto operand = [&](int t) {
        auto it = value.find(t);
        if (it != value.end()) return it->second;
        return absl::StrCat(restricted(name[t], false), is_row(t) ? "[0]" : "[k]");
      };
      std::string body;
      for (int j = i; j < end; ++j) {
        const PtoInstr& r = fn.body[j];
        const std::string a = operand(r.srcs[0]), b = operand(r.srcs[1]);
        const std::string v = absl::StrCat("v", j);
        absl::StrAppend(&body, indent, "    const float ", v, " = pto_tile::",
                        PtoHostFunction(r.op), "Fn::Apply(", a, ", ", b, ");\n");
        value[r.dst] = v;
        columns[r.dst] = false;
        if (plan.writes_store[j] >= 0) {
          const PtoInstr& st = fn.body[plan.writes_store[j]];
          const Access acc = MakeAccess(p.buffers[st.buffer], fn.tile, st.index, -1);
          absl::StrAppend(&out, indent, "float* o", j, " = static_cast<float*>(buffers[",
                          st.buffer, "]) + (", acc.offset, row_at(acc), ");\n");
          name[r.dst] = absl::StrCat("o", j);
          absl::StrAppend(&body, indent, "    ", restricted(name[r.dst], true), "[k] = ", v,
                          ";\n");
          continue;
        }
        // Written to its tile only when read after the run (the last
        // definition in the run is the one read).
        bool redefined = false;
        for (int k = j + 1; k < end; ++k) redefined = redefined || fn.body[k].dst == r.dst;
        name[r.dst] = absl::StrCat("t", r.dst);
        if (!redefined && ReadLater(fn, run.sum >= 0 ? run.sum : end - 1, r.dst)) {
          absl::StrAppend(&body, indent, "    ", restricted(name[r.dst], true), "[k] = ", v,
                          ";\n");
        }
      }
      // A lambda with __restrict parameters: GCC's -O2 vectorizer trusts
      // those (not local restrict pointers) and adds no alias checks.
      std::vector<std::string> params;
      for (size_t k = 0; k < bases.size(); ++k) {
        params.push_back(absl::StrCat(written[k] ? "float" : "const float", "* __restrict r", k));
      }
      const std::string lambda = absl::StrCat("[](", absl::StrJoin(params, ", "), ") {\n");
      const std::string call = absl::StrCat(indent, "}(", absl::StrJoin(bases, ", "), ");\n");
      if (run.sum < 0) {
        absl::StrAppend(&out, indent, lambda, indent, "  for (int64_t k = 0; k < ", cols,
                        "; ++k) {\n", body, indent, "  }\n", call);
      } else {
        // ReduceRow's lanes: element k in lane k % 16 (the tail past the
        // last group of 16 into lanes 0..), then pairwise (SumLanes, in
        // registers); the sum is written after the loop (its row tile may
        // be an operand).
        const int64_t grouped = cols / 16 * 16;
        const std::string last = absl::StrCat("v", end - 1);
        const PtoInstr& sum = fn.body[run.sum];
        // The row's prefetches (RowPrefetch), one line per group of 16, as
        // parameters p0, p1, .. (not __restrict: never accessed).
        std::string prefetches;
        std::string lambda_pf = lambda, call_pf = call;
        if (prefetch_pending) {
          std::vector<std::string> pf_params, pf_args;
          for (const std::string& r : prefetch.reads) {
            const std::string v = absl::StrCat("p", pf_params.size());
            pf_params.push_back(absl::StrCat("const float* ", v));
            pf_args.push_back(r);
            absl::StrAppend(&prefetches, indent, "   __builtin_prefetch(", v, " + k0);\n");
          }
          for (const std::string& w : prefetch.writes) {
            const std::string v = absl::StrCat("p", pf_params.size());
            pf_params.push_back(absl::StrCat("float* ", v));
            pf_args.push_back(w);
            absl::StrAppend(&prefetches, indent, "   __builtin_prefetch(", v, " + k0, 1);\n");
          }
          params.insert(params.end(), pf_params.begin(), pf_params.end());
          std::vector<std::string> args = bases;
          args.insert(args.end(), pf_args.begin(), pf_args.end());
          lambda_pf = absl::StrCat("[](", absl::StrJoin(params, ", "), ") {\n");
          call_pf = absl::StrCat(indent, "}(", absl::StrJoin(args, ", "), ");\n");
          prefetch_pending = false;
        }
        absl::StrAppend(&out, indent, "t", sum.dst, "[0] = ", lambda_pf, indent,
                        "  float lane[16] = {};\n", indent, "  for (int64_t k0 = 0; k0 < ",
                        grouped, "; k0 += 16) {\n", prefetches, indent,
                        "   for (int64_t j = 0; j < 16; ++j) {\n", indent,
                        "    const int64_t k = k0 + j;\n", body, indent,
                        "    lane[j] = lane[j] + ", last, ";\n", indent, "   }\n", indent,
                        "  }\n");
        if (grouped < cols) {
          absl::StrAppend(&out, indent, "  for (int64_t k = ", grouped, "; k < ", cols,
                          "; ++k) {\n", body, indent, "    lane[k - ", grouped,
                          "] = lane[k - ", grouped, "] + ", last, ";\n", indent, "  }\n");
        }
        absl::StrAppend(&out, indent, "  return pto_tile::SumLanes(lane);\n", call_pf);
        name[sum.dst] = absl::StrCat("t", sum.dst);
      }
      i = (run.sum >= 0 ? run.sum : end - 1);
      continue;
    }
    if (in.op == PtoOpcode::kMGather || in.op == PtoOpcode::kMScatter) {
      absl::StatusOr<std::string> call = IndexedCall(p, fn, in, name, tile4);
      if (!call.ok()) return call.status();
      if (in.op == PtoOpcode::kMGather) name[in.dst] = absl::StrCat("t", in.dst);
      absl::StrAppend(&out, indent, *call);
      continue;
    }
    const char* f = PtoHostFunction(in.op);
    if (static_cast<int>(in.srcs.size()) != PtoNumTileSources(in.op) ||
        static_cast<int>(in.scalars.size()) != PtoNumScalars(in.op)) {
      return absl::InternalError(absl::StrCat(
          PtoOpcodeName(in.op), ": wrong number of sources or scalars"));
    }
    std::vector<std::string> args;
    for (int s : in.srcs) args.push_back(name[s]);
    // Source layouts for a Rows form (before the destination's name changes).
    std::vector<const char*> layout;
    bool rows_form = false;
    for (int s : in.srcs) {
      layout.push_back(is_row(s) || row_values[s] ? "pto_tile::kRow"
                       : columns[s]               ? "pto_tile::kCol"
                                                  : "pto_tile::kFull");
      rows_form = rows_form || is_row(s) || row_values[s] || columns[s];
    }
    columns[in.dst] = false;
    if (plan.writes_store[i] >= 0) {
      const PtoInstr& st = fn.body[plan.writes_store[i]];
      const Access a = MakeAccess(p.buffers[st.buffer], fn.tile, st.index, -1);
      absl::StrAppend(&out, indent, "float* o", i, " = static_cast<float*>(buffers[",
                      st.buffer, "]) + (", a.offset, at, row_at(a), ");\n");
      name[in.dst] = absl::StrCat("o", i);
    } else {
      name[in.dst] = absl::StrCat("t", in.dst);
    }
    args.insert(args.begin(), name[in.dst]);
    // Immediates take the type of the tiles they meet: the first source's,
    // or (TFILL, no sources) the destination's.
    const int scalar_tile = in.srcs.empty() ? in.dst : in.srcs[0];
    const pto::v1::DataType scalar_storage =
        scalar_tile >= 0 && scalar_tile < static_cast<int>(fn.ub_types.size())
            ? fn.ub_types[scalar_tile]
            : pto::v1::DT_FP32;
    const pto::v1::DataType scalar_values =
        in.srcs.empty() ? in.dtype : ValueType(fn, i, in.srcs[0], in.dtype);
    for (size_t j = 0; j < in.scalars.size(); ++j) {
      // (TARANGE's start and step are doubles whatever the tile type.)
      args.push_back(in.op == PtoOpcode::kTArange
                         ? ScalarOperand(in, j, pto::v1::DT_DOUBLE, in.dtype, rank)
                         : ScalarOperand(in, j, scalar_storage, scalar_values, rank));
    }
    if (in.reduce_dim >= 0) {
      // Reductions: template <E0, E1, E2, E3, K[, D]> over the padded tile;
      // TARGFIRST also takes the task's offset along the reduced dim.
      std::vector<int64_t> e4 = tile4;
      if (per_row) e4 = {1, 1, 1, cols};
      if (in.op == PtoOpcode::kTArgFirst) {
        args.push_back(absl::StrCat("args[", in.reduce_dim, "]"));
      }
      const bool narrow =
          in.dtype == pto::v1::DT_FP16 || in.dtype == pto::v1::DT_BF16;
      absl::StrAppend(&out, indent, "pto_tile::", f, "<", absl::StrJoin(e4, ", "), ", ",
                      in.reduce_dim + 4 - rank,
                      narrow ? absl::StrCat(", ", GmType(in.dtype)) : "", ">(",
                      absl::StrJoin(args, ", "), ");\n");
      continue;
    }
    // The destination's type: TCVT always names it; other instructions
    // only when their f32 result must be rounded (FP16, BF16).
    // INT32 arithmetic on int64 tiles wraps to 32 bits the same way.
    const bool narrow =
        ((in.dtype == pto::v1::DT_FP16 || in.dtype == pto::v1::DT_BF16) &&
         !plan.unrounded[i]) ||
        (in.dtype == pto::v1::DT_INT32 && WrapsInt32(in.op));
    const bool typed = in.op == PtoOpcode::kTCvt || in.op == PtoOpcode::kTFill ||
                       in.op == PtoOpcode::kTArange;
    if (in.op == PtoOpcode::kTArange) args.push_back("args[0]");
    const std::string round_to =
        typed || narrow
            ? absl::StrCat(", ", GmType(in.dtype))
            : std::string();
    // A full destination with row or column sources: the binary op's Rows
    // form (template <R, C, layout a, layout b[, D]>) repeats their values
    // along each row or down each column.
    if (!is_row(in.dst) && rows_form) {
      if (in.srcs.size() != 2 || !PtoHasRowsForm(in.op)) {
        return absl::InternalError(absl::StrCat(
            PtoOpcodeName(in.op), ": no form that reads a row tile"));
      }
      absl::StrAppend(&out, indent, "pto_tile::", f, "Rows<", row_n, ", ", cols, ", ",
                      layout[0], ", ", layout[1], round_to, ">(",
                      absl::StrJoin(args, ", "), ");\n");
      continue;
    }
    absl::StrAppend(&out, indent, "pto_tile::", f, "<", is_row(in.dst) ? row_n : n,
                    round_to, ">(", absl::StrJoin(args, ", "), ");\n");
  }
  if (chunk > 0 || per_row) absl::StrAppend(&out, "  }\n");
  absl::StrAppend(&out, "}\n\n");
  return out;
}

// Row code with a run-time length (a fused row group over a
// symbolic last dim, expand_to_tiles.h ExpandOptions::symbolic_rows). The
// group's generic function (extents from its args) runs rows of c <= the
// tile's row length (the cap), c its last extent. As the static per-row
// form, it runs one row at a time: a full tile is an array of the cap
// rounded up to whole chunks (pto_tile.h kRowChunk) holding one row, a row
// tile one value. Loads copy the row's c values (zeros to the chunk's end);
// elementwise instructions run over the row's whole chunks through their
// static kRowChunk forms (consecutive ones in one loop over the chunks);
// reductions take exactly c values in the static row code's order
// (pto_tile's ReduceRowN), softmax's x - m, exp and sum are one pass
// (TSubExpSumRowN, where FusesSubExpSum applies); stores write c values. So
// a row gives the bits the static row code gives at c, and a short row costs
// its length, not the cap's. As GM-direct operands do for static code
// (PlanDirect), an f32 row read only by those exact-length instructions is
// read in place, and the last elementwise result that only a store of a
// contiguous f32 row reads is written into GM, its last partial chunk
// through its tile.
bool RuntimeRows(const PtoFunction& fn) {
  if (!fn.runtime_extents || fn.core != pto::v1::CORE_TYPE_VECTOR || fn.tile.empty()) {
    return false;
  }
  for (bool row : fn.ub_rows) {
    if (row) return true;
  }
  return false;
}

absl::StatusOr<std::string> EmitRuntimeRowFunction(const PtoProgram& p, int index) {
  const PtoFunction& fn = p.functions[index];
  const int rank = static_cast<int>(fn.tile.size());
  const int n = static_cast<int>(fn.body.size());
  const int64_t chunks = (fn.tile.back() + kRowChunkElements - 1) / kRowChunkElements;
  auto is_row = [&](int t) {
    return t >= 0 && t < static_cast<int>(fn.ub_rows.size()) && fn.ub_rows[t];
  };
  auto storage = [&](int t) {
    return t >= 0 && t < static_cast<int>(fn.ub_types.size()) ? fn.ub_types[t]
                                                                : pto::v1::DT_FP32;
  };
  auto unsupported = [&](const PtoInstr& in, const std::string& why) {
    return absl::InternalError(absl::StrCat("function ", fn.name, ": ", PtoOpcodeName(in.op),
                                            " in a row group over a symbolic row: ", why));
  };
  for (const PtoInstr& in : fn.body) {
    if ((in.op == PtoOpcode::kTLoad || in.op == PtoOpcode::kTStore) &&
        (in.buffer < 0 || in.buffer >= static_cast<int>(p.buffers.size()))) {
      return absl::InternalError("PTO instruction names a missing buffer");
    }
  }
  // The access of load/store i, addressed per row (row tiles: one value).
  auto access = [&](const PtoInstr& in) {
    const int t = in.op == PtoOpcode::kTLoad ? in.dst : in.srcs[0];
    return MakeAccess(Viewed(p.buffers[in.buffer], in), fn.tile, in.index,
                      is_row(t) ? rank - 1 : in.reduce_dim, in.stride_dynamic);
  };
  // " + i0 * s0 + ..": this row's place in an access.
  auto row_offset = [](const Access& a) {
    std::string at;
    for (int k = 0; k < 3; ++k) {
      if (a.strides4_text[k] != "0") absl::StrAppend(&at, " + i", k, " * ", a.strides4_text[k]);
    }
    return at;
  };
  auto contiguous_f32 = [&](const PtoInstr& in) {
    const Access a = access(in);
    return p.buffers[in.buffer].dtype == pto::v1::DT_FP32 && in.view_shape.empty() &&
           !a.bcast3 && a.strides4_text[3] == "1";
  };
  // Softmax's middles (FusesSubExpSum, with no GM-direct operands planned).
  const DirectPlan none = NoDirectOperands(n);
  const std::vector<bool> no_columns(fn.num_tiles, false);
  std::vector<bool> triple(n, false);
  for (int i = 0; i < n; ++i) {
    if (FusesSubExpSum(fn, i, is_row, no_columns, none)) {
      triple[i] = true;
      i += 2;
    }
  }
  std::vector<int> loaded, stored;
  for (const PtoInstr& in : fn.body) {
    if (in.op == PtoOpcode::kTLoad) loaded.push_back(in.buffer);
    if (in.op == PtoOpcode::kTStore) stored.push_back(in.buffer);
  }
  auto both = [&](int b) {
    return std::find(loaded.begin(), loaded.end(), b) != loaded.end() &&
           std::find(stored.begin(), stored.end(), b) != stored.end();
  };
  // Loads read in place: every reader (until the tile is written again)
  // takes exactly c values: a row reduction, or x of a fused softmax middle.
  std::vector<bool> in_place(n, false);
  for (int i = 0; i < n; ++i) {
    const PtoInstr& in = fn.body[i];
    if (in.op != PtoOpcode::kTLoad || is_row(in.dst) || in.reduce_dim >= 0 ||
        storage(in.dst) != pto::v1::DT_FP32 || !contiguous_f32(in) || both(in.buffer)) {
      continue;
    }
    bool exact = true;
    for (int j = i + 1; exact && j < n; ++j) {
      const PtoInstr& r = fn.body[j];
      if (std::find(r.srcs.begin(), r.srcs.end(), in.dst) != r.srcs.end()) {
        exact = r.op != PtoOpcode::kTStore &&
                (r.reduce_dim >= 0 ||
                 (triple[j] && r.srcs[0] == in.dst && r.srcs[1] != in.dst));
      }
      if (r.op != PtoOpcode::kTStore && r.dst == in.dst) break;
    }
    in_place[i] = exact;
  }
  // The last elementwise instruction, written into GM when a contiguous f32
  // store alone reads its result (writes_store[i]: that store).
  std::vector<int> writes_store(n, -1);
  int last = -1;
  for (int i = 0; i < n; ++i) {
    if (fn.body[i].op != PtoOpcode::kTLoad && fn.body[i].op != PtoOpcode::kTStore) last = i;
  }
  const bool in_triple = last >= 2 && (triple[last - 1] || triple[last - 2]);
  if (last >= 0 && fn.body[last].reduce_dim < 0 && !is_row(fn.body[last].dst) && !in_triple &&
      fn.body[last].dtype == pto::v1::DT_FP32 && storage(fn.body[last].dst) == pto::v1::DT_FP32 &&
      fn.body[last].op != PtoOpcode::kTCvt && fn.body[last].op != PtoOpcode::kTFill) {
    int store = -1, readers = 0;
    for (int j = last + 1; j < n; ++j) {
      const std::vector<int>& srcs = fn.body[j].srcs;
      if (std::find(srcs.begin(), srcs.end(), fn.body[last].dst) == srcs.end()) continue;
      ++readers;
      store = j;
    }
    if (readers == 1 && fn.body[store].op == PtoOpcode::kTStore &&
        fn.body[store].reduce_dim < 0 && contiguous_f32(fn.body[store]) &&
        std::find(loaded.begin(), loaded.end(), fn.body[store].buffer) == loaded.end()) {
      writes_store[last] = store;
    }
  }

  std::string out = absl::StrCat("// @f", index, "\nstatic void pto_f", index,
                                 "(void* const* buffers, const int64_t* args) {\n");
  // Extents of the padded dims 0..2 (the rows) and the row length c.
  std::vector<std::string> extent(4, "1");
  for (int d = 0; d < rank; ++d) {
    extent[4 - rank + d] = absl::StrCat("args[", fn.num_args - rank + d, "]");
  }
  absl::StrAppend(&out, "  const int64_t c = ", extent[3], ";\n",
                  "  const int64_t chunked = (c + pto_tile::kRowChunk - 1) / "
                  "pto_tile::kRowChunk * pto_tile::kRowChunk;\n",
                  "  for (int64_t i0 = 0; i0 < ", extent[0], "; ++i0)",
                  " for (int64_t i1 = 0; i1 < ", extent[1], "; ++i1)",
                  " for (int64_t i2 = 0; i2 < ", extent[2], "; ++i2) {\n");
  for (int t = 0; t < fn.num_tiles; ++t) {
    absl::StrAppend(&out, "    alignas(64) ", UbType(storage(t)), " t", t, "[",
                    is_row(t) ? int64_t{1} : chunks * kRowChunkElements, "];\n");
  }
  // The C++ name of each tile's current value: its array, or a row in GM.
  std::vector<std::string> name(fn.num_tiles);
  for (int t = 0; t < fn.num_tiles; ++t) name[t] = absl::StrCat("t", t);
  bool in_chunks = false;  // inside a loop over the row's chunks (k)
  auto close_chunks = [&] {
    if (in_chunks) absl::StrAppend(&out, "    }\n");
    in_chunks = false;
  };
  for (int i = 0; i < n; ++i) {
    const PtoInstr& in = fn.body[i];
    if (in.op == PtoOpcode::kTLoad || in.op == PtoOpcode::kTStore) {
      close_chunks();
      const bool load = in.op == PtoOpcode::kTLoad;
      const int t = load ? in.dst : in.srcs[0];
      if (in.reduce_dim >= 0 && !(in.reduce_dim == rank - 1 && is_row(t))) {
        return unsupported(in, "an accumulator slot");
      }
      const PtoBuffer& buf = p.buffers[in.buffer];
      const Access a = access(in);
      const std::string type = GmType(buf.dtype);
      const std::string at = absl::StrCat(a.offset, row_offset(a));
      if (load) name[t] = absl::StrCat("t", t);
      if (is_row(t)) {
        absl::StrAppend(&out, "    ",
                        load ? absl::StrCat("t", t, "[0] = pto_tile::Elem<", type,
                                            ">::Load(static_cast<const ", type, "*>(buffers[",
                                            in.buffer, "])[", at, "]);\n")
                             : absl::StrCat("static_cast<", type, "*>(buffers[", in.buffer,
                                            "])[", at, "] = pto_tile::Elem<", type,
                                            ">::Store(t", t, "[0]);\n"));
        continue;
      }
      if (in_place[i]) {
        absl::StrAppend(&out, "    const float* const g", i, " = static_cast<const float*>(buffers[",
                        in.buffer, "]) + (", at, ");\n");
        name[t] = absl::StrCat("g", i);
        continue;
      }
      const std::string s3 = a.bcast3 ? "0" : a.strides4_text[3];
      if (load) {
        absl::StrAppend(&out, "    pto_tile::TLoadRowN<", type, ">(t", t,
                        ", static_cast<const ", type, "*>(buffers[", in.buffer, "]) + (", at,
                        "), ", s3, ", c);\n");
        continue;
      }
      if (s3 != "1") return unsupported(in, "a store whose row is not contiguous");
      if (std::find(writes_store.begin(), writes_store.end(), i) != writes_store.end()) {
        // Full chunks went straight to GM; the last partial one is in t.
        const int producer = static_cast<int>(
            std::find(writes_store.begin(), writes_store.end(), i) - writes_store.begin());
        absl::StrAppend(&out, "    for (int64_t j = c / pto_tile::kRowChunk * pto_tile::kRowChunk; "
                        "j < c; ++j) o", producer, "[j] = t", t, "[j];\n");
        continue;
      }
      absl::StrAppend(&out, "    pto_tile::TStoreRowN<", type, ">(static_cast<", type,
                      "*>(buffers[", in.buffer, "]) + (", at, "), t", t, ", c);\n");
      continue;
    }
    if (static_cast<int>(in.srcs.size()) != PtoNumTileSources(in.op) ||
        static_cast<int>(in.scalars.size()) != PtoNumScalars(in.op)) {
      return absl::InternalError(absl::StrCat(
          PtoOpcodeName(in.op), ": wrong number of sources or scalars"));
    }
    if (triple[i]) {  // x - m, exp, sum: one pass over c values
      close_chunks();
      const PtoInstr& exp = fn.body[i + 1];
      const PtoInstr& sum = fn.body[i + 2];
      absl::StrAppend(&out, "    pto_tile::TSubExpSumRowN", SoftmaxExpAt(fn, i) ? "<true>" : "",
                      "(t", exp.dst, ", t", sum.dst, ", ", name[in.srcs[0]], ", ",
                      name[in.srcs[1]], ", c);\n");
      name[exp.dst] = absl::StrCat("t", exp.dst);
      name[sum.dst] = absl::StrCat("t", sum.dst);
      i += 2;
      continue;
    }
    const bool narrow = in.dtype == pto::v1::DT_FP16 || in.dtype == pto::v1::DT_BF16;
    if (in.reduce_dim >= 0) {
      const bool reduction = in.op == PtoOpcode::kTRedSum || in.op == PtoOpcode::kTRedMax ||
                             in.op == PtoOpcode::kTRedMin || in.op == PtoOpcode::kTRedProd;
      if (!reduction || in.reduce_dim != rank - 1 || !is_row(in.dst) || is_row(in.srcs[0]) ||
          storage(in.dst) != pto::v1::DT_FP32) {
        return unsupported(in, "not a last-dim reduction of a row into a row tile");
      }
      close_chunks();
      absl::StrAppend(&out, "    pto_tile::", PtoHostFunction(in.op), "RowN<",
                      narrow ? GmType(in.dtype) : "float", ">(t", in.dst, ", ",
                      name[in.srcs[0]], ", c);\n");
      name[in.dst] = absl::StrCat("t", in.dst);
      continue;
    }
    if (in.op == PtoOpcode::kTArange) return unsupported(in, "it reads the tile's offset");
    for (int src : in.srcs) {
      if (name[src] != absl::StrCat("t", src)) {
        return absl::InternalError(absl::StrCat("function ", fn.name, ": a row read in place "
                                                "by an elementwise instruction"));
      }
    }
    const bool typed = in.op == PtoOpcode::kTCvt || in.op == PtoOpcode::kTFill;
    const bool wrap = in.dtype == pto::v1::DT_INT32 && WrapsInt32(in.op);
    const std::string round_to =
        typed || narrow || wrap ? absl::StrCat(", ", GmType(in.dtype)) : std::string();
    const int scalar_tile = in.srcs.empty() ? in.dst : in.srcs[0];
    const pto::v1::DataType scalar_values =
        in.srcs.empty() ? in.dtype : ValueType(fn, i, in.srcs[0], in.dtype);
    std::vector<std::string> scalars;
    for (size_t j = 0; j < in.scalars.size(); ++j) {
      scalars.push_back(ScalarOperand(in, j, storage(scalar_tile), scalar_values, rank));
    }
    const std::string tail = scalars.empty() ? "" : absl::StrCat(", ", absl::StrJoin(scalars, ", "));
    name[in.dst] = absl::StrCat("t", in.dst);
    if (is_row(in.dst)) {  // one value per row
      for (int src : in.srcs) {
        if (!is_row(src)) return unsupported(in, "a row value computed from a full tile");
      }
      close_chunks();
      std::vector<std::string> args = {absl::StrCat("t", in.dst)};
      for (int src : in.srcs) args.push_back(absl::StrCat("t", src));
      absl::StrAppend(&out, "    pto_tile::", PtoHostFunction(in.op), "<1", round_to, ">(",
                      absl::StrJoin(args, ", "), tail, ");\n");
      continue;
    }
    std::string dst = absl::StrCat("t", in.dst, " + k");
    if (writes_store[i] >= 0) {
      const PtoInstr& st = fn.body[writes_store[i]];
      const Access a = access(st);
      close_chunks();
      absl::StrAppend(&out, "    float* const o", i, " = static_cast<float*>(buffers[", st.buffer,
                      "]) + (", a.offset, row_offset(a), ");\n");
      dst = absl::StrCat("(k + pto_tile::kRowChunk <= c ? o", i, " : t", in.dst, ") + k");
    }
    if (!in_chunks) {
      absl::StrAppend(&out, "    for (int64_t k = 0; k < chunked; k += pto_tile::kRowChunk) {\n");
      in_chunks = true;
    }
    std::vector<std::string> args = {dst};
    bool rows_form = false;
    std::vector<const char*> layout;
    for (int src : in.srcs) {
      args.push_back(is_row(src) ? absl::StrCat("t", src) : absl::StrCat("t", src, " + k"));
      layout.push_back(is_row(src) ? "pto_tile::kRow" : "pto_tile::kFull");
      rows_form = rows_form || is_row(src);
    }
    if (rows_form) {
      if (in.srcs.size() != 2 || !PtoHasRowsForm(in.op)) {
        return unsupported(in, "no form that reads a row tile");
      }
      absl::StrAppend(&out, "      pto_tile::", PtoHostFunction(in.op), "Rows<1, pto_tile::kRowChunk, ",
                      layout[0], ", ", layout[1], round_to, ">(", absl::StrJoin(args, ", "),
                      tail, ");\n");
      continue;
    }
    absl::StrAppend(&out, "      pto_tile::", PtoHostFunction(in.op), "<pto_tile::kRowChunk",
                    round_to, ">(", absl::StrJoin(args, ", "), tail, ");\n");
  }
  close_chunks();
  absl::StrAppend(&out, "  }\n}\n\n");
  return out;
}

}  // namespace

absl::StatusOr<std::string> GenerateHostCpp(const PtoProgram& p) {
  std::string out =
      "// Generated by the PTO compiler (host target). Do not edit.\n"
      "#include <stdint.h>\n"
      "#include \"kernel_abi.h\"\n"
      "#include \"pto_tile.h\"\n";
  // Only kernels with matmuls parse the cube header.
  for (const PtoFunction& fn : p.functions) {
    if (fn.core == pto::v1::CORE_TYPE_CUBE) {
      absl::StrAppend(&out, "#include \"pto_cube.h\"\n");
      bool f16 = false;
      for (const PtoBuffer& buf : p.buffers) f16 = f16 || buf.dtype == pto::v1::DT_FP16;
      if (f16) {  // f16 matmul operands widen a row at a time (cube_codegen.cc)
        absl::StrAppend(
            &out,
            "\nstruct PtoCubeHalfRows {\n"
            "  static void Row(float* d, const pto_tile::half* s, int n) {\n"
            "    pto_tile::HalvesToFloats(d, reinterpret_cast<const uint16_t*>(s), n);\n"
            "  }\n"
            "};\n");
      }
      break;
    }
  }
  absl::StrAppend(&out, "\nnamespace {\n\n");
  for (int f = 0; f < static_cast<int>(p.functions.size()); ++f) {
    absl::StatusOr<std::string> fn =
        RuntimeRows(p.functions[f]) ? EmitRuntimeRowFunction(p, f) : EmitFunction(p, f);
    if (!fn.ok()) return fn.status();
    absl::StrAppend(&out, *fn);
  }
  absl::StrAppend(&out, "const pto_block_fn kBlocks[] = {");
  for (size_t f = 0; f < p.functions.size(); ++f) {
    absl::StrAppend(&out, f == 0 ? "" : ", ", "pto_f", f);
  }
  absl::StrAppend(&out, p.functions.empty() ? "nullptr" : "", "};\n\n");
  absl::StrAppend(&out, "}  // namespace\n\n");
  absl::StrAppend(
      &out,
      "#define PTO_EXPORT extern \"C\" __attribute__((visibility(\"default\")))\n"
      "PTO_EXPORT int pto_abi_version(void) { return PTO_KERNEL_FORMAT_VERSION; }\n"
      "PTO_EXPORT int pto_num_blocks(void) { return ",
      p.functions.size(),
      "; }\n"
      "PTO_EXPORT pto_block_fn pto_block(int index) {\n"
      "  return index >= 0 && index < pto_num_blocks() ? kBlocks[index] : nullptr;\n"
      "}\n");
  return out;
}

}  // namespace pto::compiler
