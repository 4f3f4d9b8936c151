#include "compiler/lower/build_program.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/cond_expr.h"

namespace pto::compiler {

absl::Status BuildProgram(const FlatGraph& flat, const TileGraph& tile,
                          pto::v1::ExecuteGraph* execute) {
  // Views and assembles outside loops are checked before any task.
  for (const pto::v1::RegionCheck& c : flat.top_checks) {
    *execute->add_program()->mutable_check() = c;
  }

  // Rows over symbolic last dims lowered both ways (no loops): the row
  // groups when every row is within its cap, else the accumulating form.
  if (!tile.row_caps.empty()) {
    std::map<std::string, std::pair<SymExpr, int64_t>> caps;  // per row length
    for (const RowCap& c : tile.row_caps) {
      const SymExpr& n = flat.graph.values[c.value].sym_shape.back();
      auto [it, added] = caps.emplace(n.ToString(), std::make_pair(n, c.cap));
      if (!added) it->second.second = std::min(it->second.second, c.cap);
    }
    std::optional<CondExpr> fits;
    for (const auto& [text, cap] : caps) {
      const CondExpr one = CondExpr::Compare(CondExpr::kLe, cap.first, SymExpr(cap.second));
      fits = fits ? CondExpr::Logic(CondExpr::kAnd, *fits, one) : one;
    }
    pto::v1::IfNode* node = execute->mutable_program()->Add()->mutable_if_node();
    *node->mutable_cond() = fits->ToProto();
    for (size_t g = 0; g < tile.groups.size(); ++g) {
      (tile.groups[g].branch == 1 ? node->mutable_then_body() : node->mutable_else_body())
          ->Add()
          ->set_template_index(static_cast<uint32_t>(g));
    }
    return absl::OkStatus();
  }

  // The program: templates in order, inside the loops they came from.
  std::vector<google::protobuf::RepeatedPtrField<pto::v1::ExecNode>*> open = {
      execute->mutable_program()};
  std::vector<int> path;
  // Per node list: the if whose node was added to it last.
  std::map<const void*, int> last_if;
  for (size_t g = 0; g < tile.groups.size(); ++g) {
    const std::vector<int>& nest = flat.op_nest[tile.groups[g].ops.front()];
    size_t common = 0;
    while (common < path.size() && common < nest.size() && path[common] == nest[common]) {
      ++common;
    }
    path.resize(common);
    open.resize(common + 1);
    for (size_t k = common; k < nest.size(); ++k) {
      const LoopInfo& info = flat.loops[nest[k]];
      google::protobuf::RepeatedPtrField<pto::v1::ExecNode>* body = nullptr;
      if (info.kind == LoopInfo::kLoop) {
        pto::v1::LoopNode* loop = open.back()->Add()->mutable_loop();
        loop->set_index(info.index);
        *loop->mutable_start() = info.start.ToProto();
        *loop->mutable_stop() = info.stop.ToProto();
        loop->set_step(info.step);
        body = loop->mutable_body();
      } else {
        // The else branch joins its if's node when that is the last node
        // here (the then branch had tasks); otherwise a node of its own.
        pto::v1::IfNode* node = nullptr;
        if (info.kind == LoopInfo::kElse && !open.back()->empty() &&
            open.back()->rbegin()->has_if_node() &&
            last_if[open.back()] == info.if_id) {
          node = open.back()->rbegin()->mutable_if_node();
        } else {
          node = open.back()->Add()->mutable_if_node();
          *node->mutable_cond() = info.cond;
          last_if[open.back()] = info.if_id;
        }
        body = info.kind == LoopInfo::kThen ? node->mutable_then_body()
                                            : node->mutable_else_body();
      }
      for (const pto::v1::RegionCheck& c : info.checks) *body->Add()->mutable_check() = c;
      path.push_back(nest[k]);
      open.push_back(body);
    }
    open.back()->Add()->set_template_index(static_cast<uint32_t>(g));
  }
  return absl::OkStatus();
}

}  // namespace pto::compiler
