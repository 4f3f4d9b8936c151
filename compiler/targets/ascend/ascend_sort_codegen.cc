#include "compiler/targets/ascend/ascend_sort_codegen.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/targets/ascend/ascend_codegen.h"
#include "compiler/targets/ascend/ascend_math.h"
#include "compiler/targets/host/host_function_plan.h"
#include "compiler/targets/memory_model.h"

namespace pto::compiler {
namespace {

constexpr int64_t kBlock = 32;         // TSORT32's block of values
constexpr int64_t kMaxRow = 8192;      // two pair lists of 8 NP bytes in the UB
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
    default: return nullptr;
  }
}

}  // namespace

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
  if (dim != rank - 1) {
    return Refused(index, absl::StrCat("along dim ", dim, " of a rank-", rank,
                                       " tile (the target sorts along the last dim)"));
  }
  const bool dynamic_stride = std::any_of(sort.stride_dynamic.begin(), sort.stride_dynamic.end(),
                                          [](int s) { return s >= 0; });
  if (sort.extent_dynamic >= 0 || dynamic_stride ||
      static_cast<int>(src.shape.size()) != rank) {
    return Refused(index, "over a run-time row length or strides (its UB tiles and TMRGSORT passes are "
                          "sized when compiling: the target sorts static rows)");
  }
  const int64_t n = src.shape[dim];
  const int64_t k = fn.tile[dim];
  const PtoBuffer out = host_plan::Viewed(p.buffers[store.buffer], store);
  if (out.dtype != pto::v1::DT_INT64 || static_cast<int>(out.shape.size()) != rank ||
      out.shape[dim] != k || k > n || k < 1) {
    return Refused(index, absl::StrCat("with its ", out.shape.empty() ? 0 : out.shape.back(),
                                       " positions per row cut into tiles of ", k,
                                       " (the target writes a row's positions in one task)"));
  }
  if (n > kMaxRow) {
    return Refused(index, absl::StrCat("of rows of ", n, " values (the target sorts rows of up to ",
                                       kMaxRow, " in the UB)"));
  }
  const char* staging = StagingElem(src.dtype);
  if (staging == nullptr) {
    return Refused(index, absl::StrCat("of ", pto::v1::DataType_Name(src.dtype),
                                       " values (the target's sort keys are f32: FP32, FP16, "
                                       "INT8, INT16, UINT8 and BOOL values are exact in them)"));
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

  int64_t np = kBlock;
  while (np < n) np *= 4;
  const int64_t kp = RoundUp(k, 8);  // 32 bytes of int32
  const int64_t list = 8 * np;       // bytes of one list of (key, index) pairs
  int64_t rows = 1;
  for (int d = 0; d + 1 < rank; ++d) rows *= fn.tile[d];
  const std::string row_count =
      fn.runtime_extents && rank > 1 ? absl::StrCat("args[", fn.num_args - rank, "]")
                                     : absl::StrCat(rows);
  const bool half = src.dtype == pto::v1::DT_FP16;
  const bool desc = sort.descending;

  // UB: list A at 0, list B at `list`. Before TSORT32 writes A, A holds the
  // loaded row (0) and the staging or constant tile (4 NP); B the padded keys
  // (list) and the indices (list + 4 NP), which the mask precedes.
  std::string decl;
  auto tile_type = [&](const std::string& name, const std::string& elem, int64_t cols,
                       int64_t valid, const char* pad) {
    absl::StrAppend(&decl, "  using ", name, " = Tile<TileType::Vec, ", elem, ", 1, ", cols,
                    ", BLayout::RowMajor, 1, ", valid,
                    pad == nullptr ? ""
                                   : absl::StrCat(", SLayout::NoneBox, TileConfig::fractalABSize, "
                                                  "PadValue::", pad),
                    ">;\n");
  };
  auto place = [&](const std::string& type, const std::string& name, int64_t at) {
    absl::StrAppend(&decl, "  ", type, " ", name, ";\n  TASSIGN(", name,
                    absl::StrFormat(", 0x%x);\n", at));
  };
  tile_type("SortRow", "float", np, n, nullptr);
  tile_type("SortKey", "float", np, np, "Min");
  tile_type("SortIdx", "uint32_t", np, np, nullptr);
  tile_type("SortMask", "uint8_t", RoundUp(np / 8, 32), np / 8, nullptr);
  tile_type("SortPairs", "float", 2 * np, 2 * np, nullptr);
  tile_type("SortFirst", "float", 2 * np, 2 * kp, "Min");
  tile_type("SortPos", "int32_t", kp, kp, nullptr);
  tile_type("SortPosK", "int32_t", kp, k, "Zero");
  tile_type("SortLong", "int64_t", kp, k, nullptr);
  if (*staging != '\0') tile_type("SortStage", staging, np, n, nullptr);
  // FP32 rows sort twice (NaN above +inf): the first sort's positions kept
  // after the two lists, the second's class keys gathered from its pairs.
  const bool twice = src.dtype == pto::v1::DT_FP32;
  if (twice) {
    tile_type("SortScore", "float", kp, kp, nullptr);
    tile_type("SortPosMask", "uint8_t", RoundUp(kp / 8, 32), kp / 8, nullptr);
  }
  // The merges alternate A and B: TSORT32 writes A, each TMRGSORT the other.
  int merges = 0;
  for (int64_t len = 2 * kBlock; len < 2 * np; len *= 4) ++merges;
  const int64_t last = merges % 2 == 0 ? 0 : list;  // the sorted row's list
  const int64_t other = list - last;
  place("SortPairs", "spa", 0);
  place("SortPairs", "spb", list);
  place("SortRow", "sraw", 0);
  place("SortRow", "sbig", 4 * np);
  if (*staging != '\0') place("SortStage", "sstage", 4 * np);
  place("SortKey", "skey", list);
  place("SortIdx", "sidx", list + 4 * np);
  place("SortMask", "smask", list + 4 * np);
  place("SortFirst", "sfirst", last);
  place("SortPos", "spos", other);
  place("SortPosK", "sposk", other);
  place("SortLong", "slong", last);
  int64_t ub = 2 * list;
  if (twice) {
    place("SortRow", "sone", list);
    place("SortScore", "sscore", other + 4 * kp);
    place("SortPos", "sfirstpos", ub);
    place("SortPosMask", "spmask", ub + 4 * kp);
    ub += 4 * kp + RoundUp(kp / 8, 32);
  }
  if (ub > kAiCoreMemoryModel.ub_bytes) {
    return Refused(index, absl::StrCat("needing ", ub, " bytes of UB"));
  }

  // GM: the row of the source (dense, its dims' strides from its shape) and
  // of the result (the store's access), at the task's offsets plus the
  // row's coordinates in the tile.
  std::vector<int64_t> src_stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) src_stride[d] = src_stride[d + 1] * src.shape[d + 1];
  std::string body;
  auto line = [&body](const std::string& s) { absl::StrAppend(&body, "    ", s, "\n"); };
  auto sync = [&](const char* from, const char* to) {
    const std::string pair = absl::StrCat(from, ", ", to, ", EVENT_ID0");
    line(absl::StrCat("set_flag(", pair, ");"));
    line(absl::StrCat("wait_flag(", pair, ");"));
  };
  std::vector<std::string> src_terms, out_terms = {absl::StrCat("(", acc.offset, ")")};
  if (rank > 1) line("int64_t rest = r;");
  for (int d = rank - 2; d >= 0; --d) {
    const std::string i = absl::StrCat("i", d);
    if (d == 0) {
      line(absl::StrCat("const int64_t ", i, " = rest;"));
    } else {
      line(absl::StrCat("const int64_t ", i, " = rest % ", fn.tile[d], ";"));
      line(absl::StrCat("rest /= ", fn.tile[d], ";"));
    }
    src_terms.push_back(absl::StrCat("(args[", d, "] + ", i, ") * ", src_stride[d]));
    out_terms.push_back(absl::StrCat(i, " * (", acc.strides4_text[d + 4 - rank], ")"));
  }
  if (src_terms.empty()) src_terms.push_back("0");
  line(absl::StrCat("GSortIn gin(b", sort.buffer, " + (", absl::StrJoin(src_terms, " + "), "));"));
  line(absl::StrCat("GSortOut gout(b", store.buffer, " + (", absl::StrJoin(out_terms, " + "),
                    "));"));
  if (*staging != '\0') {
    line("TLOAD(sstage, gin);");
    sync("PIPE_MTE2", "PIPE_V");
    line("TCVT(sraw, sstage, RoundMode::CAST_NONE);");
  } else {
    line("TLOAD(sraw, gin);");
    sync("PIPE_MTE2", "PIPE_V");
  }
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
  // The keys in sraw sorted into the first k positions in `into` (and,
  // with `scores`, the first k keys into sscore).
  auto sort_keys = [&](const char* into, bool scores) {
    line("TFILLPAD(skey, sraw);");
    line("TCI<SortIdx, uint32_t, 0>(sidx, 0u);");
    line("TSORT32(spa, skey, sidx);");
    bool in_a = true;
    for (int64_t len = 2 * kBlock; len < 2 * np; len *= 4) {
      line(absl::StrCat("TMRGSORT(", in_a ? "spb, spa" : "spa, spb", ", ", len, ");"));
      in_a = !in_a;
    }
    line(absl::StrCat("TFILLPAD(sfirst, ", in_a ? "spa" : "spb", ");"));
    line(absl::StrCat("TGATHER<SortPos, SortFirst, MaskPattern::P1010>(", into, ", sfirst);"));
    if (scores) line("TGATHER<SortScore, SortFirst, MaskPattern::P0101>(sscore, sfirst);");
  };
  if (!twice) {
    sort_keys("spos", false);
  } else {
    // NaN and +inf tie in the first sort (both +inf, or -inf ascending).
    // The second sorts classes only: descending NaN 2, +inf 1, the rest 0
    // (ascending 0, 1, 2), each class in input order, so its ranks holding
    // NaN or +inf (a class key above 0.5, ascending below 1.5) are the
    // first sort's tied ones in torch's order; the others are the first's.
    sort_keys("sfirstpos", false);
    sync("PIPE_V", "PIPE_MTE2");
    line("TLOAD(sraw, gin);");
    sync("PIPE_MTE2", "PIPE_V");
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
  }
  line("TFILLPAD(sposk, spos);");
  line("TCVT(slong, sposk, RoundMode::CAST_NONE);");
  sync("PIPE_V", "PIPE_MTE3");
  line("TSTORE(gout, slong);");
  sync("PIPE_MTE3", "PIPE_MTE2");

  std::set<int> buffers = {sort.buffer, store.buffer};
  std::vector<std::string> params;
  for (int b : buffers) {
    params.push_back(absl::StrCat("__gm__ ", ascend::GmElem(p.buffers[b].dtype), "* b", b));
  }
  params.push_back("__gm__ const int64_t* args");
  return absl::StrCat(
      "// @f", index, ": vector, sort of rows of ", n, " (", desc ? "descending" : "ascending",
      ", ", k, " positions each) over tile [", absl::StrJoin(fn.tile, ", "), "], ", ub,
      " bytes of UB\n", "__global__ AICORE void pto_f", index, "(", absl::StrJoin(params, ", "),
      ") {\n", decl, "  using GSortIn = GlobalTensor<", ascend::GmElem(src.dtype),
      ", Shape<1, 1, 1, 1, ", n, ">, Stride<1, 1, 1, 1, 1>, Layout::ND>;\n",
      "  using GSortOut = GlobalTensor<int64_t, Shape<1, 1, 1, 1, ", k,
      ">, Stride<1, 1, 1, 1, 1>, Layout::ND>;\n", "  for (int64_t r = 0; r < ", row_count,
      "; ++r) {\n", body, "  }\n}\n\n");
}

}  // namespace pto::compiler
