#include "compiler/ir/execute_graph.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/cond_expr.h"
#include "compiler/ir/sym_expr.h"
#include "compiler/util/strings.h"

namespace pto::compiler {
namespace {

std::string DimsText(const google::protobuf::RepeatedPtrField<pto::v1::Dim>& dims) {
  std::vector<std::string> out;
  for (const pto::v1::Dim& d : dims) {
    absl::StatusOr<SymExpr> e = SymExprFromDim(d);
    out.push_back(e.ok() ? e->ToString() : "?");
  }
  return absl::StrCat("[", absl::StrJoin(out, ","), "]");
}

std::string ExprText(const pto::v1::DimExpr& e) {
  // As a condition (n<=2048, not (n<=2048)); an integer expression prints the
  // same either way.
  absl::StatusOr<CondExpr> c = CondExprFromProto(e);
  if (c.ok()) return c->ToString();
  absl::StatusOr<SymExpr> x = SymExprFromProto(e);
  return x.ok() ? x->ToString() : "?";
}

void PrintProgram(const google::protobuf::RepeatedPtrField<pto::v1::ExecNode>& nodes,
                  int indent, std::string* out) {
  const std::string pad(indent, ' ');
  for (const pto::v1::ExecNode& n : nodes) {
    switch (n.kind_case()) {
      case pto::v1::ExecNode::kTemplateIndex:
        absl::StrAppend(out, pad, "template #", n.template_index(), "\n");
        break;
      case pto::v1::ExecNode::kLoop:
        absl::StrAppend(out, pad, "loop ", SanitizeIdentifier(n.loop().index()), " = ",
                        ExprText(n.loop().start()), " .. ", ExprText(n.loop().stop()),
                        " step ", n.loop().step(), "\n");
        PrintProgram(n.loop().body(), indent + 2, out);
        break;
      case pto::v1::ExecNode::kIfNode:
        absl::StrAppend(out, pad, "if ", ExprText(n.if_node().cond()), "\n");
        PrintProgram(n.if_node().then_body(), indent + 2, out);
        absl::StrAppend(out, pad, "else\n");
        PrintProgram(n.if_node().else_body(), indent + 2, out);
        break;
      case pto::v1::ExecNode::kCheck: {
        std::vector<std::string> offsets;
        for (const pto::v1::DimExpr& e : n.check().offsets()) offsets.push_back(ExprText(e));
        absl::StrAppend(out, pad, "check ", n.check().label(), " offsets=[",
                        absl::StrJoin(offsets, ","), "] extent=",
                        DimsText(n.check().extent()), " in ",
                        DimsText(n.check().bound()), "\n");
        break;
      }
      default:
        absl::StrAppend(out, pad, "?\n");
    }
  }
}

}  // namespace

std::string PrintExecuteGraph(const pto::v1::ExecuteGraph& g, int max_tasks) {
  std::string out = "execute_graph\n";
  for (int b = 0; b < g.buffers_size(); ++b) {
    const pto::v1::BufferDesc& buf = g.buffers(b);
    std::string shape;
    if (buf.shape().dims_size() > 0) {  // templated graphs
      absl::StrAppend(&shape, " shape=", DimsText(buf.shape().dims()));
    }
    if (buf.workspace_bytes() > 0 || (!shape.empty() && buf.name().rfind("ws", 0) == 0)) {
      absl::StrAppend(&out, "  buffer #", b, " workspace ", Quote(buf.name()),
                      " bytes=", buf.workspace_bytes(), shape, "\n");
    } else {
      absl::StrAppend(&out, "  buffer #", b, " param ", Quote(buf.name()), shape,
                      "\n");
    }
  }
  for (const pto::v1::SymbolBinding& s : g.symbols()) {
    absl::StrAppend(&out, "  symbol ", SanitizeIdentifier(s.name()), " = param #",
                    s.param(), " dim ", s.dim(), "\n");
  }
  for (const pto::v1::BlockFunction& f : g.functions()) {
    absl::StrAppend(&out, "  function #", f.index(), " ",
                    SanitizeIdentifier(f.name()),
                    f.core_type() == pto::v1::CORE_TYPE_CUBE ? " cube" : " vector",
                    " args=", f.num_args(), "\n");
  }
  for (const pto::v1::TaskTemplate& t : g.templates()) {
    absl::StrAppend(&out, "  template ", Quote(t.label()),
                    " space=", DimsText(t.space()), " tile=[",
                    absl::StrJoin(t.tile(), ","), "] functions=");
    std::vector<std::string> fns;
    for (const pto::v1::ExtentFunction& f : t.functions()) {
      fns.push_back(absl::StrCat("[", absl::StrJoin(f.extent(), ","), "]:f",
                                 f.function()));
    }
    absl::StrAppend(&out, absl::StrJoin(fns, " "), " accesses=",
                    t.accesses_size());
    if (t.dynamic_args_size() > 0) {
      absl::StrAppend(&out, " dynamic_args=[", absl::StrJoin(t.dynamic_args(), ","), "]");
    }
    // Run-time GM strides: "access #0 dim 0 = d0" (TemplateAccess.stride_arg).
    std::vector<std::string> strides;
    for (int a = 0; a < t.accesses_size(); ++a) {
      const auto& sa = t.accesses(a).stride_arg();
      for (int j = 0; j < sa.size(); ++j) {
        if (sa[j] > 0) strides.push_back(absl::StrCat("#", a, ".", j, "=d", sa[j] - 1));
      }
    }
    if (!strides.empty()) absl::StrAppend(&out, " strides=[", absl::StrJoin(strides, ","), "]");
    absl::StrAppend(&out, "\n");
  }
  for (int k = 0; k < g.dynamic_offsets_size(); ++k) {
    absl::StrAppend(&out, "  dynamic offset #", k, " = ", ExprText(g.dynamic_offsets(k)), "\n");
  }
  if (g.program_size() > 0) {
    absl::StrAppend(&out, "  program\n");
    PrintProgram(g.program(), 4, &out);
  }
  for (int t = 0; t < g.tasks_size() && t < max_tasks; ++t) {
    const pto::v1::Task& task = g.tasks(t);
    absl::StrAppend(&out, "  task #", t, " f", task.function(), " args=[",
                    absl::StrJoin(task.args(), ","), "] deps=[",
                    absl::StrJoin(task.deps(), ","), "]\n");
  }
  if (g.tasks_size() > max_tasks) {
    absl::StrAppend(&out, "  ... ", g.tasks_size() - max_tasks, " more tasks\n");
  }
  return out;
}

}  // namespace pto::compiler
