#include "compiler/lower/place_in_gm.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/lower/expand_indexing.h"
#include "compiler/lower/expand_scan.h"
#include "compiler/util/strings.h"

namespace pto::compiler {
namespace {

// Owners (LayoutPlan::Owner) whose values include a parameter's take that
// parameter's buffer for all of them; an owner with a value in GM puts them
// all in GM. An IN parameter's buffer is never written.
absl::Status ShareBuffers(const TensorGraph& g, const LayoutPlan& layout,
                          const std::vector<GmBuffer>& buffers,
                          std::vector<int>* buffer_of_value,
                          std::vector<bool>* crosses) {
  const int n = static_cast<int>(g.values.size());
  std::vector<bool> owner_in_gm(n, false);
  std::vector<int> written(n, -1);  // owner -> the op writing into it
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (IsAssemble(g.ops[i])) written[layout.Owner(g.ops[i].outputs[0])] = static_cast<int>(i);
  }
  for (int v = 0; v < n; ++v) {
    const int o = layout.Owner(v);
    if (o == v) continue;
    owner_in_gm[o] = true;
    const int b = (*buffer_of_value)[v], ob = (*buffer_of_value)[o];
    if (b >= 0 && ob >= 0 && b != ob) {
      return absl::UnimplementedError(absl::StrCat(
          "op #", written[o], " \"assemble\": writes into param ",
          Quote(buffers[ob].name), "'s data as the result for param ",
          Quote(buffers[b].name), "; assemble into a clone of it"));
    }
    if (b >= 0) (*buffer_of_value)[o] = b;
  }
  for (int v = 0; v < n; ++v) {
    const int o = layout.Owner(v);
    if (!owner_in_gm[o]) continue;
    (*crosses)[v] = true;
    const int b = (*buffer_of_value)[o];
    if (b >= 0 && buffers[b].role == pto::v1::PARAM_ROLE_IN) {
      return absl::UnimplementedError(absl::StrCat(
          "op #", written[o], " \"assemble\": its dst is param ",
          Quote(buffers[b].name), " (in), whose data a kernel does not "
          "overwrite; assemble into a clone of it"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PlaceInGm(TilingState* s) {
  const TensorGraph& g = s->graph();
  // Which group defines each value (-1: a parameter's incoming data, or a
  // dead op's result).
  const int num_values = static_cast<int>(g.values.size());
  std::vector<int> group_of_op(g.ops.size(), -1);  // -1: dead
  std::vector<int> def_group(num_values, -1);
  for (size_t k = 0; k < s->groups.size(); ++k) {
    for (int i : s->groups[k]) {
      group_of_op[i] = static_cast<int>(k);
      for (int v : g.ops[i].outputs) def_group[v] = static_cast<int>(k);
    }
  }

  // A value lives in GM when it is bound to a parameter or crosses groups.
  TileGraph& out = s->out;
  out.name = g.name;
  std::vector<int> buffer_of_value(num_values, -1);
  for (size_t p = 0; p < g.params.size(); ++p) {
    const TensorParam& param = g.params[p];
    const int any = param.in_value >= 0 ? param.in_value : param.out_value;
    GmBuffer buf;
    buf.param = static_cast<int>(p);
    buf.role = param.role;
    buf.dtype = g.values[any].dtype;
    buf.shape = g.values[any].shape;
    buf.name = param.name;
    out.buffers.push_back(std::move(buf));
    if (param.in_value >= 0) buffer_of_value[param.in_value] = static_cast<int>(p);
    if (param.out_value >= 0) buffer_of_value[param.out_value] = static_cast<int>(p);
  }
  std::vector<bool> crosses(num_values, false);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (group_of_op[i] < 0) continue;
    if (IsConcat(g.ops[i])) {  // the inputs it copies are read from GM
      for (size_t k = 0; k < g.ops[i].inputs.size(); ++k) {
        if (!s->concat_fused[i][k]) crosses[s->layout->Root(g.ops[i].inputs[k])] = true;
      }
      crosses[g.ops[i].outputs[0]] = true;
      continue;
    }
    for (int v : g.ops[i].inputs) {
      if (def_group[v] != group_of_op[i]) crosses[s->layout->Root(v)] = true;
    }
    if (IsIndexOp(g.ops[i]) || IsScanOp(g.ops[i])) {  // it addresses its result in GM
      for (int v : g.ops[i].outputs) crosses[v] = true;
    }
    for (int v : s->layout->GmReads(g, static_cast<int>(i))) crosses[v] = true;
    for (int v : g.ops[i].outputs) crosses[v] = crosses[v] || s->layout->GmOnly(v);
  }
  // An assemble's result shares its dst's buffer: one buffer per owner,
  // a parameter's when one of them is bound to one.
  if (absl::Status st = ShareBuffers(g, *s->layout, out.buffers, &buffer_of_value,
                                     &crosses);
      !st.ok()) {
    return st;
  }
  std::vector<int>& gm_of_value = s->gm_of_value;
  gm_of_value.assign(num_values, -1);
  for (int v = 0; v < num_values; ++v) {
    if (s->layout->IsAlias(v)) continue;
    const int owner = s->layout->Owner(v);
    if (buffer_of_value[v] < 0 && owner != v && buffer_of_value[owner] >= 0) {
      buffer_of_value[v] = buffer_of_value[owner];
    }
    if (buffer_of_value[v] < 0 && crosses[v]) {
      GmBuffer buf;
      buf.dtype = g.values[v].dtype;
      buf.shape = g.values[v].shape;
      buffer_of_value[v] = static_cast<int>(out.buffers.size());
      out.buffers.push_back(std::move(buf));
      if (buffer_of_value[owner] < 0) buffer_of_value[owner] = buffer_of_value[v];
    }
    if (buffer_of_value[v] >= 0) {
      gm_of_value[v] = static_cast<int>(out.gm.size());
      out.gm.push_back({v, buffer_of_value[v]});
    }
  }
  return absl::OkStatus();
}

}  // namespace pto::compiler
