#include "compiler/lower/expand_reduction.h"

#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/ir/dtype.h"
#include "compiler/util/strings.h"

namespace pto::compiler {
namespace {

// The accumulating form of reduction `i` over the symbolic dim `d` of its
// input (see AppendReduction), with accumulator type `acc`; `in_gm` and
// `out_gm` are its input's and result's GM tensors, `out_index` the result's
// index from a space whose dim d has one slot.
absl::Status AppendAccumulation(const TensorGraph& g, int i, int d,
                                pto::v1::DataType acc, int in_gm, int out_gm,
                                const std::vector<GmIndex>& out_index,
                                int64_t ub_bytes, TileGraph* out) {
  const TensorOp& op = g.ops[i];
  const std::string& kind = op.info->kind;
  const std::string where = absl::StrCat("op #", i, " ", Quote(kind));
  const int v_in = op.inputs[0], v_out = op.outputs[0];
  const std::vector<int64_t>& space = OpSpace(g, op);
  const std::vector<int64_t> tile = ClampedTile(g, op);
  const int rank = static_cast<int>(space.size());
  const pto::v1::DataType in_dtype = g.values[v_in].dtype;
  const pto::v1::DataType out_dtype = g.values[v_out].dtype;
  const pto::v1::DataType in_storage = UbStorageType(in_dtype);
  auto unimplemented = [&](const std::string& why) {
    return absl::UnimplementedError(absl::StrCat(
        where, ": reduces dim ", d, ", whose extent is symbolic, ", why,
        " (sum, prod, amax, amin, argmax and argmin have one)"));
  };
  const bool arg = kind == "argmax" || kind == "argmin";
  PtoOpcode fold = PtoOpcode::kTSel;  // arg*: picked by flags (below)
  double identity = 0;
  // The identity is the worst value: -inf/+inf, or for an int64 accumulator
  // (INT32/INT64 data) INT64_MIN/INT64_MAX. A slot still at it after the
  // fold keeps index 0, which is right: every value equals it.
  const bool max_like = kind == "argmax" || kind == "amax";
  if (arg) {
    identity = max_like ? -HUGE_VAL : HUGE_VAL;
  } else if (kind == "sum") {
    fold = PtoOpcode::kTAdd;
  } else if (kind == "prod") {
    fold = PtoOpcode::kTMul;
    identity = 1;
  } else if (kind == "amax" || kind == "amin") {
    fold = max_like ? PtoOpcode::kTMax : PtoOpcode::kTMin;
    identity = max_like ? -HUGE_VAL : HUGE_VAL;
  } else {
    return unimplemented("and this reduction has no accumulating form");
  }
  std::vector<int64_t> slots = space, slot_tile = tile;
  slots[d] = 1;
  slot_tile[d] = 1;
  const int64_t acc_bytes = StorageBytes(acc), in_bytes = StorageBytes(in_storage);
  const bool convert = acc != in_storage;
  if (TileElements(tile) * (in_bytes + acc_bytes * (convert ? 4 : 3) + (arg ? 8 * 3 + 4 * 5 : 0)) >
      ub_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": tile ", FormatDims(tile), " needs more than ", ub_bytes,
        " bytes of UB; use a smaller vec_tile"));
  }
  auto add_workspace = [&](pto::v1::DataType dtype) {
    GmBuffer ws;
    ws.dtype = dtype;
    ws.shape = slots;
    out->buffers.push_back(std::move(ws));
    out->gm.push_back({-1, static_cast<int>(out->buffers.size()) - 1});
    return static_cast<int>(out->gm.size()) - 1;
  };
  const int acc_gm = add_workspace(acc);
  const int index_gm = arg ? add_workspace(pto::v1::DT_INT64) : -1;  // arg*: its index

  // init: the identity into every slot.
  TileGroup init;
  init.ops = {i};
  init.space = slots;
  init.tile = slot_tile;
  init.ub_types = {acc};
  if (acc != pto::v1::DT_INT64 || std::isfinite(identity)) {
    TileInstr fill = MakeInstr(PtoOpcode::kTFill, 0, {}, acc, -1);
    fill.scalars = {identity};
    init.body.push_back(std::move(fill));
  } else {
    // An int64 max/min starts from INT64_MIN/INT64_MAX. Fill's scalar is a
    // double, which holds INT64_MIN (-2^63) exactly but not INT64_MAX: that
    // one is -1 - INT64_MIN in tiles 1 and 2, an int64 TSUB (no overflow).
    TileInstr lowest = MakeInstr(PtoOpcode::kTFill, max_like ? 0 : 2, {}, acc, -1);
    lowest.scalars = {-0x1p63};
    init.body.push_back(std::move(lowest));
    if (!max_like) {
      TileInstr minus_one = MakeInstr(PtoOpcode::kTFill, 1, {}, acc, -1);
      minus_one.scalars = {-1};
      init.body.push_back(std::move(minus_one));
      init.body.push_back(MakeInstr(PtoOpcode::kTSub, 0, {1, 2}, acc, -1));
      init.ub_types.insert(init.ub_types.end(), {acc, acc});
    }
  }
  init.body.push_back(MakeGmAccess(PtoOpcode::kTStore, 0, acc_gm, acc, AlignedIndex(rank, rank), -1));
  if (arg) {
    const int zero_tile = static_cast<int>(init.ub_types.size());
    TileInstr zero = MakeInstr(PtoOpcode::kTFill, zero_tile, {}, pto::v1::DT_INT64, -1);
    zero.scalars = {0};
    init.body.push_back(std::move(zero));
    init.body.push_back(MakeGmAccess(PtoOpcode::kTStore, zero_tile, index_gm, pto::v1::DT_INT64,
                               AlignedIndex(rank, rank), -1));
    init.ub_types.push_back(pto::v1::DT_INT64);
  }
  init.num_ub_tiles = static_cast<int>(init.ub_types.size());
  out->groups.push_back(std::move(init));

  // accumulate: tiles 0 the input, 1 its reduction, 2 the slot, 3 the sum
  // of both, 4 the input converted to acc (integer sums).
  TileGroup fold_group;
  fold_group.ops = {i};
  fold_group.space = space;
  fold_group.tile = tile;
  fold_group.serial_dim = d;
  std::vector<GmIndex> slot = AlignedIndex(rank, rank);
  slot[d] = {-1, 1};  // every tile along d folds into slot 0
  fold_group.body.push_back(MakeGmAccess(PtoOpcode::kTLoad, 0, in_gm, in_dtype,
                                   AlignedIndex(static_cast<int>(g.values[v_in].shape.size()),
                                                rank),
                                   -1));
  fold_group.ub_types = {in_storage, acc, acc, acc};
  int src = 0;
  if (convert) {
    fold_group.body.push_back(MakeInstr(PtoOpcode::kTCvt, 4, {0}, acc, -1));
    fold_group.ub_types.push_back(acc);
    src = 4;
  }
  fold_group.body.push_back(MakeInstr(op.info->pto, 1, {src}, acc, d));
  fold_group.body.push_back(MakeGmAccess(PtoOpcode::kTLoad, 2, acc_gm, acc, slot, d));
  if (!arg) {
    fold_group.body.push_back(MakeInstr(fold, 3, {2, 1}, acc, -1));
  } else {
    // The tile's value (1) and first index (5) replace the slot's (2, 6)
    // where the value is better, or NaN where the slot's is not (torch:
    // the first NaN wins); ties keep the earlier tile's index.
    const pto::v1::DataType i64 = pto::v1::DT_INT64, f32 = pto::v1::DT_FP32,
                            flag = pto::v1::DT_BOOL;
    const int base = static_cast<int>(fold_group.ub_types.size());
    const int index = base, slot_index = base + 1, better = base + 2, nan = base + 3,
              slot_ok = base + 4, nan_first = base + 5, take = base + 6, new_index = base + 7;
    fold_group.ub_types.insert(fold_group.ub_types.end(),
                               {i64, i64, f32, f32, f32, f32, f32, i64});
    fold_group.body.push_back(MakeInstr(PtoOpcode::kTArgFirst, index, {0, 1}, i64, d));
    fold_group.body.push_back(MakeGmAccess(PtoOpcode::kTLoad, slot_index, index_gm, i64, slot, d));
    fold_group.body.push_back(MakeInstr(kind == "argmax" ? PtoOpcode::kTCmpGt : PtoOpcode::kTCmpLt,
                                    better, {1, 2}, flag, -1));
    fold_group.body.push_back(MakeInstr(PtoOpcode::kTCmpNe, nan, {1, 1}, flag, -1));
    fold_group.body.push_back(MakeInstr(PtoOpcode::kTCmpEq, slot_ok, {2, 2}, flag, -1));
    fold_group.body.push_back(MakeInstr(PtoOpcode::kTMul, nan_first, {nan, slot_ok}, f32, -1));
    fold_group.body.push_back(MakeInstr(PtoOpcode::kTMax, take, {better, nan_first}, f32, -1));
    fold_group.body.push_back(MakeInstr(PtoOpcode::kTSel, 3, {take, 1, 2}, acc, -1));
    fold_group.body.push_back(MakeInstr(PtoOpcode::kTSel, new_index, {take, index, slot_index}, i64, -1));
    fold_group.body.push_back(MakeGmAccess(PtoOpcode::kTStore, new_index, index_gm, i64, slot, d));
  }
  fold_group.body.push_back(MakeGmAccess(PtoOpcode::kTStore, 3, acc_gm, acc, slot, d));
  fold_group.num_ub_tiles = static_cast<int>(fold_group.ub_types.size());
  out->groups.push_back(std::move(fold_group));

  // finish: the slot reduced once more (one element) into the result's dtype.
  TileGroup finish;
  finish.ops = {i};
  finish.space = slots;
  finish.tile = slot_tile;
  if (arg) {  // the index as it is
    finish.body.push_back(MakeGmAccess(PtoOpcode::kTLoad, 0, index_gm, pto::v1::DT_INT64,
                                 AlignedIndex(rank, rank), -1));
    finish.body.push_back(MakeGmAccess(PtoOpcode::kTStore, 0, out_gm, out_dtype, out_index, d));
    finish.ub_types = {pto::v1::DT_INT64};
  } else {
    finish.body.push_back(MakeGmAccess(PtoOpcode::kTLoad, 0, acc_gm, acc, AlignedIndex(rank, rank), -1));
    finish.body.push_back(MakeInstr(op.info->pto, 1, {0}, out_dtype, d));
    finish.body.push_back(MakeGmAccess(PtoOpcode::kTStore, 1, out_gm, out_dtype, out_index, d));
    finish.ub_types = {acc, acc};
  }
  finish.num_ub_tiles = static_cast<int>(finish.ub_types.size());
  out->groups.push_back(std::move(finish));
  return absl::OkStatus();
}

}  // namespace

absl::Status AppendReduction(const TensorGraph& g, int i,
                             const std::vector<int>& gm_of_value,
                             const ExpandOptions& options, TileGraph* out) {
  const TensorOp& op = g.ops[i];
  const std::vector<int64_t>& space = OpSpace(g, op);
  const std::vector<int64_t> tile = ClampedTile(g, op);
  const int rank = static_cast<int>(space.size());
  int64_t dim = 0;
  if (auto it = op.attrs.find("dim"); it != op.attrs.end()) {
    dim = std::get<int64_t>(it->second);
  }
  const int d = static_cast<int>(dim < 0 ? dim + rank : dim);
  bool keepdim = false;
  if (auto it = op.attrs.find("keepdim"); it != op.attrs.end()) {
    keepdim = std::get<bool>(it->second);
  }
  const bool arg = op.info->kind == "argmax" || op.info->kind == "argmin";
  const int v_in = op.inputs[0], v_out = op.outputs[0];
  const pto::v1::DataType out_dtype = g.values[v_out].dtype;
  const int64_t n = (space[d] + tile[d] - 1) / tile[d];

  // The output's index from the final step's space (dim d has one slot).
  std::vector<GmIndex> out_index;
  for (int s = 0; s < rank; ++s) {
    if (s == d) {
      if (keepdim) out_index.push_back({-1, 1});
    } else {
      out_index.push_back({s, 1});
    }
  }
  // A step's UB need: its whole tiles (the loaded input, a converted copy)
  // of `full_bytes` per element of t, and its result tiles (the reduced
  // values, their indices), which hold t's elements over t[d], of
  // `reduced_bytes` per element.
  auto ub_need = [&](const std::vector<int64_t>& t, int64_t full_bytes, int64_t reduced_bytes) {
    return TileElements(t) * full_bytes + TileElements(t) / t[d] * reduced_bytes;
  };
  auto check_ub = [&](const std::vector<int64_t>& t, int64_t full_bytes, int64_t reduced_bytes) {
    const int64_t bytes = ub_need(t, full_bytes, reduced_bytes);
    if (bytes > options.memory.ub_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op #", i, " ", Quote(op.info->kind), ": tile ", FormatDims(t),
          " needs ", bytes, " bytes of UB; a block may use ",
          options.memory.ub_bytes, " bytes (use a smaller vec_tile, or a larger one "
          "along the reduced dim so fewer partial results are combined)"));
    }
    return absl::OkStatus();
  };
  auto add_workspace = [&](pto::v1::DataType dtype,
                           const std::vector<int64_t>& shape) {
    GmBuffer buf;
    buf.dtype = dtype;
    buf.shape = shape;
    out->buffers.push_back(std::move(buf));
    out->gm.push_back({-1, static_cast<int>(out->buffers.size()) - 1});
    return static_cast<int>(out->gm.size()) - 1;
  };
  auto load = [&](int dst, int gm, pto::v1::DataType dtype, int buffer_rank) {
    TileInstr t = MakeInstr(PtoOpcode::kTLoad, dst, {}, dtype, -1);
    t.gm = gm;
    t.index = AlignedIndex(buffer_rank, rank);
    return t;
  };
  auto store = [&](int src, int gm, pto::v1::DataType dtype,
                   std::vector<GmIndex> index) {
    TileInstr t = MakeInstr(PtoOpcode::kTStore, -1, {src}, dtype, d);
    t.gm = gm;
    t.index = std::move(index);
    return t;
  };
  const pto::v1::DataType in_dtype = g.values[v_in].dtype;
  const pto::v1::DataType i64 = pto::v1::DT_INT64;
  // Partial results are of the accumulator's type: f32 for float inputs
  // (FP16/BF16 sums do not round per tile) and for amax/amin/arg* of the
  // small integer types and BOOL (f32 holds them exactly), int64 for INT32
  // and INT64 inputs and for every integer sum/prod (the input converted
  // first; INT64 results wrap like torch's), double for DOUBLE.
  const pto::v1::DataType in_storage = UbStorageType(in_dtype);
  const pto::v1::DataType acc = out_dtype == i64 && !arg ? i64 : in_storage;
  const int64_t acc_bytes = StorageBytes(acc), in_bytes = StorageBytes(in_storage);
  const bool convert = acc != in_storage;

  if (!options.symbolic.empty() && options.symbolic[v_in][d]) {
    return AppendAccumulation(g, i, d, acc, gm_of_value[v_in], gm_of_value[v_out],
                              out_index, options.memory.ub_bytes, out);
  }

  // Partial step: tile 0 the input, 1 the reduced values, 2 the indices
  // (arg*) or the input converted to acc (integer sum/prod of a type that
  // f32 tiles hold; never both).
  TileGroup partial;
  partial.ops = {i};
  partial.space = space;
  partial.tile = tile;
  if (absl::Status s = check_ub(tile, in_bytes + (convert ? acc_bytes : 0),
                                acc_bytes + (arg ? 8 : 0));
      !s.ok()) {
    return s;
  }
  const pto::v1::DataType red_dtype = n == 1 && !arg ? out_dtype : acc;
  partial.body.push_back(load(0, gm_of_value[v_in], in_dtype,
                              static_cast<int>(g.values[v_in].shape.size())));
  partial.ub_types = {in_storage, acc};
  int src = 0;
  if (convert) {
    partial.ub_types.push_back(acc);
    partial.body.push_back(MakeInstr(PtoOpcode::kTCvt, 2, {0}, acc, -1));
    src = 2;
  }
  partial.body.push_back(MakeInstr(op.info->pto, 1, {src}, red_dtype, d));
  int value_ws = -1, index_ws = -1;
  std::vector<int64_t> ws_shape = space;
  ws_shape[d] = n;
  if (arg) {
    partial.body.push_back(MakeInstr(PtoOpcode::kTArgFirst, 2, {0, 1}, i64, d));
    partial.ub_types.push_back(i64);
  }
  if (n == 1) {
    partial.body.push_back(store(arg ? 2 : 1, gm_of_value[v_out], out_dtype, out_index));
  } else {
    std::vector<GmIndex> slot = AlignedIndex(rank, rank);
    slot[d].div = tile[d];
    value_ws = add_workspace(acc, ws_shape);
    partial.body.push_back(store(1, value_ws, acc, slot));
    if (arg) {
      index_ws = add_workspace(i64, ws_shape);
      partial.body.push_back(store(2, index_ws, i64, slot));
    }
  }
  partial.num_ub_tiles = static_cast<int>(partial.ub_types.size());
  out->groups.push_back(std::move(partial));
  if (n == 1) return absl::OkStatus();

  // Combine step.
  TileGroup combine;
  combine.ops = {i};
  combine.space = ws_shape;
  combine.tile = tile;
  combine.tile[d] = n;
  // Each result combines its own n slots, so the combine's tile need not
  // match the partials' along the other dims: where all n slots of the
  // partials' tile do not fit UB, those dims shrink (halved, leading dims
  // first) until they do. The results are the same; only the combine's work
  // is split finer.
  // Loaded: the partial values (and indices); results: the combined ones.
  const int64_t combine_full = acc_bytes + (arg ? 8 : 0);
  const int64_t combine_reduced = arg ? acc_bytes + 8 : acc_bytes;
  for (int s = 0; s < rank; ++s) {
    while (s != d && combine.tile[s] > 1 &&
           ub_need(combine.tile, combine_full, combine_reduced) > options.memory.ub_bytes) {
      combine.tile[s] = (combine.tile[s] + 1) / 2;
    }
  }
  if (absl::Status s = check_ub(combine.tile, combine_full, combine_reduced); !s.ok()) return s;
  combine.body.push_back(load(0, value_ws, acc, rank));
  combine.body.push_back(MakeInstr(op.info->pto, 1, {0}, arg ? acc : out_dtype, d));
  combine.ub_types = {acc, acc};
  if (arg) {
    combine.body.push_back(load(2, index_ws, i64, rank));
    combine.body.push_back(MakeInstr(PtoOpcode::kTArgSel, 3, {0, 2, 1}, i64, d));
    combine.ub_types.push_back(i64);
    combine.ub_types.push_back(i64);
  }
  combine.body.push_back(store(arg ? 3 : 1, gm_of_value[v_out], out_dtype, out_index));
  combine.num_ub_tiles = static_cast<int>(combine.ub_types.size());
  out->groups.push_back(std::move(combine));
  return absl::OkStatus();
}

void ReadAliasInput(const TensorGraph& g, const LayoutPlan& layout, int i,
                    const std::vector<int>& gm_of_value, size_t first_new,
                    TileGraph* out) {
  const int v = g.ops[i].inputs[0];
  if (!layout.IsAlias(v)) return;
  for (size_t k = first_new; k < out->groups.size(); ++k) {  // the partial or accumulate step
    TileGroup& partial = out->groups[k];
    for (TileInstr& in : partial.body) {
      if (in.op == PtoOpcode::kTLoad && in.gm < 0) {
        in.gm = gm_of_value[layout.Root(v)];
        in.index = layout.LoadIndex(g, v, static_cast<int>(partial.space.size()));
        in.view_shape = layout.ViewShape(v);
      }
    }
  }
}

}  // namespace pto::compiler
