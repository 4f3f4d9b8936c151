#include "compiler/targets/ascend/ascend_sort_codegen.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/sym_expr.h"
#include "compiler/targets/ascend/ascend_codegen.h"
#include "compiler/targets/ascend/ascend_math.h"
#include "compiler/targets/host/host_function_plan.h"
#include "compiler/targets/memory_model.h"

namespace pto::compiler {
namespace {

constexpr int64_t kBlock = 32;         // TSORT32's block of values
constexpr int64_t kMaxRow = 8192;      // two pair lists of 8 NP bytes in the UB
constexpr int64_t kGroup = 8;          // columns transposed into rows at a time
constexpr int64_t kUbAlign = 32;       // bytes: a tile row's alignment
constexpr double kHalfInfKey = 131072.0;  // 2^17: above FP16's largest finite value

int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

absl::Status Refused(int index, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat(
      "ascend target: function @f", index, ": MSORT (sort, topk, argsort) ", why,
      " (docs/pto-isa.md lists what the target maps)"));
}

// The staging tile's element type for a row of `dtype` loaded into f32
// keys; "" for FP32 (loaded straight) and null for a type refused.
const char* StagingElem(pto::v1::DataType dtype) {
  switch (dtype) {
    case pto::v1::DT_FP32: return "";
    case pto::v1::DT_FP16: return "half";
    case pto::v1::DT_INT8: return "int8_t";
    case pto::v1::DT_INT16: return "int16_t";
    case pto::v1::DT_UINT8: return "uint8_t";
    case pto::v1::DT_BOOL: return "uint8_t";
    case pto::v1::DT_INT32: return "int32_t";
    default: return nullptr;
  }
}

// INT32 keys as two sorts of f32 keys, least significant half first (an
// LSD radix sort of two 16-bit digits): the low halves (x & 0xffff, 0 to
// 65535) give the first sort's order p1 of all NP positions (TGATHER
// P1010 of its pairs, into sp1); the high halves (x >> 16, -32768 to
// 32767) of the row taken in that order (TGATHER by sp1) sort with the
// indices 0 .. NP-1 standing for the ranks in p1, so equal high halves
// keep p1's order; the first k positions are p1 at the second sort's
// indices (TGATHER by spos into sfinal). Both keys are exact in f32 and
// both sorts stable, so the order is the int32 values' with ties in input
// order. Negated keys sort ascending. `line` appends a statement.
template <typename PairsFn, typename KeysFn, typename LineFn>
void EmitIntKeySorts(bool desc, PairsFn& sort_pairs, KeysFn& sort_keys, LineFn& line) {
  auto keys = [&] {
    line("TCVT(sraw, sgx, RoundMode::CAST_NONE);");
    if (!desc) line("TMULS(sraw, sraw, -1.0f);");
    line("TADDS(sraw, sraw, 0.0f);");
  };
  line("TANDS(sgx, sxi, 65535);");
  keys();
  line(absl::StrCat("TGATHER<SortAll, SortPairs, MaskPattern::P1010>(sp1, ", sort_pairs(), ");"));
  line("TGATHER(sgx, sxi, sp1);");
  line("TEXPANDS(scnt, 16);");
  line("TSHR(sgx, sgx, scnt);");
  keys();
  sort_keys("spos", false);
  line("TGATHER(sfinal, sp1, spos);");
}

// UB bytes of a ranked row sort (a last-dim sort over a run-time row
// length) of NP keys and tiles of k positions, as EmitAscendSortFunction
// places it: the two pair lists (all NP index words gathered into the
// dead one), an INT32 row and its first positions, an FP32 row's first
// positions and their mask, then the ranks, zeros, their mask, the
// positions (int32, their class keys for FP32) and their int64 copy.
int64_t RankedRowBytes(pto::v1::DataType dtype, int64_t np, int64_t k) {
  const int64_t kp = RoundUp(k, 8), mask = RoundUp(kp / 8, kUbAlign);
  int64_t ub = 16 * np;
  if (dtype == pto::v1::DT_INT32) ub += 8 * np;
  if (dtype == pto::v1::DT_FP32) ub += 4 * kp + mask + 4 * kp;
  return ub + 4 * kp + 4 * kp + mask + 4 * kp + 8 * kp;
}

}  // namespace

int64_t AscendSortCapacity(pto::v1::DataType dtype, int64_t k) {
  int64_t best = 0;
  for (int64_t np = kBlock; np <= kMaxRow; np *= 4) {
    if (RankedRowBytes(dtype, np, k) <= kAiCoreMemoryModel.ub_bytes) best = np;
  }
  return best;
}

std::vector<pto::v1::RegionCheck> AscendSortLaunchChecks(const PtoProgram& p) {
  std::vector<pto::v1::RegionCheck> checks;
  std::set<std::pair<std::string, int64_t>> seen;  // (row length, capacity)
  for (size_t f = 0; f < p.functions.size(); ++f) {
    const PtoFunction& fn = p.functions[f];
    for (const PtoInstr& in : fn.body) {
      if (in.op != PtoOpcode::kMSort || in.extent_dynamic < 0 || in.buffer < 0 ||
          in.buffer >= static_cast<int>(p.buffers.size()) || in.index_dim < 0 ||
          in.index_dim >= static_cast<int>(fn.tile.size())) {
        continue;
      }
      const SymShape& shape = p.buffers[in.buffer].sym_shape;
      if (in.index_dim >= static_cast<int>(shape.size())) continue;
      const SymExpr& n = shape[in.index_dim];
      const int64_t cap = AscendSortCapacity(p.buffers[in.buffer].dtype, fn.tile[in.index_dim]);
      if (cap < 1 || !seen.emplace(n.ToString(), cap).second) continue;
      pto::v1::RegionCheck c;
      c.set_label(absl::StrCat("ascend target: MSORT (sort, topk, argsort) of @f", f,
                               " sorts rows of up to ", cap, " values in the UB; its row length ",
                               n.ToString(), " must be at most that"));
      *c.add_offsets() = SymExpr(0).ToProto();
      *c.add_extent() = SymExprToDim(n);
      *c.add_bound() = SymExprToDim(SymExpr(cap));
      checks.push_back(std::move(c));
    }
  }
  return checks;
}

bool IsAscendSortFunction(const PtoProgram& p, int index) {
  for (const PtoInstr& in : p.functions[index].body) {
    if (in.op == PtoOpcode::kMSort) return true;
  }
  return false;
}

absl::StatusOr<std::string> EmitAscendSortFunction(const PtoProgram& p, int index) {
  const PtoFunction& fn = p.functions[index];
  const int rank = static_cast<int>(fn.tile.size());
  if (fn.body.size() != 2 || fn.body[0].op != PtoOpcode::kMSort ||
      fn.body[1].op != PtoOpcode::kTStore || fn.body[1].srcs.empty() ||
      fn.body[1].srcs[0] != fn.body[0].dst) {
    return Refused(index, "beside other instructions (the target maps a sort's own group: "
                          "MSORT, then TSTORE of its positions)");
  }
  const PtoInstr& sort = fn.body[0];
  const PtoInstr& store = fn.body[1];
  if (rank < 1 || rank > 4) return Refused(index, absl::StrCat("over a rank-", rank, " tile"));
  if (sort.buffer < 0 || sort.buffer >= static_cast<int>(p.buffers.size()) ||
      store.buffer < 0 || store.buffer >= static_cast<int>(p.buffers.size())) {
    return absl::InternalError("MSORT or its TSTORE names a missing buffer");
  }
  const PtoBuffer& src = p.buffers[sort.buffer];
  const int dim = sort.index_dim;
  // Columns (any dim before the last) go through TTRANS: [n, w] blocks
  // whose rows step by the dim's GM stride.
  const bool across = rank >= 2 && dim >= 0 && dim < rank - 1;
  if (dim < 0 || dim >= rank) return absl::InternalError("MSORT names a dim outside its tile");
  if (across && fn.runtime_extents) {
    return Refused(index, absl::StrCat("along dim ", dim, " with run-time tile extents (the "
                                       "target transposes static column blocks)"));
  }
  const bool dynamic_stride = std::any_of(sort.stride_dynamic.begin(), sort.stride_dynamic.end(),
                                          [](int s) { return s >= 0; });
  // A run-time row length (a symbolic sorted dim): the row is sorted in a
  // tile of a static capacity, padded as a shorter static row is.
  const bool dyn_len = sort.extent_dynamic >= 0;
  if (static_cast<int>(src.shape.size()) != rank ||
      (!sort.stride_dynamic.empty() && static_cast<int>(sort.stride_dynamic.size()) != rank)) {
    return absl::InternalError("MSORT's buffer does not have its tile's rank");
  }
  if (across && (dyn_len || dynamic_stride)) {
    return Refused(index, absl::StrCat("along dim ", dim, " over a run-time column length or "
                                       "strides (the target transposes static column blocks)"));
  }
  const int64_t k = fn.tile[dim];
  const PtoBuffer out = host_plan::Viewed(p.buffers[store.buffer], store);
  // Ranked: the task writes the ranks from its offset along dim (a row's
  // positions cut into tiles, or a run-time row length), 0 past the row.
  const bool ranked = dyn_len || (static_cast<int>(out.shape.size()) == rank && out.shape[dim] != k);
  if (out.dtype != pto::v1::DT_INT64 || static_cast<int>(out.shape.size()) != rank || k < 1 ||
      (!dyn_len && k > src.shape[dim]) || (across && ranked)) {
    return Refused(index, absl::StrCat("with its ", out.shape.empty() ? 0 : out.shape.back(),
                                       " positions per row cut into tiles of ", k,
                                       " (the target writes a column's positions in one task)"));
  }
  // The row's length: static, or the capacity its tiles are sized for.
  int64_t n = dyn_len ? 0 : src.shape[dim];
  if (n > kMaxRow) {
    return Refused(index, absl::StrCat("of rows of ", n, " values (the target sorts rows of up to ",
                                       kMaxRow, " in the UB)"));
  }
  const char* staging = StagingElem(src.dtype);
  if (staging == nullptr) {
    return Refused(index, absl::StrCat("of ", pto::v1::DataType_Name(src.dtype),
                                       " values (the target's sort keys are f32: FP32, FP16, "
                                       "INT8, INT16, UINT8 and BOOL values are exact in them, "
                                       "INT32 values sort as two 16-bit halves)"));
  }
  // INT32 rows sort twice, by the low 16 bits and then, stably, by the
  // high 16 (f32 keys exact in both).
  const bool int_keys = src.dtype == pto::v1::DT_INT32;
  const int64_t kp = RoundUp(k, 8);  // 32 bytes of int32
  const bool twice = src.dtype == pto::v1::DT_FP32;
  if (dyn_len) n = AscendSortCapacity(src.dtype, k);
  if (n < 1) {
    return Refused(index, absl::StrCat("over a run-time row length with tiles of ", k,
                                       " positions (no padded row fits the UB beside them)"));
  }
  if (fn.runtime_extents) {
    for (int d = 1; d + 1 < rank; ++d) {
      if (fn.tile[d] != 1) {
        return Refused(index, absl::StrCat("with run-time tile extents over a rank-", rank,
                                           " tile of more than one row block"));
      }
    }
  }
  const host_plan::Access acc =
      host_plan::MakeAccess(out, fn.tile, store.index, store.reduce_dim, store.stride_dynamic);
  if (acc.bcast3) return Refused(index, "storing its positions with a broadcast last dim");
  const int dim4 = dim + 4 - rank;  // the sorted dim among the access's four
  if (across && acc.strides4_text[dim4] != absl::StrCat(acc.strides4[dim4])) {
    return Refused(index, "storing its positions along a dim with a run-time stride");
  }

  int64_t np = kBlock;
  while (np < n) np *= 4;
  const int64_t list = 8 * np;       // bytes of one list of (key, index) pairs
  const bool half = src.dtype == pto::v1::DT_FP16;
  const bool desc = sort.descending;

  // UB: list A at 0, list B at `list`. Before TSORT32 writes A, A holds the
  // loaded row (0) and the staging or constant tile (4 NP); B the padded keys
  // (list) and the indices (list + 4 NP), which the mask precedes.
  std::string decl;
  // (A valid length of kRunTime: the row's or the task's, given when the
  // tile is declared.)
  constexpr int64_t kRunTime = -1;
  auto tile_type = [&](const std::string& name, const std::string& elem, int64_t cols,
                       int64_t valid, const char* pad) {
    absl::StrAppend(&decl, "  using ", name, " = Tile<TileType::Vec, ", elem, ", 1, ", cols,
                    ", BLayout::RowMajor, 1, ",
                    valid == kRunTime ? std::string("DYNAMIC") : absl::StrCat(valid),
                    pad == nullptr ? ""
                                   : absl::StrCat(", SLayout::NoneBox, TileConfig::fractalABSize, "
                                                  "PadValue::", pad),
                    ">;\n");
  };
  auto place = [&](const std::string& type, const std::string& name, int64_t at,
                   const std::string& ctor = "") {
    absl::StrAppend(&decl, "  ", type, " ", name, ctor, ";\n  TASSIGN(", name,
                    absl::StrFormat(", 0x%x);\n", at));
  };
  // The row's length and the task's first rank and count of positions.
  const std::string n_expr =
      dyn_len ? absl::StrCat("args[", rank + sort.extent_dynamic, "]") : absl::StrCat(n);
  const bool xk_dyn = ranked && fn.runtime_extents && k != 1;
  const std::string xk_expr =
      xk_dyn ? absl::StrCat("args[", fn.num_args - rank + dim, "]") : absl::StrCat(k);
  const std::string row_ctor = dyn_len ? absl::StrCat("(", n_expr, ")") : "";
  const std::string pos_ctor = xk_dyn ? absl::StrCat("(", xk_expr, ")") : "";
  tile_type("SortRow", "float", np, dyn_len ? kRunTime : n, nullptr);
  tile_type("SortKey", "float", np, np, "Min");
  tile_type("SortIdx", "uint32_t", np, np, nullptr);
  tile_type("SortMask", "uint8_t", RoundUp(np / 8, 32), np / 8, nullptr);
  tile_type("SortPairs", "float", 2 * np, 2 * np, nullptr);
  tile_type("SortFirst", "float", 2 * np, 2 * kp, "Min");
  tile_type("SortPos", "int32_t", kp, kp, nullptr);
  tile_type("SortPosK", "int32_t", kp, xk_dyn ? kRunTime : k, "Zero");
  tile_type("SortLong", "int64_t", kp, xk_dyn ? kRunTime : k, nullptr);
  if (*staging != '\0') tile_type("SortStage", staging, np, dyn_len ? kRunTime : n, nullptr);
  // FP32 rows sort twice (NaN above +inf): the first sort's positions kept
  // after the two lists, the second's class keys gathered from its pairs.
  if (int_keys || ranked) tile_type("SortAll", "int32_t", np, np, nullptr);
  if (twice) {
    tile_type("SortScore", "float", kp, kp, nullptr);
    tile_type("SortPosMask", "uint8_t", RoundUp(kp / 8, 32), kp / 8, nullptr);
  }
  if (twice && ranked) tile_type("SortAllKeys", "float", np, np, nullptr);
  // The merges alternate A and B: TSORT32 writes A, each TMRGSORT the other.
  int merges = 0;
  for (int64_t len = 2 * kBlock; len < 2 * np; len *= 4) ++merges;
  const int64_t last = merges % 2 == 0 ? 0 : list;  // the sorted row's list
  const int64_t other = list - last;
  place("SortPairs", "spa", 0);
  place("SortPairs", "spb", list);
  place("SortRow", "sraw", 0, row_ctor);
  place("SortRow", "sbig", 4 * np, row_ctor);
  if (*staging != '\0' && !int_keys) place("SortStage", "sstage", 4 * np, row_ctor);
  place("SortKey", "skey", list);
  place("SortIdx", "sidx", list + 4 * np);
  place("SortMask", "smask", list + 4 * np);
  place("SortFirst", "sfirst", last);
  if (!ranked) {
    place("SortPos", "spos", other);
    place("SortPosK", "sposk", other);
    place("SortLong", "slong", last);
  }
  int64_t ub = 2 * list;
  if (int_keys) {
    // The row (kept through both sorts), then the first sort's positions;
    // in list A the halves (sgx) and the shift count (scnt, over sraw).
    place("SortStage", "sxi", ub, row_ctor);
    place("SortAll", "sp1", ub + 4 * np);
    place("SortPos", "sfinal", ub);
    place("SortStage", "sgx", 4 * np, row_ctor);
    place("SortStage", "scnt", 0, row_ctor);
    ub += 8 * np;
  }
  if (twice) {
    place("SortRow", "sone", list, row_ctor);
    if (!ranked) place("SortScore", "sscore", other + 4 * kp);
    place("SortPos", "sfirstpos", ub);
    place("SortPosMask", "spmask", ub + 4 * kp);
    ub += 4 * kp + RoundUp(kp / 8, 32);
  }
  if (ranked) {
    // All NP index words (and FP32 keys) in the list the merges left dead;
    // the task's ranks, zeros and the mask of ranks inside the row; the
    // positions (and class keys) at those ranks; their int64 copy.
    const int64_t mask = RoundUp(kp / 8, kUbAlign);
    tile_type("SortRankMask", "uint8_t", mask, kp / 8, nullptr);
    place("SortAll", "sall", other);
    if (twice) place("SortAllKeys", "sallkeys", other);
    place("SortPos", "srank", ub);
    place("SortPos", "szero", ub + 4 * kp);
    place("SortRankMask", "srmask", ub + 8 * kp);
    ub += 8 * kp + mask;
    place("SortPos", "spos", ub);
    place("SortPosK", "sposk", ub, pos_ctor);
    ub += 4 * kp;
    if (twice) {
      place("SortScore", "sscore", ub);
      ub += 4 * kp;
    }
    place("SortLong", "slong", ub, pos_ctor);
    ub += 8 * kp;
  }
  // Sorting along a dim before the last: the task's columns, in groups of
  // up to kGroup, are TLOADed as [n, w] blocks (FP16 and the narrow
  // integers TCVT to f32) and transposed (TTRANS) into the [w, NP] tile
  // sct; row j of it is gathered into the row tile (TCI from j NP, TGATHER)
  // and sorted as a row; its positions go into row j of the flat [w, kp]
  // int32 tile spt (TCOLEXPAND, then TSEL where the flat index lies in
  // [j kp, (j + 1) kp)), which is transposed back into [k, w], widened to
  // int64 and stored. Tiles meet only through instructions (the CPU
  // simulation gives every tile its own storage); the addresses below are
  // the device's, each region dead wherever a later one overlays it.
  const bool widen = across && !int_keys && *staging != '\0';
  const int64_t esz = DTypeBytes(src.dtype);
  const int64_t cols = fn.tile[rank - 1];
  const int64_t flat = kGroup * kp;  // spt's elements
  const int64_t mask_bytes = RoundUp(flat / 8, kUbAlign);
  int64_t at_t = 0, at_c = 0, at_blk = 0;
  if (across) {
    at_t = ub;                       // sct: kGroup rows of NP 4-byte values
    at_c = at_t + kGroup * np * 4;   // spt, its flat index, one row's copies, the mask
    const int64_t c_bytes = std::max(kGroup * np * 4, 4 * 4 * flat + mask_bytes);
    at_blk = at_c + c_bytes;         // the loaded block (and widened), then the positions'
    const int64_t blk_bytes =
        std::max((widen ? 2 : 1) * n * kUbAlign, 4 * flat + 8 * flat);
    ub = at_blk + blk_bytes;
  }
  if (ub > kAiCoreMemoryModel.ub_bytes) {
    return Refused(index, absl::StrCat("needing ", ub, " bytes of UB",
                                       across ? absl::StrCat(" (columns of ", n, ", ", k,
                                                             " positions each)")
                                              : ""));
  }
  std::vector<int64_t> src_stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) src_stride[d] = src_stride[d + 1] * src.shape[d + 1];
  std::vector<std::string> src_stride_text(rank);
  for (int d = 0; d < rank; ++d) {
    const int arg = sort.stride_dynamic.empty() ? -1 : sort.stride_dynamic[d];
    src_stride_text[d] =
        arg >= 0 ? absl::StrCat("args[", rank + arg, "]") : absl::StrCat(src_stride[d]);
  }
  // The column path's tiles for a group of w columns, suffixed with w.
  auto column_types = [&](int64_t w) {
    const std::string elem = *staging != '\0' ? staging : "float";
    const std::string word = int_keys ? "int32_t" : "float";
    auto tile2 = [&](const std::string& name, const std::string& el, int64_t r, int64_t c,
                     int64_t vr, int64_t vc) {
      absl::StrAppend(&decl, "  using ", name, w, " = Tile<TileType::Vec, ", el, ", ", r, ", ", c,
                      ", BLayout::RowMajor, ", vr, ", ", vc, ">;\n");
    };
    tile2("SortColBlock", elem, n, kUbAlign / esz, n, w);
    if (widen) tile2("SortColWide", "float", n, kGroup, n, w);
    tile2("SortColRows", word, kGroup, np, w, n);
    tile2("SortPosRows", "int32_t", kGroup, kp, w, k);
    tile2("SortPosBlock", "int32_t", kp, kGroup, k, w);
    tile2("SortLongBlock", "int64_t", kp, kGroup, k, w);
    std::vector<std::tuple<std::string, std::string, int64_t>> tiles = {
        {"SortColBlock", "scb", at_blk},     {"SortColRows", "sct", at_t},
        {"SortColRows", "scttmp", at_c},     {"SortPosRows", "spt", at_c},
        {"SortPosBlock", "spb32", at_blk},   {"SortPosBlock", "spbtmp", at_c + 4 * flat},
        {"SortLongBlock", "slb", at_blk + 4 * flat}};
    if (widen) tiles.emplace_back("SortColWide", "scw", at_blk + n * kUbAlign);
    for (const auto& [type, name, at] : tiles) {
      place(absl::StrCat(type, w), absl::StrCat(name, w), at);
    }
    absl::StrAppend(&decl, "  using GColIn", w, " = GlobalTensor<", ascend::GmElem(src.dtype),
                    ", Shape<1, 1, 1, ", n, ", ", w, ">, Stride<1, 1, 1, ", src_stride[dim],
                    ", 1>, Layout::ND>;\n");
    absl::StrAppend(&decl, "  using GColOut", w, " = GlobalTensor<int64_t, Shape<1, 1, 1, ", k,
                    ", ", w, ">, Stride<1, 1, 1, ", acc.strides4[dim4], ", 1>, Layout::ND>;\n");
  };
  if (across) {
    tile_type("SortColIdx", "int32_t", np, n, nullptr);
    tile_type("SortFlat", "int32_t", flat, flat, nullptr);
    tile_type("SortFlatMask", "uint8_t", mask_bytes, flat / 8, nullptr);
    absl::StrAppend(&decl, "  using SortCopies = Tile<TileType::Vec, int32_t, ", kGroup, ", ", kp,
                    ", BLayout::RowMajor, ", kGroup, ", ", kp, ">;\n");
    place("SortColIdx", "scidx", list);  // over the keys, before they are padded
    place("SortFlat", "sptf", at_c);
    place("SortFlat", "sfi", at_c + 4 * flat);
    place("SortCopies", "spx", at_c + 8 * flat);
    place("SortFlat", "spxf", at_c + 8 * flat);
    place("SortFlat", "stf", at_c + 12 * flat);
    place("SortFlatMask", "sfmask", at_c + 16 * flat);
    if (cols >= kGroup) column_types(kGroup);
    if (cols % kGroup != 0) column_types(cols % kGroup);
  }

  // GM: the row of the source (dense, its dims' strides from its shape, or
  // run-time ones from the args) and of the result (the store's access),
  // at the task's offsets plus the row's coordinates in the tile.
  std::string body;
  std::string* sink = &body;
  std::string indent = "    ";
  auto line = [&](const std::string& s) { absl::StrAppend(sink, indent, s, "\n"); };
  auto sync = [&](const char* from, const char* to) {
    const std::string pair = absl::StrCat(from, ", ", to, ", EVENT_ID0");
    line(absl::StrCat("set_flag(", pair, ");"));
    line(absl::StrCat("wait_flag(", pair, ");"));
  };
  std::vector<std::string> src_terms, out_terms = {absl::StrCat("(", acc.offset, ")")};
  // The dims the rows (or column blocks) run over: all but the sorted one
  // and, for columns, the last.
  std::vector<int> outer;
  for (int d = 0; d + 1 < rank; ++d) {
    if (d != dim) outer.push_back(d);
  }
  if (!outer.empty()) line("int64_t rest = r;");
  for (int o = static_cast<int>(outer.size()) - 1; o >= 0; --o) {
    const int d = outer[o];
    const std::string i = absl::StrCat("i", d);
    if (o == 0) {
      line(absl::StrCat("const int64_t ", i, " = rest;"));
    } else {
      line(absl::StrCat("const int64_t ", i, " = rest % ", fn.tile[d], ";"));
      line(absl::StrCat("rest /= ", fn.tile[d], ";"));
    }
    src_terms.push_back(absl::StrCat("(args[", d, "] + ", i, ") * ", src_stride_text[d]));
    out_terms.push_back(absl::StrCat(i, " * (", acc.strides4_text[d + 4 - rank], ")"));
  }
  if (src_terms.empty()) src_terms.push_back("0");
  int64_t group_w = 0;  // the column group being emitted
  // The row's values into sraw (sxi for INT32 keys): loaded from GM, or
  // gathered from row j of the transposed column block.
  auto load_row = [&] {
    if (across) {
      line(absl::StrCat("TCI<SortColIdx, int32_t, 0>(scidx, static_cast<int32_t>(j * ", np,
                        "));"));
      line(absl::StrCat("TGATHER(", int_keys ? "sxi" : "sraw", ", sct", group_w, ", scidx);"));
    } else if (int_keys) {
      line("TLOAD(sxi, gin);");
      sync("PIPE_MTE2", "PIPE_V");
    } else if (*staging != '\0') {
      line("TLOAD(sstage, gin);");
      sync("PIPE_MTE2", "PIPE_V");
      line("TCVT(sraw, sstage, RoundMode::CAST_NONE);");
    } else {
      line("TLOAD(sraw, gin);");
      sync("PIPE_MTE2", "PIPE_V");
    }
  };
  // The keys in sraw sorted into (key, index) pairs, the indices from TCI:
  // the list holding them.
  auto sort_pairs = [&]() -> std::string {
    line("TFILLPAD(skey, sraw);");
    line("TCI<SortIdx, uint32_t, 0>(sidx, 0u);");
    line("TSORT32(spa, skey, sidx);");
    bool in_a = true;
    for (int64_t len = 2 * kBlock; len < 2 * np; len *= 4) {
      line(absl::StrCat("TMRGSORT(", in_a ? "spb, spa" : "spa, spb", ", ", len, ");"));
      in_a = !in_a;
    }
    return in_a ? "spa" : "spb";
  };
  // The keys in sraw sorted into the first k positions in `into` (and,
  // with `scores`, the first k keys into sscore); ranked, the positions (and
  // keys) at the task's ranks: all NP gathered from the pairs (TGATHER
  // P1010, P0101), then those at the ranks (TGATHER by srank).
  auto sort_keys = [&](const char* into, bool scores) {
    if (ranked) {
      const std::string pairs = sort_pairs();
      line(absl::StrCat("TGATHER<SortAll, SortPairs, MaskPattern::P1010>(sall, ", pairs, ");"));
      line(absl::StrCat("TGATHER(", into, ", sall, srank);"));
      if (scores) {
        line(absl::StrCat("TGATHER<SortAllKeys, SortPairs, MaskPattern::P0101>(sallkeys, ", pairs,
                          ");"));
        line("TGATHER(sscore, sallkeys, srank);");
      }
      return;
    }
    line(absl::StrCat("TFILLPAD(sfirst, ", sort_pairs(), ");"));
    line(absl::StrCat("TGATHER<SortPos, SortFirst, MaskPattern::P1010>(", into, ", sfirst);"));
    if (scores) line("TGATHER<SortScore, SortFirst, MaskPattern::P0101>(sscore, sfirst);");
  };
  // A row's sort, from its load to its first k positions (int32) in the
  // tile named by the result.
  auto sort_row = [&]() -> std::string {
    load_row();
    if (!int_keys) {
      // Keys: not-NaN mask first (TMINS/TMAXS leave NaN target-defined).
      line("TCMPS(smask, sraw, __builtin_huge_valf(), CmpMode::LE);");
      if (half) {
        line(absl::StrCat("TMINS(sraw, sraw, ", ascend::FloatLiteral(kHalfInfKey), ");"));
        line(absl::StrCat("TMAXS(sraw, sraw, ", ascend::FloatLiteral(-kHalfInfKey), ");"));
      }
      if (!desc) line("TMULS(sraw, sraw, -1.0f);");
      line(absl::StrCat("TEXPANDS(sbig, ", desc ? "" : "-", "__builtin_huge_valf());"));
      line("TSEL(sraw, smask, sraw, sbig);");
      line("TADDS(sraw, sraw, 0.0f);");
    }
    if (int_keys) {
      EmitIntKeySorts(desc, sort_pairs, sort_keys, line);
      return "sfinal";
    }
    if (!twice) {
      sort_keys("spos", false);
      return "spos";
    }
    // NaN and +inf tie in the first sort (both +inf, or -inf ascending).
    // The second sorts classes only: descending NaN 2, +inf 1, the rest 0
    // (ascending 0, 1, 2), each class in input order, so its ranks holding
    // NaN or +inf (a class key above 0.5, ascending below 1.5) are the
    // first sort's tied ones in torch's order; the others are the first's.
    sort_keys("sfirstpos", false);
    if (across) {  // (the sort wrote over scidx)
      line(absl::StrCat("TCI<SortColIdx, int32_t, 0>(scidx, static_cast<int32_t>(j * ", np,
                        "));"));
      line(absl::StrCat("TGATHER(sraw, sct", group_w, ", scidx);"));
    } else {
      sync("PIPE_V", "PIPE_MTE2");
      line("TLOAD(sraw, gin);");
      sync("PIPE_MTE2", "PIPE_V");
    }
    line("TEXPANDS(sone, 1.0f);");
    line(absl::StrCat("TEXPANDS(sbig, ", desc ? "2.0f" : "0.0f", ");"));
    line("TCMPS(smask, sraw, __builtin_huge_valf(), CmpMode::LE);");
    line("TSEL(sone, smask, sone, sbig);");
    line(absl::StrCat("TCMPS(smask, sraw, ", ascend::FloatLiteral(3.4028234663852886e38),
                      ", CmpMode::LE);"));
    line(absl::StrCat("TEXPANDS(sbig, ", desc ? "0.0f" : "2.0f", ");"));
    line("TSEL(sraw, smask, sbig, sone);");
    sort_keys("spos", true);
    line(absl::StrCat("TCMPS(spmask, sscore, ", desc ? "0.5f, CmpMode::GT" : "1.5f, CmpMode::LT",
                      ");"));
    line("TSEL(spos, spmask, spos, sfirstpos);");
    return "spos";
  };
  if (!across) {
    const std::string in_shape = dyn_len ? absl::StrCat(", GSortIn::Shape(", n_expr, "), {}") : "";
    const std::string out_shape =
        xk_dyn ? absl::StrCat(", GSortOut::Shape(", xk_expr, "), {}") : "";
    line(absl::StrCat("GSortIn gin(b", sort.buffer, " + (", absl::StrJoin(src_terms, " + "), ")",
                      in_shape, ");"));
    line(absl::StrCat("GSortOut gout(b", store.buffer, " + (", absl::StrJoin(out_terms, " + "),
                      ")", out_shape, ");"));
    const std::string positions = sort_row();
    if (ranked) {  // ranks past the row's end: position 0
      line(absl::StrCat("TCMPS(srmask, srank, static_cast<int32_t>(", n_expr, "), CmpMode::LT);"));
      line(absl::StrCat("TSEL(", positions, ", srmask, ", positions, ", szero);"));
    }
    line(absl::StrCat("TFILLPAD(sposk, ", positions, ");"));
    line("TCVT(slong, sposk, RoundMode::CAST_NONE);");
    sync("PIPE_V", "PIPE_MTE3");
    line("TSTORE(gout, slong);");
    sync("PIPE_MTE3", "PIPE_MTE2");
  } else {
    // A group of w columns from column `c0` (a C++ expression) of the task.
    auto group = [&](int64_t w, const std::string& c0) {
      group_w = w;
      std::vector<std::string> in = src_terms, out = out_terms;
      in.push_back(absl::StrCat("(args[", rank - 1, "] + ", c0, ")"));
      out.push_back(c0);
      line(absl::StrCat("GColIn", w, " gin(b", sort.buffer, " + (", absl::StrJoin(in, " + "),
                        "));"));
      line(absl::StrCat("GColOut", w, " gout(b", store.buffer, " + (", absl::StrJoin(out, " + "),
                        "));"));
      line(absl::StrCat("TLOAD(scb", w, ", gin);"));
      sync("PIPE_MTE2", "PIPE_V");
      if (widen) {
        line(absl::StrCat("TCVT(scw", w, ", scb", w, ", RoundMode::CAST_NONE);"));
        line(absl::StrCat("TTRANS(sct", w, ", scw", w, ", scttmp", w, ");"));
      } else {
        line(absl::StrCat("TTRANS(sct", w, ", scb", w, ", scttmp", w, ");"));
      }
      line("TCI<SortFlat, int32_t, 0>(sfi, 0);");
      line(absl::StrCat("for (int64_t j = 0; j < ", w, "; ++j) {"));
      const std::string saved = indent;
      indent += "  ";
      const std::string positions = sort_row();
      line(absl::StrCat("TCOLEXPAND(spx, ", positions, ");"));
      line("TRESHAPE(spxf, spx);");
      line(absl::StrCat("TCMPS(sfmask, sfi, static_cast<int32_t>(j * ", kp, "), CmpMode::GE);"));
      line("TSEL(stf, sfmask, spxf, sptf);");
      line(absl::StrCat("TCMPS(sfmask, sfi, static_cast<int32_t>((j + 1) * ", kp,
                        "), CmpMode::LT);"));
      line("TSEL(sptf, sfmask, stf, sptf);");
      indent = saved;
      line("}");
      line(absl::StrCat("TRESHAPE(spt", w, ", sptf);"));
      line(absl::StrCat("TTRANS(spb32", w, ", spt", w, ", spbtmp", w, ");"));
      line(absl::StrCat("TCVT(slb", w, ", spb32", w, ", RoundMode::CAST_NONE);"));
      sync("PIPE_V", "PIPE_MTE3");
      line(absl::StrCat("TSTORE(gout, slb", w, ");"));
      sync("PIPE_MTE3", "PIPE_MTE2");
    };
    if (cols >= kGroup) {
      line(absl::StrCat("for (int64_t g = 0; g < ", cols / kGroup, "; ++g) {"));
      indent += "  ";
      group(kGroup, absl::StrCat("g * ", kGroup));
      indent.resize(indent.size() - 2);
      line("}");
    }
    if (cols % kGroup != 0) group(cols % kGroup, absl::StrCat(cols / kGroup * kGroup));
  }

  std::set<int> buffers = {sort.buffer, store.buffer};
  std::vector<std::string> params;
  for (int b : buffers) {
    params.push_back(absl::StrCat("__gm__ ", ascend::GmElem(p.buffers[b].dtype), "* b", b));
  }
  params.push_back("__gm__ const int64_t* args");
  int64_t rows = 1;
  for (int d : outer) rows *= fn.tile[d];
  const std::string row_count =
      fn.runtime_extents && rank > 1 ? absl::StrCat("args[", fn.num_args - rank, "]")
                                     : absl::StrCat(rows);
  std::string globals;
  if (!across) {
    globals = absl::StrCat("  using GSortIn = GlobalTensor<", ascend::GmElem(src.dtype),
                           ", Shape<1, 1, 1, 1, ", dyn_len ? "DYNAMIC" : absl::StrCat(n),
                           ">, Stride<1, 1, 1, 1, 1>, Layout::ND>;\n",
                           "  using GSortOut = GlobalTensor<int64_t, Shape<1, 1, 1, 1, ",
                           xk_dyn ? "DYNAMIC" : absl::StrCat(k),
                           ">, Stride<1, 1, 1, 1, 1>, Layout::ND>;\n");
  }
  if (ranked) {  // the task's ranks along dim, and zeros for those past the row
    globals += absl::StrCat("  TCI<SortPos, int32_t, 0>(srank, static_cast<int32_t>(args[", dim,
                            "]));\n  TEXPANDS(szero, 0);\n");
  }
  return absl::StrCat(
      "// @f", index, ": vector, sort of ", across ? "columns" : "rows", " of ",
      dyn_len ? absl::StrCat("up to ", n) : absl::StrCat(n), " (",
      desc ? "descending" : "ascending", ", ", k, " positions each) over tile [",
      absl::StrJoin(fn.tile, ", "), "], ", ub, " bytes of UB\n", "__global__ AICORE void pto_f",
      index, "(", absl::StrJoin(params, ", "), ") {\n", decl, globals,
      "  for (int64_t r = 0; r < ", row_count, "; ++r) {\n", body, "  }\n}\n\n");
}

}  // namespace pto::compiler
