#include "compiler/ir/execute_graph.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/util/strings.h"

namespace pto::compiler {

std::string PrintExecuteGraph(const pto::v1::ExecuteGraph& g, int max_tasks) {
  std::string out = "execute_graph\n";
  for (int b = 0; b < g.buffers_size(); ++b) {
    const pto::v1::BufferDesc& buf = g.buffers(b);
    if (buf.workspace_bytes() > 0) {
      absl::StrAppend(&out, "  buffer #", b, " workspace ", Quote(buf.name()),
                      " bytes=", buf.workspace_bytes(), "\n");
    } else {
      absl::StrAppend(&out, "  buffer #", b, " param ", Quote(buf.name()), "\n");
    }
  }
  for (const pto::v1::BlockFunction& f : g.functions()) {
    absl::StrAppend(&out, "  function #", f.index(), " ",
                    SanitizeIdentifier(f.name()),
                    f.core_type() == pto::v1::CORE_TYPE_CUBE ? " cube" : " vector",
                    " args=", f.num_args(), "\n");
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
