// InstructionEmitter's one-row fusions: instruction runs on one row at a
// time (a per-row function, or a row group's tile one row long) emitted as
// one pto_tile.h row call (TSoftmaxRow, TSubExpSumRow) or one loop over the
// row (a run of row arithmetic, host_plan::FindRowRun).
#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/targets/host/host_emit.h"

namespace pto::compiler::host_emit {

using host_plan::Access;
using host_plan::MakeAccess;
using host_plan::ReadLater;
using host_plan::RowRun;
using host_plan::SoftmaxExpAt;

int InstructionEmitter::SoftmaxRow(int i) {
  // One call writes the row's result into GM (it prefetches that row for
  // writing itself) or its UB tile; the row tiles and e are never written.
  const PtoInstr& in = fn_.body[i];
  const PtoInstr& mul = fn_.body[i + 5];
  std::string o = absl::StrCat("t", mul.dst);
  if (f_.plan.writes_store[i + 5] >= 0) {
    const PtoInstr& st = fn_.body[f_.plan.writes_store[i + 5]];
    const Access a = MakeAccess(p_.buffers[st.buffer], fn_.tile, st.index, -1);
    o = absl::StrCat("o", i + 5);
    absl::StrAppend(out_, indent_, "float* ", o, " = static_cast<float*>(buffers[", st.buffer,
                    "]) + (", a.offset, RowAt(a), ");\n");
  }
  absl::StrAppend(out_, indent_, "pto_tile::TSoftmaxRow<", f_.cols, ">(", o, ", ",
                  name_[in.srcs[0]], NextRow(i, in.srcs[0]), ");\n");
  name_[mul.dst] = o;
  columns_[mul.dst] = false;
  prefetch_pending_ = false;
  return i + 5;
}

int InstructionEmitter::SubExpSum(int i) {
  const PtoInstr& in = fn_.body[i];
  const PtoInstr& exp = fn_.body[i + 1];
  const PtoInstr& sum = fn_.body[i + 2];
  const std::string x = name_[in.srcs[0]], m = name_[in.srcs[1]];
  // x read in place per row: prefetch the next row of the tile, and
  // (RowPrefetch) this row of the function's GM result.
  std::string next = NextRow(i, in.srcs[0]);
  name_[exp.dst] = absl::StrCat("t", exp.dst);
  name_[sum.dst] = absl::StrCat("t", sum.dst);
  columns_[exp.dst] = false;
  if (prefetch_pending_ && !prefetch_.writes.empty()) {
    absl::StrAppend(&next, next.empty() ? ", nullptr" : "", ", ", prefetch_.writes[0]);
  }
  prefetch_pending_ = false;
  absl::StrAppend(out_, indent_, "pto_tile::TSubExpSumRow<", f_.cols,
                  SoftmaxExpAt(fn_, i) ? ", true" : "", ">(", name_[exp.dst], ", ",
                  name_[sum.dst], ", ", x, ", ", m, next, ");\n");
  return i + 2;
}

int InstructionEmitter::RowRunLoop(int i, const RowRun& run) {
  const std::string& indent = indent_;
  std::string& out = *out_;
  const int64_t cols = f_.cols;
  const int end = i + run.length;  // one past the run's last arithmetic
  // value[t]: tile t's value at element k inside the loop. Arrays and GM
  // rows are __restrict parameters r0, r1, .. of the loop's lambda (it
  // reads and writes distinct memory: PerRow has no buffer both loaded and
  // stored, and a tile is one parameter however often used).
  std::map<int, std::string> value;
  std::vector<std::string> bases;  // the names behind r0, r1, ..
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
    return absl::StrCat(restricted(name_[t], false), IsRow(t) ? "[0]" : "[k]");
  };
  std::string body;
  for (int j = i; j < end; ++j) {
    const PtoInstr& r = fn_.body[j];
    const std::string a = operand(r.srcs[0]), b = operand(r.srcs[1]);
    const std::string v = absl::StrCat("v", j);
    absl::StrAppend(&body, indent, "    const float ", v, " = pto_tile::",
                    PtoHostFunction(r.op), "Fn::Apply(", a, ", ", b, ");\n");
    value[r.dst] = v;
    columns_[r.dst] = false;
    if (f_.plan.writes_store[j] >= 0) {
      const PtoInstr& st = fn_.body[f_.plan.writes_store[j]];
      const Access acc = MakeAccess(p_.buffers[st.buffer], fn_.tile, st.index, -1);
      absl::StrAppend(&out, indent, "float* o", j, " = static_cast<float*>(buffers[", st.buffer,
                      "]) + (", acc.offset, RowAt(acc), ");\n");
      name_[r.dst] = absl::StrCat("o", j);
      absl::StrAppend(&body, indent, "    ", restricted(name_[r.dst], true), "[k] = ", v, ";\n");
      continue;
    }
    // Written to its tile only when read after the run (the last
    // definition in the run is the one read).
    bool redefined = false;
    for (int k = j + 1; k < end; ++k) redefined = redefined || fn_.body[k].dst == r.dst;
    name_[r.dst] = absl::StrCat("t", r.dst);
    if (!redefined && ReadLater(fn_, run.sum >= 0 ? run.sum : end - 1, r.dst)) {
      absl::StrAppend(&body, indent, "    ", restricted(name_[r.dst], true), "[k] = ", v, ";\n");
    }
  }
  // A lambda with __restrict parameters: GCC's -O2 vectorizer trusts those
  // (not local restrict pointers) and adds no alias checks.
  std::vector<std::string> params;
  for (size_t k = 0; k < bases.size(); ++k) {
    params.push_back(absl::StrCat(written[k] ? "float" : "const float", "* __restrict r", k));
  }
  const std::string lambda = absl::StrCat("[](", absl::StrJoin(params, ", "), ") {\n");
  const std::string call = absl::StrCat(indent, "}(", absl::StrJoin(bases, ", "), ");\n");
  if (run.sum < 0) {
    absl::StrAppend(&out, indent, lambda, indent, "  for (int64_t k = 0; k < ", cols,
                    "; ++k) {\n", body, indent, "  }\n", call);
    return end - 1;
  }
  // ReduceRow's lanes: element k in lane k % 16 (the tail past the last
  // group of 16 into lanes 0..), then pairwise (SumLanes, in registers);
  // the sum is written after the loop (its row tile may be an operand).
  const int64_t grouped = cols / 16 * 16;
  const std::string last = absl::StrCat("v", end - 1);
  const PtoInstr& sum = fn_.body[run.sum];
  // The row's prefetches (RowPrefetch), one line per group of 16, as
  // parameters p0, p1, .. (not __restrict: never accessed).
  std::string prefetches;
  std::string lambda_pf = lambda, call_pf = call;
  if (prefetch_pending_) {
    std::vector<std::string> pf_params, pf_args;
    for (const std::string& r : prefetch_.reads) {
      const std::string v = absl::StrCat("p", pf_params.size());
      pf_params.push_back(absl::StrCat("const float* ", v));
      pf_args.push_back(r);
      absl::StrAppend(&prefetches, indent, "   __builtin_prefetch(", v, " + k0);\n");
    }
    for (const std::string& w : prefetch_.writes) {
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
    prefetch_pending_ = false;
  }
  absl::StrAppend(&out, indent, "t", sum.dst, "[0] = ", lambda_pf, indent,
                  "  float lane[16] = {};\n", indent, "  for (int64_t k0 = 0; k0 < ", grouped,
                  "; k0 += 16) {\n", prefetches, indent,
                  "   for (int64_t j = 0; j < 16; ++j) {\n", indent,
                  "    const int64_t k = k0 + j;\n", body, indent, "    lane[j] = lane[j] + ",
                  last, ";\n", indent, "   }\n", indent, "  }\n");
  if (grouped < cols) {
    absl::StrAppend(&out, indent, "  for (int64_t k = ", grouped, "; k < ", cols, "; ++k) {\n",
                    body, indent, "    lane[k - ", grouped, "] = lane[k - ", grouped, "] + ",
                    last, ";\n", indent, "  }\n");
  }
  absl::StrAppend(&out, indent, "  return pto_tile::SumLanes(lane);\n", call_pf);
  name_[sum.dst] = absl::StrCat("t", sum.dst);
  return run.sum;
}

}  // namespace pto::compiler::host_emit
