#include "compiler/lower/lower_regions.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace pto::compiler {

ExpandOptions TemplateOptions(const FlatGraph& flat, bool fuse, const MemoryModel& memory) {
  ExpandOptions options;
  options.fuse = fuse;
  options.memory = memory;
  options.fusion_class = flat.fusion_class;
  // Rows over a symbolic last dim as row groups when they fit (an if on
  // the row lengths at launch, BuildProgram); graphs with loops keep the
  // accumulating form.
  options.symbolic_rows = flat.loops.empty();
  // Dims whose extents depend on loop indices: a reduction over one takes
  // the accumulating form (its tiles along the dim fold into one slot, the
  // tail through the generic function), never partial + combine over
  // slots that a short iteration would leave unwritten.
  options.symbolic.assign(flat.graph.values.size(), {});
  options.extent_class.assign(flat.graph.values.size(), 0);
  std::map<std::string, int> classes;
  for (const auto& [v, shape] : flat.runtime_shape) {
    std::string key;
    for (const SymExpr& d : shape) {
      options.symbolic[v].push_back(!d.IsConstant());
      absl::StrAppend(&key, d.ToString(), ";");
    }
    options.extent_class[v] =
        classes.emplace(key, static_cast<int>(classes.size()) + 1).first->second;
  }
  return options;
}

}  // namespace pto::compiler
