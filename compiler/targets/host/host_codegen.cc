#include "compiler/targets/host/host_codegen.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/targets/host/cube_codegen.h"

namespace pto::compiler {
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

// Scalar operand j of `in` (on tiles of storage type `storage`, in a
// function whose tile has rank `rank`): its immediate, or for a scalar over
// symbols (x * n: PtoInstr::scalar_dynamic) its int64 dynamic arg converted
// to the type the immediate would have.
std::string ScalarOperand(const PtoInstr& in, size_t j, pto::v1::DataType storage, int rank) {
  const int dynamic = j < in.scalar_dynamic.size() ? in.scalar_dynamic[j] : -1;
  if (dynamic < 0) return ScalarLiteral(in.scalars[j], storage);
  return absl::StrCat("static_cast<", storage == pto::v1::DT_FP32 ? "float" : "double",
                      ">(args[", rank + dynamic, "])");
}

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
      return true;
    default:
      return false;
  }
}

// Extents and GM strides padded to four dims (leading 1s / 0 strides).
struct Access {
  std::vector<int64_t> extent4;   // E0..E3
  std::vector<int64_t> strides4;  // s0..s2 (s3 = 1, or 0 when bcast3)
  // The same as C++ expressions: a dynamic inner dim's stride is an arg.
  std::vector<std::string> strides4_text;
  bool bcast3 = false;            // the innermost dim is broadcast
  std::string offset;             // element offset expression from args
};

// How a function with tile extents `tile` addresses `buf` through `index`
// (one entry per buffer dim; empty: aligned to the tile's last dims, numpy
// broadcasting). Dims the buffer broadcasts along (size 1, or no buffer
// dim) get stride 0 and no offset term; a divided index addresses one slot
// per tile. `reduced_dim` (>= 0) has extent 1 (a reduction's result).
// `buf` as a load through a reshape addresses it: with the view shape.
PtoBuffer Viewed(const PtoBuffer& buf, const PtoInstr& in) {
  PtoBuffer as = buf;
  if (!in.view_shape.empty()) as.shape = in.view_shape;
  return as;
}

Access MakeAccess(const PtoBuffer& buf, const std::vector<int64_t>& tile,
                  std::vector<GmIndex> index, int reduced_dim,
                  const std::vector<int>& stride_dynamic = {}) {
  const int rank = static_cast<int>(tile.size());
  const int brank = static_cast<int>(buf.shape.size());
  if (index.empty()) index = AlignedIndex(brank, rank);
  std::vector<int64_t> buf_strides(brank);
  std::vector<std::string> stride_text(brank);
  int64_t s = 1;
  for (int j = brank - 1; j >= 0; --j) {
    buf_strides[j] = s;
    s *= buf.shape[j];
    const bool dynamic = j < static_cast<int>(stride_dynamic.size()) && stride_dynamic[j] >= 0;
    stride_text[j] = dynamic ? absl::StrCat("args[", rank + stride_dynamic[j], "]")
                             : absl::StrCat(buf_strides[j]);
  }
  std::vector<int64_t> strides(rank, 0);
  std::vector<std::string> strides_text(rank, "0");
  std::vector<std::string> terms;
  for (int j = 0; j < brank; ++j) {
    const GmIndex& x = index[j];
    const bool dynamic_stride =
        j < static_cast<int>(stride_dynamic.size()) && stride_dynamic[j] >= 0;
    if (x.offset != 0) {
      terms.push_back(dynamic_stride ? absl::StrCat(x.offset, " * ", stride_text[j])
                                     : absl::StrCat(x.offset * buf_strides[j]));
    }
    if (x.dynamic >= 0) {  // a loop-dependent offset, after the tile offsets
      terms.push_back(absl::StrCat("args[", rank + x.dynamic, "] * ", stride_text[j]));
    }
    if (x.space_dim < 0 || buf.shape[j] == 1) continue;
    strides[x.space_dim] = buf_strides[j];
    strides_text[x.space_dim] = stride_text[j];
    terms.push_back(x.div > 1 ? absl::StrCat("(args[", x.space_dim, "] / ", x.div,
                                             ") * ", stride_text[j])
                              : absl::StrCat("args[", x.space_dim, "] * ",
                                             stride_text[j]));
  }
  std::vector<int64_t> extent = tile;
  if (reduced_dim >= 0) extent[reduced_dim] = 1;
  Access a;
  a.extent4.assign(4 - rank, 1);
  a.extent4.insert(a.extent4.end(), extent.begin(), extent.end());
  a.strides4.assign(4 - rank, 0);
  a.strides4.insert(a.strides4.end(), strides.begin(), strides.end());
  a.strides4_text.assign(4 - rank, "0");
  a.strides4_text.insert(a.strides4_text.end(), strides_text.begin(), strides_text.end());
  a.bcast3 = a.strides4[3] == 0 && a.extent4[3] > 1;
  a.offset = terms.empty() ? "0" : absl::StrJoin(terms, " + ");
  return a;
}

// Whether an access covers a dense run of GM: the tile's rows follow each
// other with no gap and no broadcast, as they do in UB.
bool IsDense(const Access& a) {
  const std::vector<int64_t>& e = a.extent4;
  const std::vector<int64_t>& s = a.strides4;
  if (a.bcast3) return false;
  if (e[3] > 1 && s.size() > 3 && s[3] != 1) return false;
  return (e[2] == 1 || s[2] == e[3]) && (e[1] == 1 || s[1] == e[2] * e[3]) &&
         (e[0] == 1 || s[0] == e[1] * e[2] * e[3]);
}

// Whether each row of an access (its innermost dim) is contiguous in GM:
// what a function run one row at a time (PerRow) needs to read or write a
// row in place, wherever the rows themselves lie.
bool RowsContiguous(const Access& a) {
  return !a.bcast3 && (a.extent4[3] == 1 || a.strides4.size() <= 3 || a.strides4[3] == 1);
}

// GM-direct operands. A TLOAD of f32 data that lies densely in GM needs no
// UB copy: the instructions read the tile where it is. The last instruction
// of a function whose result only a TSTORE reads writes straight into GM
// when that store is f32 and dense (the TSTORE goes), or, for an f16/bf16
// store, skips its own rounding (the store rounds the same way). Each copy
// saved is a pass over the tile's memory.
//
// A TLOAD of an f32 [C] operand broadcast down the tile's rows (gamma in a
// layer norm) is read in place too when every instruction reading it is a
// binary arithmetic one: their Rows form takes it as a column operand.
struct DirectPlan {
  std::vector<bool> load_in_place;  // per instruction: a TLOAD not copied
  std::vector<bool> load_columns;   // per instruction: ... as a column operand
  std::vector<int> writes_store;    // per instruction: the TSTORE it replaces, or -1
  std::vector<int> unrounded;       // per instruction: 1 = emit without rounding
  std::vector<bool> elided;         // per instruction: a TSTORE not emitted
};

// Run one row at a time (per_row), an access needs only contiguous rows.
DirectPlan PlanDirect(const PtoProgram& p, const PtoFunction& fn,
                      const std::function<bool(int)>& is_row, bool per_row) {
  auto direct = [per_row](const Access& a) {
    return per_row ? RowsContiguous(a) : IsDense(a);
  };
  const int n = static_cast<int>(fn.body.size());
  DirectPlan plan;
  plan.load_in_place.assign(n, false);
  plan.load_columns.assign(n, false);
  plan.writes_store.assign(n, -1);
  plan.unrounded.assign(n, 0);
  plan.elided.assign(n, false);
  auto f32_tile = [&](int t) {
    return !is_row(t) && (t >= static_cast<int>(fn.ub_types.size()) ||
                          fn.ub_types[t] == pto::v1::DT_FP32);
  };
  std::vector<int> loaded_buffers;
  for (int i = 0; i < n; ++i) {
    const PtoInstr& in = fn.body[i];
    if (in.op != PtoOpcode::kTLoad) continue;
    loaded_buffers.push_back(in.buffer);
    const PtoBuffer& buf = p.buffers[in.buffer];
    if (buf.dtype != pto::v1::DT_FP32 || !f32_tile(in.dst) || in.reduce_dim >= 0) continue;
    const Access a = MakeAccess(Viewed(buf, in), fn.tile, in.index, -1);
    if (direct(a)) {
      plan.load_in_place[i] = true;
      continue;
    }
    // Columns: contiguous along the last dim, the same for every row.
    bool columns = !a.bcast3 && (a.strides4.size() <= 3 || a.strides4[3] == 1 ||
                                 a.extent4[3] == 1);
    for (int d = 0; d < 3; ++d) {
      columns = columns && (a.extent4[d] == 1 || a.strides4[d] == 0);
    }
    // Every reader until the tile is overwritten takes a column operand.
    for (int j = i + 1; columns && j < n; ++j) {
      const PtoInstr& r = fn.body[j];
      if (std::find(r.srcs.begin(), r.srcs.end(), in.dst) != r.srcs.end()) {
        columns = r.srcs.size() == 2 && r.reduce_dim < 0 && !is_row(r.dst) &&
                  PtoHasRowsForm(r.op);
      }
      if (r.op != PtoOpcode::kTStore && r.dst == in.dst) break;
    }
    plan.load_in_place[i] = plan.load_columns[i] = columns;
  }
  int last = -1;  // the last instruction that is neither TLOAD nor TSTORE
  for (int i = 0; i < n; ++i) {
    if (fn.body[i].op != PtoOpcode::kTLoad && fn.body[i].op != PtoOpcode::kTStore) last = i;
  }
  if (last < 0) return plan;
  const PtoInstr& producer = fn.body[last];
  const bool typed = producer.op == PtoOpcode::kTCvt || producer.op == PtoOpcode::kTFill ||
                     producer.op == PtoOpcode::kTArange;
  if (producer.reduce_dim >= 0 || typed || !f32_tile(producer.dst)) return plan;
  int store = -1, readers = 0;
  for (int i = last + 1; i < n; ++i) {
    const PtoInstr& in = fn.body[i];
    if (std::find(in.srcs.begin(), in.srcs.end(), producer.dst) == in.srcs.end()) continue;
    ++readers;
    store = i;
  }
  if (readers != 1 || fn.body[store].op != PtoOpcode::kTStore) return plan;
  const PtoInstr& st = fn.body[store];
  const PtoBuffer& buf = p.buffers[st.buffer];
  if (st.reduce_dim >= 0) return plan;
  if (buf.dtype == pto::v1::DT_FP32 && producer.dtype == pto::v1::DT_FP32 &&
      direct(MakeAccess(buf, fn.tile, st.index, -1)) &&
      std::find(loaded_buffers.begin(), loaded_buffers.end(), st.buffer) ==
          loaded_buffers.end()) {
    plan.writes_store[last] = store;
    plan.elided[store] = true;
  } else if ((producer.dtype == pto::v1::DT_FP16 || producer.dtype == pto::v1::DT_BF16) &&
             buf.dtype == producer.dtype) {
    plan.unrounded[last] = 1;
  }
  return plan;
}

// One pass per chunk. A function that only loads and stores dense FP16/BF16
// (or f32) tiles and computes full-tile elementwise instructions runs them
// all on one chunk of kChunkElements at a time instead of one instruction
// over the whole tile at a time: f16 loads widen, the chain computes and the
// result narrows while the chunk is in L1 (registers, mostly), instead of a
// widening pass per operand, a pass per instruction and a narrowing pass over
// the whole UB tile. Every element goes through the same instructions, so
// results are the same bits. Only where there is a pass to save (an f16/bf16
// buffer, or a chain of two or more instructions: one f32 instruction already
// reads and writes GM in place), the tile is a whole number of chunks, and
// no buffer is both loaded and stored (a chunk's store could otherwise feed
// a later chunk's load).
constexpr int64_t kChunkElements = 256;
// pto_tile.h's kRowChunk: the chunk of a row with a run-time length
// (EmitRuntimeRowFunction).
constexpr int64_t kRowChunkElements = 64;

int64_t ChunkElements(const PtoProgram& p, const PtoFunction& fn,
                      const std::function<bool(int)>& is_row, int64_t elems) {
  if (elems < 2 * kChunkElements || elems % kChunkElements != 0) return 0;
  for (int t = 0; t < fn.num_tiles; ++t) {
    if (is_row(t)) return 0;
    if (t < static_cast<int>(fn.ub_types.size()) && fn.ub_types[t] != pto::v1::DT_FP32 &&
        fn.ub_types[t] != pto::v1::DT_FP16 && fn.ub_types[t] != pto::v1::DT_BF16) {
      return 0;
    }
  }
  bool narrow = false;
  int computes = 0;
  std::vector<int> loaded, stored;
  for (const PtoInstr& in : fn.body) {
    if (in.op == PtoOpcode::kTLoad || in.op == PtoOpcode::kTStore) {
      const PtoBuffer& buf = p.buffers[in.buffer];
      if (buf.dtype != pto::v1::DT_FP32 && buf.dtype != pto::v1::DT_FP16 &&
          buf.dtype != pto::v1::DT_BF16) {
        return 0;
      }
      narrow = narrow || buf.dtype != pto::v1::DT_FP32;
      if (in.reduce_dim >= 0) return 0;
      if (!IsDense(MakeAccess(Viewed(buf, in), fn.tile, in.index, -1))) return 0;
      (in.op == PtoOpcode::kTLoad ? loaded : stored).push_back(in.buffer);
      continue;
    }
    if (in.reduce_dim >= 0 || in.op == PtoOpcode::kTCvt || in.op == PtoOpcode::kTFill ||
        in.op == PtoOpcode::kTArange) {
      return 0;
    }
    ++computes;
  }
  for (int b : stored) {
    if (std::find(loaded.begin(), loaded.end(), b) != loaded.end()) return 0;
  }
  return narrow || computes >= 2 ? kChunkElements : 0;
}

// A TCVT (instruction i) that PerRow takes: between full (not row) tiles,
// f16/bf16 -> f32 or f32 -> f16/bf16. (UB storage is f32 for all three: the
// source's element type is that of the instruction that wrote it.)
bool FloatWidthCast(const PtoFunction& fn, int i, const std::function<bool(int)>& is_row) {
  const PtoInstr& in = fn.body[i];
  if (in.srcs.size() != 1 || in.reduce_dim >= 0 || is_row(in.dst) || is_row(in.srcs[0])) {
    return false;
  }
  int writer = i - 1;
  while (writer >= 0 && (fn.body[writer].op == PtoOpcode::kTStore ||
                         fn.body[writer].dst != in.srcs[0])) {
    --writer;
  }
  if (writer < 0) return false;
  const pto::v1::DataType from = fn.body[writer].dtype;
  auto half = [](pto::v1::DataType t) {
    return t == pto::v1::DT_FP16 || t == pto::v1::DT_BF16;
  };
  return (half(from) && in.dtype == pto::v1::DT_FP32) ||
         (from == pto::v1::DT_FP32 && half(in.dtype));
}

// One row at a time. A fused row group (softmax, layer norm: last-dim
// reductions into row tiles, then elementwise instructions reading them)
// runs all its instructions on one row of the tile before the next: the
// row's reductions, then its chain, while the row is in L1, instead of one
// pass over the whole tile per instruction. Full UB tiles shrink to one row
// and row tiles to one value; loads and stores address the row in GM, so a
// tile whose rows are not adjacent in GM (a 4x8x256 tile of a 32x32x1x256
// tensor) is read and written in place too. Each row goes through the same
// instructions in the same order (a row's reduction is the same ReduceRow),
// so results are the same bits. Only float UB tiles (f32, or f16/bf16 values
// held as f32), last-dim sum/max/min/prod
// reductions, no arange (it reads the tile offset), casts only between full
// float tiles (f16/bf16 -> f32 and f32 -> f16/bf16: pypto's FP16 softmax
// and rms_norm cast in, compute in f32 and cast out; a cast is elementwise,
// so a row of it is the tile's cast of that row), and no buffer both loaded
// and stored (a row's store could feed a later row's load).
bool PerRow(const PtoProgram& p, const PtoFunction& fn,
            const std::function<bool(int)>& is_row, int rank, int64_t rows) {
  if (fn.runtime_extents || rank < 2 || rows < 2) return false;
  bool has_row_tile = false;
  for (int t = 0; t < fn.num_tiles; ++t) {
    has_row_tile = has_row_tile || is_row(t);
    if (t < static_cast<int>(fn.ub_types.size()) && fn.ub_types[t] != pto::v1::DT_FP32 &&
        fn.ub_types[t] != pto::v1::DT_FP16 && fn.ub_types[t] != pto::v1::DT_BF16) {
      return false;
    }
  }
  if (!has_row_tile) return false;  // elementwise: ChunkElements' business
  std::vector<int> loaded, stored;
  for (int i = 0; i < static_cast<int>(fn.body.size()); ++i) {
    const PtoInstr& in = fn.body[i];
    if (in.op == PtoOpcode::kTLoad || in.op == PtoOpcode::kTStore) {
      const pto::v1::DataType dt = p.buffers[in.buffer].dtype;
      if (dt != pto::v1::DT_FP32 && dt != pto::v1::DT_FP16 && dt != pto::v1::DT_BF16) {
        return false;
      }
      const int tile = in.op == PtoOpcode::kTLoad ? in.dst : in.srcs[0];
      if (in.reduce_dim >= 0 && !(in.reduce_dim == rank - 1 && is_row(tile))) return false;
      (in.op == PtoOpcode::kTLoad ? loaded : stored).push_back(in.buffer);
      continue;
    }
    if (in.op == PtoOpcode::kTArange) return false;
    if (in.op == PtoOpcode::kTCvt && !FloatWidthCast(fn, i, is_row)) return false;
    if (in.reduce_dim >= 0) {
      const bool reduction = in.op == PtoOpcode::kTRedSum || in.op == PtoOpcode::kTRedMax ||
                             in.op == PtoOpcode::kTRedMin || in.op == PtoOpcode::kTRedProd;
      if (!reduction || in.reduce_dim != rank - 1 || !is_row(in.dst) || in.srcs.size() != 1 ||
          is_row(in.srcs[0])) {
        return false;
      }
    }
  }
  for (int b : stored) {
    if (std::find(loaded.begin(), loaded.end(), b) != loaded.end()) return false;
  }
  return true;
}

// Softmax's middle on one row (a per-row function, or a tile one row long):
// d = x - m (m a row tile), e = exp(d), s = sum(e) along the row, all f32,
// with d read by nothing else. They become one TSubExpSumRow: one pass over
// the row instead of three, the same bits (pto_tile.h). Returns whether the
// instructions at i, i+1, i+2 are such a triple.
bool FusesSubExpSum(const PtoFunction& fn, int i, const std::function<bool(int)>& is_row,
                    const std::vector<bool>& columns, const DirectPlan& plan) {
  const int n = static_cast<int>(fn.body.size());
  if (i + 2 >= n) return false;
  const PtoInstr& sub = fn.body[i];
  const PtoInstr& exp = fn.body[i + 1];
  const PtoInstr& sum = fn.body[i + 2];
  const int rank = static_cast<int>(fn.tile.size());
  for (int k = i; k <= i + 2; ++k) {
    if (fn.body[k].dtype != pto::v1::DT_FP32 || plan.writes_store[k] >= 0 ||
        plan.elided[k] || plan.unrounded[k]) {
      return false;
    }
  }
  if (sub.op != PtoOpcode::kTSub || sub.reduce_dim >= 0 || sub.srcs.size() != 2 ||
      is_row(sub.dst) || is_row(sub.srcs[0]) || columns[sub.srcs[0]] ||
      !is_row(sub.srcs[1]) || sub.srcs[0] == sub.dst) {
    return false;
  }
  if (exp.op != PtoOpcode::kTExp || exp.srcs.size() != 1 || exp.srcs[0] != sub.dst ||
      exp.dst == sub.dst || is_row(exp.dst)) {
    return false;
  }
  if (sum.op != PtoOpcode::kTRedSum || sum.reduce_dim != rank - 1 || sum.srcs.size() != 1 ||
      sum.srcs[0] != exp.dst || !is_row(sum.dst)) {
    return false;
  }
  // The difference dies with the exp (read nowhere until overwritten).
  for (int k = i + 3; k < n; ++k) {
    const PtoInstr& in = fn.body[k];
    if (std::find(in.srcs.begin(), in.srcs.end(), sub.dst) != in.srcs.end()) return false;
    if (in.op != PtoOpcode::kTStore && in.dst == sub.dst) break;
  }
  return true;
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

// A run of row arithmetic (a per-row function, or a tile one row long):
// consecutive f32 add/sub/mul/div/max/min instructions with a full
// destination (their sources full, row or column operands), optionally
// followed by a last-dim sum of the run's last result (rows of 32 or more
// values: ReduceRow's 16 lanes). Host codegen emits the run as one loop over
// the row computing each value through the instructions' own scalar forms
// (pto_tile's NAME##Fn::Apply, in order, each rounded to f32 as before) and
// adding it into the sum's lanes in the same order, so the bits are the
// same; a destination is written only if something reads it after the run
// (or it is the function's GM result). Fewer passes over the row: layer
// norm's x - mean, square, sum and its scale, gamma, beta.
struct RowRun {
  int length = 0;     // arithmetic instructions from i
  int sum = -1;       // the TREDSUM ending the run, or -1
};

bool RowArithmetic(const PtoInstr& in, const std::function<bool(int)>& is_row,
                   const DirectPlan& plan, int i) {
  switch (in.op) {
    case PtoOpcode::kTAdd: case PtoOpcode::kTSub: case PtoOpcode::kTMul:
    case PtoOpcode::kTDiv: case PtoOpcode::kTMax: case PtoOpcode::kTMin:
      break;
    default:
      return false;
  }
  return in.srcs.size() == 2 && in.reduce_dim < 0 && !is_row(in.dst) &&
         in.dtype == pto::v1::DT_FP32 && !plan.elided[i] && !plan.unrounded[i];
}

RowRun FindRowRun(const PtoFunction& fn, int i, int64_t cols,
                  const std::function<bool(int)>& is_row, const std::vector<bool>& columns,
                  const DirectPlan& plan) {
  const int n = static_cast<int>(fn.body.size());
  const int rank = static_cast<int>(fn.tile.size());
  RowRun run;
  int j = i;
  while (j < n && RowArithmetic(fn.body[j], is_row, plan, j) &&
         (j == i || !FusesSubExpSum(fn, j, is_row, columns, plan))) {
    const bool gm_result = plan.writes_store[j] >= 0;
    ++j;
    if (gm_result) break;  // the function's last result
  }
  run.length = j - i;
  if (run.length == 0) return run;
  const PtoInstr& last = fn.body[j - 1];
  if (j < n && cols >= 32 && plan.writes_store[j - 1] < 0) {
    const PtoInstr& sum = fn.body[j];
    if (sum.op == PtoOpcode::kTRedSum && sum.reduce_dim == rank - 1 && sum.srcs.size() == 1 &&
        sum.srcs[0] == last.dst && is_row(sum.dst) && sum.dtype == pto::v1::DT_FP32) {
      run.sum = j;
    }
  }
  if (run.length < 2 && run.sum < 0) run.length = 0;  // one instruction: its own loop
  return run;
}

// Whether tile t's value after instruction `after` is read before it is
// written again.
bool ReadLater(const PtoFunction& fn, int after, int t) {
  for (int k = after + 1; k < static_cast<int>(fn.body.size()); ++k) {
    const PtoInstr& in = fn.body[k];
    if (std::find(in.srcs.begin(), in.srcs.end(), t) != in.srcs.end()) return true;
    if (in.op != PtoOpcode::kTStore && in.dst == t) return false;
  }
  return false;
}

// Whether the x - m that FusesSubExpSum found at i subtracts x's row
// maximum: m is the f32 TRedMax of x along the row just before it, so every
// difference is <= 0 or NaN and softmax's exp applies (pto_tile's
// TSubExpSumRow<C, true> and TSubExpSumRowN<true>, whose bits TSoftmaxRow
// gives: static, dynamic and fused rows agree).
bool SubtractsRowMax(const PtoFunction& fn, int i) {
  if (i < 1) return false;
  const PtoInstr& max = fn.body[i - 1];
  const PtoInstr& sub = fn.body[i];
  return max.op == PtoOpcode::kTRedMax && max.dtype == pto::v1::DT_FP32 &&
         max.reduce_dim == static_cast<int>(fn.tile.size()) - 1 && max.srcs.size() == 1 &&
         sub.srcs.size() == 2 && sub.srcs[0] == max.srcs[0] && sub.srcs[1] == max.dst &&
         max.dst != max.srcs[0];
}

// Casts folded into a per-row function's loads and stores. A TCVT to f32
// of an f16/bf16 load's tile, read by nothing else, is the load itself (an
// f16/bf16 load already widens exactly into an f32 array): the load writes
// the cast's tile (load_into) and the cast goes. A TCVT from f32 to f16/bf16
// whose result only TSTOREs of that type read is their rounding (the store
// rounds to nearest even the same way, and rounding twice is rounding
// once): the stores read the cast's source and the cast goes. Fewer passes
// over the row (FP16 softmax: load, TSoftmaxRow, store).
struct CastFolds {
  std::vector<int> load_into;  // per instruction: a TLOAD's tile instead of its own, or -1
  std::vector<bool> folded;    // per instruction: a TCVT not emitted
};

CastFolds FoldCasts(const PtoProgram& p, const PtoFunction& fn, const DirectPlan& plan,
                    const std::function<bool(int)>& is_row) {
  const int n = static_cast<int>(fn.body.size());
  CastFolds folds;
  folds.load_into.assign(n, -1);
  folds.folded.assign(n, false);
  auto half = [](pto::v1::DataType t) {
    return t == pto::v1::DT_FP16 || t == pto::v1::DT_BF16;
  };
  auto reads = [&](int k, int t) {
    const std::vector<int>& srcs = fn.body[k].srcs;
    return std::find(srcs.begin(), srcs.end(), t) != srcs.end();
  };
  auto writes = [&](int k, int t) {
    return fn.body[k].op != PtoOpcode::kTStore && fn.body[k].dst == t;
  };
  for (int j = 0; j < n; ++j) {
    const PtoInstr& cvt = fn.body[j];
    if (cvt.op != PtoOpcode::kTCvt || !FloatWidthCast(fn, j, is_row)) continue;
    const int src = cvt.srcs[0], dst = cvt.dst;
    if (src == dst) continue;
    if (cvt.dtype == pto::v1::DT_FP32) {
      // The load of src (the last writer before j), and nothing between it
      // and j touching dst; src read by nothing after j.
      int ld = j - 1;
      while (ld >= 0 && !writes(ld, src)) --ld;
      if (ld < 0 || fn.body[ld].op != PtoOpcode::kTLoad || plan.load_in_place[ld] ||
          fn.body[ld].reduce_dim >= 0 || !half(p.buffers[fn.body[ld].buffer].dtype) ||
          ReadLater(fn, j, src)) {
        continue;
      }
      bool touched = false;
      for (int k = ld + 1; k < j; ++k) {
        touched = touched || reads(k, src) || reads(k, dst) || writes(k, dst);
      }
      if (touched) continue;
      folds.load_into[ld] = dst;
      folds.folded[j] = true;
      continue;
    }
    // Narrowing: every reader of dst (until overwritten) a TSTORE of
    // cvt.dtype, and src not written before the last of them.
    int last = -1;
    bool stores_only = true;
    for (int k = j + 1; k < n; ++k) {
      if (reads(k, dst)) {
        const PtoInstr& st = fn.body[k];
        stores_only = stores_only && st.op == PtoOpcode::kTStore && st.reduce_dim < 0 &&
                      p.buffers[st.buffer].dtype == cvt.dtype;
        last = k;
      }
      if (writes(k, dst)) break;
    }
    if (!stores_only || last < 0) continue;
    bool overwritten = false;
    for (int k = j + 1; k <= last; ++k) overwritten = overwritten || writes(k, src);
    if (!overwritten) folds.folded[j] = true;
  }
  return folds;
}

// pypto's FP32 softmax on one row (a per-row function, or a tile one row
// long): m = max(x) along the row, FusesSubExpSum's x - m, exp and sum,
// r = 1 / s and o = e * r (written straight into GM, or into its UB tile:
// the FP16/BF16 softmax's row, cast and stored after it), with m, e, s and
// r read by nothing else. They become one TSoftmaxRow: the same bits
// (pto_tile.h), the row kept in registers where it fits. Returns whether
// the instructions at i .. i+5 are such a run.
bool FusesSoftmaxRow(const PtoFunction& fn, int i, const std::function<bool(int)>& is_row,
                     const std::vector<bool>& columns, const DirectPlan& plan) {
  const int n = static_cast<int>(fn.body.size());
  if (i + 5 >= n) return false;
  const PtoInstr& max = fn.body[i];
  const PtoInstr& sub = fn.body[i + 1];
  const PtoInstr& exp = fn.body[i + 2];
  const PtoInstr& sum = fn.body[i + 3];
  const PtoInstr& recip = fn.body[i + 4];
  const PtoInstr& mul = fn.body[i + 5];
  const int rank = static_cast<int>(fn.tile.size());
  for (int k : {i, i + 4, i + 5}) {
    if (fn.body[k].dtype != pto::v1::DT_FP32 || plan.elided[k] || plan.unrounded[k]) {
      return false;
    }
  }
  if (max.op != PtoOpcode::kTRedMax || max.reduce_dim != rank - 1 || max.srcs.size() != 1 ||
      !is_row(max.dst) || is_row(max.srcs[0]) || columns[max.srcs[0]] ||
      plan.writes_store[i] >= 0) {
    return false;
  }
  if (!FusesSubExpSum(fn, i + 1, is_row, columns, plan) || sub.srcs[0] != max.srcs[0] ||
      sub.srcs[1] != max.dst) {
    return false;
  }
  if (recip.op != PtoOpcode::kTRecip || recip.srcs.size() != 1 || recip.srcs[0] != sum.dst ||
      !is_row(recip.dst) || plan.writes_store[i + 4] >= 0) {
    return false;
  }
  const bool e_times_r = mul.srcs.size() == 2 && ((mul.srcs[0] == exp.dst && mul.srcs[1] == recip.dst) ||
                                                  (mul.srcs[0] == recip.dst && mul.srcs[1] == exp.dst));
  if (mul.op != PtoOpcode::kTMul || mul.reduce_dim >= 0 || !e_times_r || is_row(mul.dst)) {
    return false;
  }
  for (int t : {max.dst, exp.dst, sum.dst, recip.dst}) {
    if (ReadLater(fn, i + 5, t)) return false;
  }
  return true;
}

// "i0 * s0 + ..": the GM offset of the row (i0, i1, i2) of a per-row access
// (" + " first; empty when every row is at the same place).
std::string RowOffset(const Access& a) {
  std::string out;
  for (int k = 0; k < 3; ++k) {
    if (a.extent4[k] > 1 && a.strides4[k] != 0) {
      absl::StrAppend(&out, " + i", k, " * ", a.strides4[k]);
    }
  }
  return out;
}

// What a per-row function prefetches during a row's first pass over data
// already in L1 (softmax's fused exp pass, or the first run of row
// arithmetic ending in a sum: layer norm's x - mean), one cache line per 16
// values: the next row of each f32 input read in place (its first pass then
// finds it in cache), and, for writing, this row of each f32 result written
// straight into GM, so that the stores at the row's end find their lines
// owned instead of each waiting for a read-for-ownership (one thread, layer
// norm 4096x1024: 3.5 -> 2.2-2.9 ms best; softmax 4.7 -> 3.1).
struct RowPrefetch {
  std::vector<std::string> reads;   // const float* expressions
  std::vector<std::string> writes;  // float* expressions
};

RowPrefetch RowPrefetches(const PtoProgram& p, const PtoFunction& fn, const DirectPlan& plan) {
  RowPrefetch out;
  for (int i = 0; i < static_cast<int>(fn.body.size()); ++i) {
    const PtoInstr& in = fn.body[i];
    if (plan.load_in_place[i] && !plan.load_columns[i]) {
      const Access a = MakeAccess(Viewed(p.buffers[in.buffer], in), fn.tile, in.index, -1);
      for (int d = 2; d >= 0; --d) {  // the innermost dim that steps rows
        if (a.extent4[d] > 1 && a.strides4[d] != 0) {
          out.reads.push_back(absl::StrCat("(g", i, RowOffset(a), ") + ", a.strides4[d]));
          break;
        }
      }
    }
    if (plan.writes_store[i] >= 0) {
      const PtoInstr& st = fn.body[plan.writes_store[i]];
      const Access a = MakeAccess(p.buffers[st.buffer], fn.tile, st.index, -1);
      out.writes.push_back(absl::StrCat("static_cast<float*>(buffers[", st.buffer, "]) + (",
                                        a.offset, RowOffset(a), ")"));
    }
  }
  return out;
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
  // Run-time strides: no per-row form either (its row offsets are constants).
  const bool per_row = !runtime_strides && PerRow(p, fn, is_row, rank, rows);
  DirectPlan plan = PlanDirect(p, fn, is_row, per_row);
  if (fn.runtime_extents || runtime_strides) {
    const size_t count = fn.body.size();
    plan.load_in_place.assign(count, false);
    plan.load_columns.assign(count, false);
    plan.writes_store.assign(count, -1);
    plan.unrounded.assign(count, 0);
    plan.elided.assign(count, false);
  }
  // Chunked (ChunkElements): GM pointers first, then a loop over chunks c
  // with the tiles inside it, each instruction over `n` elements at c.
  const int64_t chunk =
      fn.runtime_extents || runtime_strides || per_row ? 0
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
  for (int t = 0; t < fn.num_tiles; ++t) {
    const pto::v1::DataType storage =
        t < static_cast<int>(fn.ub_types.size()) ? fn.ub_types[t] : pto::v1::DT_FP32;
    absl::StrAppend(&out, indent, "alignas(64) ", UbType(storage), " t", t, "[",
                    is_row(t) ? row_n : n, "];\n");
  }
  // The C++ name of each UB tile's current value: its array, or a pointer
  // into GM (g<i>: a load read in place; o<i>: a result written there).
  std::vector<std::string> name(fn.num_tiles);
  for (int t = 0; t < fn.num_tiles; ++t) name[t] = absl::StrCat("t", t);
  std::vector<bool> columns(fn.num_tiles, false);  // value read in place as [C]
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
  const CastFolds folds = per_row ? FoldCasts(p, fn, plan, is_row) : CastFolds();
  for (int i = 0; i < static_cast<int>(fn.body.size()); ++i) {
    const PtoInstr& in = fn.body[i];
    if (plan.elided[i]) continue;
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
                      SubtractsRowMax(fn, i) ? ", true" : "", ">(", name[exp.dst], ", ",
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
      layout.push_back(is_row(s) ? "pto_tile::kRow"
                       : columns[s] ? "pto_tile::kCol" : "pto_tile::kFull");
      rows_form = rows_form || is_row(s) || columns[s];
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
    for (size_t j = 0; j < in.scalars.size(); ++j) {
      // (TARANGE's start and step are doubles whatever the tile type.)
      args.push_back(in.op == PtoOpcode::kTArange
                         ? ScalarOperand(in, j, pto::v1::DT_DOUBLE, rank)
                         : ScalarOperand(in, j, scalar_storage, rank));
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

// Row code with a run-time length (issue 4: a fused row group over a
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
  DirectPlan none;
  none.load_in_place.assign(n, false);
  none.load_columns.assign(n, false);
  none.writes_store.assign(n, -1);
  none.unrounded.assign(n, 0);
  none.elided.assign(n, false);
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
      absl::StrAppend(&out, "    pto_tile::TSubExpSumRowN", SubtractsRowMax(fn, i) ? "<true>" : "",
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
    std::vector<std::string> scalars;
    for (size_t j = 0; j < in.scalars.size(); ++j) {
      scalars.push_back(ScalarOperand(in, j, storage(scalar_tile), rank));
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
