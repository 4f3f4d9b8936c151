#include "compiler/targets/host/host_function_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pto::compiler::host_plan {
namespace {

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

// ChunkElements' chunk (see host_function_plan.h): 64 bytes of f32 values,
// two ymm or one zmm register per operand. GCC keeps arrays this small in
// registers (scalar replacement), so a chunk's loads, chain and store run
// register to register; chunks of 256 would go through stack arrays, a
// pass per instruction.
constexpr int64_t kChunkElements = 16;

// A TCVT (instruction i) that PerRow takes: between full (not row) tiles,
// f16/bf16 -> f32 or f32 -> f16/bf16. (UB storage is f32 for all three: the
// source's element type is that of the instruction that wrote it.)
bool FloatWidthCast(const PtoFunction& fn, int i, const std::function<bool(int)>& is_row) {
  const PtoInstr& in = fn.body[i];
  if (in.srcs.size() != 1 || in.reduce_dim >= 0 || is_row(in.dst) || is_row(in.srcs[0])) {
    return false;
  }
  const pto::v1::DataType from = ValueType(fn, i, in.srcs[0], pto::v1::DT_UNSPECIFIED);
  auto half = [](pto::v1::DataType t) {
    return t == pto::v1::DT_FP16 || t == pto::v1::DT_BF16;
  };
  return (half(from) && in.dtype == pto::v1::DT_FP32) ||
         (from == pto::v1::DT_FP32 && half(in.dtype));
}

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

}  // namespace

pto::v1::DataType ValueType(const PtoFunction& fn, int i, int tile,
                            pto::v1::DataType unwritten) {
  for (int k = i - 1; k >= 0; --k) {
    const PtoInstr& w = fn.body[k];
    if (w.op != PtoOpcode::kTStore && w.dst == tile) return w.dtype;
  }
  return unwritten;
}

PtoBuffer Viewed(const PtoBuffer& buf, const PtoInstr& in) {
  PtoBuffer as = buf;
  if (!in.view_shape.empty()) as.shape = in.view_shape;
  return as;
}

Access MakeAccess(const PtoBuffer& buf, const std::vector<int64_t>& tile,
                  std::vector<GmIndex> index, int reduced_dim,
                  const std::vector<int>& stride_dynamic) {
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

DirectPlan NoDirectOperands(int n) {
  DirectPlan plan;
  plan.load_in_place.assign(n, false);
  plan.load_columns.assign(n, false);
  plan.load_rows.assign(n, false);
  plan.writes_store.assign(n, -1);
  plan.unrounded.assign(n, 0);
  plan.elided.assign(n, false);
  return plan;
}

DirectPlan PlanDirect(const PtoProgram& p, const PtoFunction& fn,
                      const std::function<bool(int)>& is_row, bool per_row) {
  auto direct = [per_row](const Access& a) {
    return per_row ? RowsContiguous(a) : IsDense(a);
  };
  const int n = static_cast<int>(fn.body.size());
  DirectPlan plan = NoDirectOperands(n);
  auto f32_tile = [&](int t) {
    return !is_row(t) && (t >= static_cast<int>(fn.ub_types.size()) ||
                          fn.ub_types[t] == pto::v1::DT_FP32);
  };
  // Whether every reader of tile t (written at i) until it is next written
  // is a binary instruction with a Rows form, writing a full tile.
  auto rows_form_readers = [&](int i, int t) {
    for (int j = i + 1; j < n; ++j) {
      const PtoInstr& r = fn.body[j];
      if (std::find(r.srcs.begin(), r.srcs.end(), t) != r.srcs.end() &&
          !(r.srcs.size() == 2 && r.reduce_dim < 0 && !is_row(r.dst) && PtoHasRowsForm(r.op))) {
        return false;
      }
      if (r.op != PtoOpcode::kTStore && r.dst == t) break;
    }
    return true;
  };
  bool row_tiles = false;
  for (int t = 0; t < fn.num_tiles; ++t) row_tiles = row_tiles || is_row(t);
  std::vector<int> loaded_buffers;
  for (int i = 0; i < n; ++i) {
    const PtoInstr& in = fn.body[i];
    if (in.op != PtoOpcode::kTLoad) continue;
    loaded_buffers.push_back(in.buffer);
    const PtoBuffer& buf = p.buffers[in.buffer];
    const pto::v1::DataType storage = in.dst < static_cast<int>(fn.ub_types.size())
                                          ? fn.ub_types[in.dst]
                                          : pto::v1::DT_FP32;
    const bool float_tile = storage == pto::v1::DT_FP32 || storage == pto::v1::DT_FP16 ||
                            storage == pto::v1::DT_BF16;  // (the Rows forms take f32 arrays)
    if (!per_row && !row_tiles && float_tile && in.reduce_dim < 0 && !is_row(in.dst) &&
        fn.tile.size() >= 2 && fn.tile.back() > 1) {
      const Access a = MakeAccess(Viewed(buf, in), fn.tile, in.index, -1);
      if (a.bcast3 && rows_form_readers(i, in.dst)) {
        plan.load_rows[i] = true;
        continue;
      }
    }
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
    columns = columns && rows_form_readers(i, in.dst);
    plan.load_in_place[i] = plan.load_columns[i] = columns;
  }
  // A result only a TSTORE reads (until its tile is next written) goes
  // straight into the store's GM region when both are f32 and the region is
  // direct; the last instruction's f16/bf16 result skips its rounding when
  // its store rounds the same way.
  int last = -1;  // the last instruction that is neither TLOAD nor TSTORE
  for (int i = 0; i < n; ++i) {
    if (fn.body[i].op != PtoOpcode::kTLoad && fn.body[i].op != PtoOpcode::kTStore) last = i;
  }
  for (int i = 0; i <= last; ++i) {
    const PtoInstr& producer = fn.body[i];
    if (producer.op == PtoOpcode::kTLoad || producer.op == PtoOpcode::kTStore ||
        producer.dst < 0) {
      continue;  // (MSCATTER writes no tile)
    }
    const bool typed = producer.op == PtoOpcode::kTCvt || producer.op == PtoOpcode::kTFill ||
                       PtoReadsTileOffset(producer.op) || producer.op == PtoOpcode::kTReshape;
    if (producer.reduce_dim >= 0 || typed || !f32_tile(producer.dst)) continue;
    int store = -1, readers = 0;
    for (int k = i + 1; k < n; ++k) {
      const PtoInstr& in = fn.body[k];
      if (std::find(in.srcs.begin(), in.srcs.end(), producer.dst) != in.srcs.end()) {
        ++readers;
        store = k;
      }
      if (in.op != PtoOpcode::kTStore && in.dst == producer.dst) break;
    }
    if (readers != 1 || fn.body[store].op != PtoOpcode::kTStore) continue;
    const PtoInstr& st = fn.body[store];
    const PtoBuffer& buf = p.buffers[st.buffer];
    if (st.reduce_dim >= 0) continue;
    if (buf.dtype == pto::v1::DT_FP32 && producer.dtype == pto::v1::DT_FP32 &&
        direct(MakeAccess(buf, fn.tile, st.index, -1)) &&
        std::find(loaded_buffers.begin(), loaded_buffers.end(), st.buffer) ==
            loaded_buffers.end()) {
      plan.writes_store[i] = store;
      plan.elided[store] = true;
    } else if (i == last &&
               (producer.dtype == pto::v1::DT_FP16 || producer.dtype == pto::v1::DT_BF16) &&
               buf.dtype == producer.dtype) {
      plan.unrounded[i] = 1;
    }
  }
  return plan;
}

int64_t ChunkElements(const PtoProgram& p, const PtoFunction& fn,
                      const std::function<bool(int)>& is_row, int64_t elems) {
  if (elems < 2 * kChunkElements || elems % kChunkElements != 0) return 0;
  for (int t = 0; t < fn.num_tiles; ++t) {
    if (is_row(t)) return 0;
  }
  // Whether some load or store converts (an f16/bf16, integer, BOOL or
  // DOUBLE tensor): one instruction on f32 alone runs faster on whole tiles
  // read and written in place (PlanDirect).
  bool converts = false;
  int computes = 0;
  std::vector<int> loaded, stored;
  for (int i = 0; i < static_cast<int>(fn.body.size()); ++i) {
    const PtoInstr& in = fn.body[i];
    if (in.op == PtoOpcode::kTLoad || in.op == PtoOpcode::kTStore) {
      const PtoBuffer& buf = p.buffers[in.buffer];
      converts = converts || buf.dtype != pto::v1::DT_FP32;
      if (in.reduce_dim >= 0) return 0;
      if (!IsDense(MakeAccess(Viewed(buf, in), fn.tile, in.index, -1))) return 0;
      (in.op == PtoOpcode::kTLoad ? loaded : stored).push_back(in.buffer);
      continue;
    }
    // Every other instruction left is elementwise, casts too (each chunk's
    // tiles are declared in their own storage type: f32, int64 or double).
    if (in.reduce_dim >= 0 || in.op == PtoOpcode::kTFill || PtoReadsTileOffset(in.op)) {
      return 0;
    }
    ++computes;
  }
  for (int b : stored) {
    if (std::find(loaded.begin(), loaded.end(), b) != loaded.end()) return 0;
  }
  return converts || computes >= 2 ? kChunkElements : 0;
}

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
  // Elementwise only (no row tile): per row only where an f32 region's rows
  // are apart in GM (a concat's half, a slice of a wider tensor), so that a
  // row of it can be read or written in place; dense ones run in chunks
  // (ChunkElements), f16/bf16 rows would go through UB arrays a row long.
  bool rows_apart = false;
  std::vector<int> loaded, stored;
  for (int i = 0; i < static_cast<int>(fn.body.size()); ++i) {
    const PtoInstr& in = fn.body[i];
    if (in.op == PtoOpcode::kTLoad || in.op == PtoOpcode::kTStore) {
      const pto::v1::DataType dt = p.buffers[in.buffer].dtype;
      if (dt != pto::v1::DT_FP32 && dt != pto::v1::DT_FP16 && dt != pto::v1::DT_BF16) {
        return false;
      }
      if (!has_row_tile) {
        const Access a = MakeAccess(Viewed(p.buffers[in.buffer], in), fn.tile, in.index, -1);
        if (dt != pto::v1::DT_FP32 || in.reduce_dim >= 0 || !RowsContiguous(a)) return false;
        bool broadcast = false;  // (a [C] operand: read in place as columns already)
        for (int d = 0; d < 3; ++d) {
          broadcast = broadcast || (a.extent4[d] > 1 && a.strides4[d] == 0);
        }
        rows_apart = rows_apart || (!IsDense(a) && !broadcast);
      }
      const int tile = in.op == PtoOpcode::kTLoad ? in.dst : in.srcs[0];
      if (in.reduce_dim >= 0 && !(in.reduce_dim == rank - 1 && is_row(tile))) return false;
      (in.op == PtoOpcode::kTLoad ? loaded : stored).push_back(in.buffer);
      continue;
    }
    if (PtoReadsTileOffset(in.op)) return false;
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
  return has_row_tile || (rows_apart && fn.tile.back() >= kMinPerRowElements);
}

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
  const bool exp_op = exp.op == PtoOpcode::kTExp || exp.op == PtoOpcode::kTExpSoftmax;
  if (!exp_op || exp.srcs.size() != 1 || exp.srcs[0] != sub.dst ||
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

bool ReadLater(const PtoFunction& fn, int after, int t) {
  for (int k = after + 1; k < static_cast<int>(fn.body.size()); ++k) {
    const PtoInstr& in = fn.body[k];
    if (std::find(in.srcs.begin(), in.srcs.end(), t) != in.srcs.end()) return true;
    if (in.op != PtoOpcode::kTStore && in.dst == t) return false;
  }
  return false;
}

bool SoftmaxExpAt(const PtoFunction& fn, int i) {
  return i + 1 < static_cast<int>(fn.body.size()) &&
         fn.body[i + 1].op == PtoOpcode::kTExpSoftmax;
}

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
      sub.srcs[1] != max.dst || exp.op != PtoOpcode::kTExpSoftmax) {
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

std::string RowOffset(const Access& a) {
  std::string out;
  for (int k = 0; k < 3; ++k) {
    if (a.extent4[k] > 1 && a.strides4[k] != 0) {
      absl::StrAppend(&out, " + i", k, " * ", a.strides4[k]);
    }
  }
  return out;
}

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

}  // namespace pto::compiler::host_plan
