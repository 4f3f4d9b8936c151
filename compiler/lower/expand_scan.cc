#include "compiler/lower/expand_scan.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/ir/dtype.h"
#include "compiler/lower/tiling.h"
#include "compiler/ops/infer.h"
#include "compiler/util/strings.h"

namespace pto::compiler {

bool IsScanOp(const TensorOp& op) { return op.info->category == OpCategory::kScan; }

pto::v1::DataType ScanAccumulator(pto::v1::DataType dtype) {
  switch (dtype) {
    case pto::v1::DT_FP32:
    case pto::v1::DT_DOUBLE:
      return pto::v1::DT_DOUBLE;
    case pto::v1::DT_INT32:
    case pto::v1::DT_INT64:
      return pto::v1::DT_INT64;
    default:
      return pto::v1::DT_FP32;
  }
}

absl::Status AppendScan(const TensorGraph& g, int i, const std::vector<int>& gm_of_value,
                        int64_t ub_bytes, TileGraph* out) {
  const TensorOp& op = g.ops[i];
  const std::string where = absl::StrCat("op #", i, " ", Quote(op.info->kind));
  const int x = op.inputs[0], result = op.outputs[0];
  const std::vector<int64_t>& space = g.values[result].shape;
  const int rank = static_cast<int>(space.size());
  absl::StatusOr<int> dim = NormalizeDim(std::get<int64_t>(op.attrs.at("dim")), rank);
  if (!dim.ok()) return dim.status();
  const int d = *dim;
  if (gm_of_value[result] < 0) {
    return absl::InternalError(absl::StrCat(where, ": its result has no GM tensor"));
  }
  const pto::v1::DataType dtype = g.values[x].dtype;
  const pto::v1::DataType storage = UbStorageType(dtype);
  const pto::v1::DataType acc = ScanAccumulator(dtype);
  const bool convert = acc != storage;
  // Full tiles: the input, the scan (and the input and result converted);
  // extent 1 along d: the carry and the last slice (declared whole).
  const int64_t per_element = StorageBytes(storage) + StorageBytes(acc) * 3 +
                              (convert ? StorageBytes(acc) + StorageBytes(storage) : 0);
  std::vector<int64_t> tile = ClampedTile(g, op);
  for (;;) {
    if (TileElements(tile) * per_element <= ub_bytes) break;
    int widest = -1;
    for (int k = 0; k < rank; ++k) {
      if (k != d && tile[k] > 1 && (widest < 0 || tile[k] > tile[widest])) widest = k;
    }
    if (widest < 0 && tile[d] > 1) widest = d;
    if (widest < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": one element needs ", per_element, " bytes of UB tiles; a block may use ",
          ub_bytes));
    }
    tile[widest] = (tile[widest] + 1) / 2;
  }
  std::vector<int64_t> slots = space, slot_tile = tile;
  slots[d] = 1;
  slot_tile[d] = 1;
  GmBuffer ws;
  ws.dtype = acc;
  ws.shape = slots;
  out->buffers.push_back(std::move(ws));
  out->gm.push_back({-1, static_cast<int>(out->buffers.size()) - 1});
  const int carry_gm = static_cast<int>(out->gm.size()) - 1;
  const bool product = op.info->kind == "cumprod";

  TileGroup init;
  init.ops = {i};
  init.space = slots;
  init.tile = slot_tile;
  TileInstr fill = MakeInstr(PtoOpcode::kTFill, 0, {}, acc, -1);
  fill.scalars = {product ? 1.0 : 0.0};
  init.body = {std::move(fill),
               MakeGmAccess(PtoOpcode::kTStore, 0, carry_gm, acc, AlignedIndex(rank, rank), -1)};
  init.ub_types = {acc};
  init.num_ub_tiles = 1;
  out->groups.push_back(std::move(init));

  TileGroup scan;
  scan.ops = {i};
  scan.space = space;
  scan.tile = tile;
  scan.serial_dim = d;
  std::vector<GmIndex> slot = AlignedIndex(rank, rank);
  slot[d] = {-1, 1};  // every tile along d reads and writes slot 0
  scan.ub_types = {storage, acc, acc, acc};
  scan.body.push_back(MakeGmAccess(PtoOpcode::kTLoad, 0, gm_of_value[x], dtype,
                             AlignedIndex(rank, rank), -1));
  int src = 0;
  if (convert) {
    scan.ub_types.push_back(acc);
    scan.body.push_back(MakeInstr(PtoOpcode::kTCvt, 4, {0}, acc));
    src = 4;
  }
  scan.body.push_back(MakeGmAccess(PtoOpcode::kTLoad, 1, carry_gm, acc, slot, d));
  scan.body.push_back(MakeInstr(op.info->pto, 2, {src, 1}, acc, d));
  scan.body.push_back(MakeInstr(PtoOpcode::kTRedLast, 3, {2}, acc, d));
  scan.body.push_back(MakeGmAccess(PtoOpcode::kTStore, 3, carry_gm, acc, slot, d));
  int result_tile = 2;
  if (convert) {
    result_tile = static_cast<int>(scan.ub_types.size());
    scan.ub_types.push_back(storage);
    scan.body.push_back(MakeInstr(PtoOpcode::kTCvt, result_tile, {2}, dtype));
  }
  scan.body.push_back(MakeGmAccess(PtoOpcode::kTStore, result_tile, gm_of_value[result], dtype,
                             AlignedIndex(rank, rank), -1));
  scan.num_ub_tiles = static_cast<int>(scan.ub_types.size());
  out->groups.push_back(std::move(scan));
  return absl::OkStatus();
}

}  // namespace pto::compiler
