#include "runtime/template_plans.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/expand_regions.h"
#include "runtime/expand_tasks.h"
#include "runtime/workspace_instances.h"

namespace pto::runtime {
namespace {

constexpr int kMaxRank = 8;
constexpr int64_t kMaxTasks = int64_t{1} << 24;
constexpr int64_t kMaxDependencies = int64_t{1} << 26;
constexpr int64_t kMaxWorkspaceBytes = int64_t{1} << 40;

std::string ArgLabel(const pto::v1::KernelBinary& b, int p) {
  return absl::StrFormat("argument %d '%s'", p, b.params(p).name());
}

std::string ParamShape(const pto::v1::Shape& shape) {
  std::vector<std::string> dims;
  for (const pto::v1::Dim& d : shape.dims()) dims.push_back(DimToString(d));
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

std::string Dims(absl::Span<const int64_t> d) {
  return absl::StrCat("[", absl::StrJoin(d, ","), "]");
}

absl::StatusOr<std::vector<int64_t>> EvalShape(
    const google::protobuf::RepeatedPtrField<pto::v1::Dim>& dims,
    const SymbolValues& values, const std::string& where) {
  std::vector<int64_t> out;
  for (const pto::v1::Dim& d : dims) {
    absl::StatusOr<int64_t> v = EvaluateDim(d, values);
    if (!v.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", v.status().message()));
    }
    if (*v <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": dim ", DimToString(d), " is ", *v, " (must be positive)"));
    }
    out.push_back(*v);
  }
  return out;
}

google::protobuf::ArenaOptions ExpansionArenaOptions() {
  google::protobuf::ArenaOptions options;
  // Blocks of up to 1 MiB: a big expansion is tens of MiB of small messages.
  options.start_block_size = 64 << 10;
  options.max_block_size = 1 << 20;
  return options;
}

// An access's stride args (TemplateAccess.stride_arg) name dynamic args of
// its template, and every dim whose GM stride depends on symbols (a later
// dim of the buffer, or of the view shape of a load through a reshape, is
// not a constant) has one: block code cannot hold such a stride as a
// constant, and only a declared one is checked at launch
// (CheckAccessBounds). A view shape is only for an access that reads the
// whole buffer (every dim whole, not K): its dims are not the buffer's.
absl::Status VerifyStrideArgs(const pto::v1::ExecuteGraph& graph,
                              const pto::v1::TaskTemplate& t,
                              const pto::v1::TemplateAccess& a,
                              const std::string& where) {
  const pto::v1::Shape& buffer = graph.buffers(static_cast<int>(a.buffer())).shape();
  const bool view = a.view_shape_size() > 0;
  const auto& dims = view ? a.view_shape() : buffer.dims();
  const std::string access = absl::StrCat(
      "kernel binary refused: execute graph: ", where, ": an access to buffer ", a.buffer(),
      view ? absl::StrCat(" of shape ", ParamShape(buffer), " read as a view") : "");
  bool whole = !a.reads_k();
  for (const pto::v1::AccessIndex& x : a.index()) {
    whole = whole && x.space_dim() == kExpandWholeDim;
  }
  if (view && !whole) {
    return absl::InvalidArgumentError(absl::StrCat(
        access, " has a view shape but does not read the whole buffer"));
  }
  if (a.stride_arg_size() != 0 && a.stride_arg_size() != dims.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        access, " names stride args for ", a.stride_arg_size(), " of its ", dims.size(),
        view ? " view dims" : " dims"));
  }
  bool symbolic_after = false;  // a dim after j is not a constant
  for (int j = dims.size() - 1; j >= 0; --j) {
    const uint32_t k = a.stride_arg_size() > 0 ? a.stride_arg(j) : 0;
    if (k > static_cast<uint32_t>(t.dynamic_args_size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          access, " takes the stride of ", view ? "view " : "", "dim ", j,
          " from dynamic arg ", k - 1, " of ", t.dynamic_args_size()));
    }
    if (symbolic_after && k == 0) {
      std::string shape = ParamShape(buffer);
      if (view) {
        pto::v1::Shape v;
        *v.mutable_dims() = dims;
        shape = ParamShape(v);
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "kernel binary refused: execute graph: ", where, ": an access to buffer ",
          a.buffer(), view ? " read as " : " of shape ", shape,
          " names no dynamic arg for the stride of dim ", j, ", which depends on symbols"));
    }
    symbolic_after = symbolic_after || dims[j].kind_case() != pto::v1::Dim::kSize;
  }
  return absl::OkStatus();
}

}  // namespace

ExpandedGraph::ExpandedGraph()
    : arena(std::make_unique<google::protobuf::Arena>(ExpansionArenaOptions())),
      graph(*google::protobuf::Arena::CreateMessage<pto::v1::ExecuteGraph>(
          arena.get())) {}

bool IsTemplated(const pto::v1::ExecuteGraph& graph) {
  return graph.templates_size() > 0 || graph.symbols_size() > 0 ||
         graph.program_size() > 0;
}

absl::StatusOr<SymbolValues> BindArguments(const pto::v1::KernelBinary& binary,
                                           absl::Span<const TensorArg> args) {
  struct Source {
    int param;
    int dim;
  };
  std::map<std::string, Source> bound_by;
  SymbolValues values;
  for (int p = 0; p < binary.params_size(); ++p) {
    const pto::v1::Shape& shape = binary.params(p).shape();
    const TensorArg& arg = args[p];
    if (static_cast<int>(arg.shape.size()) != shape.dims_size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: expected shape %s (rank %d), got %s", ArgLabel(binary, p),
          ParamShape(shape), shape.dims_size(), Dims(arg.shape)));
    }
    for (int d = 0; d < shape.dims_size(); ++d) {
      const pto::v1::Dim& dim = shape.dims(d);
      if (dim.kind_case() != pto::v1::Dim::kSymbol) continue;
      const int64_t actual = arg.shape[d];
      auto it = bound_by.find(dim.symbol());
      if (it == bound_by.end()) {
        if (actual <= 0) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "%s: dim %d (symbol %s) is %d; sizes must be positive (empty tensors are not "
              "supported)",
              ArgLabel(binary, p), d, dim.symbol(), actual));
        }
        bound_by[dim.symbol()] = {p, d};
        values[dim.symbol()] = actual;
      } else if (values[dim.symbol()] != actual) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: dim %d is %d, but symbol %s is %d from %s dim %d",
            ArgLabel(binary, p), d, actual, dim.symbol(), values[dim.symbol()],
            ArgLabel(binary, it->second.param), it->second.dim));
      }
    }
  }
  for (int p = 0; p < binary.params_size(); ++p) {
    const pto::v1::Shape& shape = binary.params(p).shape();
    for (int d = 0; d < shape.dims_size(); ++d) {
      const pto::v1::Dim& dim = shape.dims(d);
      if (dim.kind_case() == pto::v1::Dim::kSymbol) continue;
      absl::StatusOr<int64_t> want = EvaluateDim(dim, values);
      if (!want.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            ArgLabel(binary, p), ": dim ", d, ": ", want.status().message()));
      }
      if (*want != args[p].shape[d]) {
        std::vector<int64_t> expected;
        for (const pto::v1::Dim& x : shape.dims()) {
          expected.push_back(EvaluateDim(x, values).value_or(-1));
        }
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: expected shape %s = %s, got %s", ArgLabel(binary, p),
            ParamShape(shape), Dims(expected), Dims(args[p].shape)));
      }
    }
  }
  return values;
}

absl::StatusOr<ExpandedGraph> ExpandTemplates(const pto::v1::KernelBinary& binary,
                                              const SymbolValues& values,
                                              int workspace_instances) {
  const pto::v1::ExecuteGraph& graph = binary.execute_graph();
  ExpandedGraph out;
  *out.graph.mutable_functions() = graph.functions();
  std::vector<std::vector<int64_t>> shapes;
  for (int b = 0; b < graph.buffers_size(); ++b) {
    const pto::v1::BufferDesc& buf = graph.buffers(b);
    absl::StatusOr<std::vector<int64_t>> shape = EvalShape(
        buf.shape().dims(), values, absl::StrCat("buffer ", b, " '", buf.name(), "'"));
    if (!shape.ok()) return shape.status();
    int64_t bytes = 0;
    if (b >= binary.params_size()) {
      bytes = buf.workspace_bytes() > 0 ? buf.workspace_bytes() : buf.element_bytes();
      if (buf.workspace_bytes() == 0) {
        for (int64_t d : *shape) {
          if (__builtin_mul_overflow(bytes, d, &bytes) || bytes > kMaxWorkspaceBytes) {
            return absl::InvalidArgumentError(absl::StrCat(
                "workspace '", buf.name(), "' of shape ", Dims(*shape),
                " exceeds ", kMaxWorkspaceBytes, " bytes"));
          }
        }
      }
    }
    out.buffer_bytes.push_back(bytes);
    shapes.push_back(*std::move(shape));
  }
  std::vector<ExpandGroup> groups;
  std::vector<std::vector<LoopVisit>> loops;
  if (graph.program_size() > 0) {  // loops and branches (expand_regions.h)
    if (absl::Status s = ExpandProgram(graph, values, &groups, &loops); !s.ok()) {
      return s;
    }
  } else {
    for (const pto::v1::TaskTemplate& t : graph.templates()) {
      absl::StatusOr<ExpandGroup> g = TemplateGroup(graph, t, values);
      if (!g.ok()) return g.status();
      groups.push_back(*std::move(g));
    }
  }
  for (const ExpandGroup& g : groups) {
    if (absl::Status s = CheckAccessBounds(g, shapes); !s.ok()) return s;
  }
  // Loop-body workspaces: one instance per iteration modulo K, so that
  // independent iterations do not wait for each other through them.
  WorkspaceInstances instances;
  if (!loops.empty()) {
    instances = PrivatizeWorkspaces(
        loops, binary.params_size(), out.buffer_bytes, shapes,
        workspace_instances > 0 ? workspace_instances : DefaultWorkspaceInstances(),
        &groups);
    for (int b : instances.copy_of) {
      out.buffer_bytes.push_back(out.buffer_bytes[b]);
      shapes.push_back(shapes[b]);
    }
  }
  ExpandLimits limits;
  limits.max_tasks = kMaxTasks;
  limits.max_dependencies = kMaxDependencies;
  // Loops: iteration k's writes make earlier ones redundant to depend on.
  limits.prune_covered = graph.program_size() > 0;
  if (absl::Status s = ExpandTasks(shapes, groups, {}, limits, &out.graph); !s.ok()) {
    return s;
  }
  if (!instances.buffer_sets.empty()) {
    out.buffer_sets = std::move(instances.buffer_sets);
    out.task_buffer_set.reserve(out.graph.tasks_size());
    for (size_t g = 0; g < groups.size(); ++g) {
      int64_t tiles = 1;
      for (int64_t n : ExpandGrid(groups[g].space, groups[g].tile)) tiles *= n;
      out.task_buffer_set.insert(out.task_buffer_set.end(), tiles,
                                 instances.group_set[g]);
    }
    if (out.task_buffer_set.size() != static_cast<size_t>(out.graph.tasks_size())) {
      return absl::InternalError("expanded tasks do not match their groups' tiles");
    }
  }
  return out;
}

absl::Status VerifyTemplates(const pto::v1::KernelBinary& binary) {
  const pto::v1::ExecuteGraph& graph = binary.execute_graph();
  const auto bad = [](const std::string& what) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel binary refused: execute graph: ", what));
  };
  if (graph.tasks_size() > 0) {
    return bad("a templated graph (symbols or templates) lists tasks too");
  }
  for (int i = 0; i < graph.symbols_size(); ++i) {
    const pto::v1::SymbolBinding& s = graph.symbols(i);
    if (s.param() >= static_cast<uint32_t>(binary.params_size()) ||
        s.dim() >= static_cast<uint32_t>(binary.params(s.param()).shape().dims_size()) ||
        binary.params(s.param()).shape().dims(s.dim()).symbol() != s.name()) {
      return bad(absl::StrFormat("symbol %d '%s': param %d dim %d is not that "
                                 "symbol", i, s.name(), s.param(), s.dim()));
    }
  }
  for (int b = 0; b < graph.buffers_size(); ++b) {
    if (graph.buffers(b).shape().dims_size() > kMaxRank) {
      return bad(absl::StrFormat("buffer %d: rank above %d", b, kMaxRank));
    }
  }
  for (int i = 0; i < graph.templates_size(); ++i) {
    const pto::v1::TaskTemplate& t = graph.templates(i);
    const int rank = t.tile_size();
    const std::string where = absl::StrFormat("template %d '%s'", i, t.label());
    if (rank < 1 || rank > 4 || t.space_size() != rank) {
      return bad(absl::StrCat(where, ": space and tile must have one rank in 1..4"));
    }
    for (int64_t x : t.tile()) {
      if (x <= 0) return bad(absl::StrCat(where, ": tile dims must be positive"));
    }
    if (t.serial_dim() > static_cast<uint32_t>(rank)) {
      return bad(absl::StrCat(where, ": serial_dim out of range"));
    }
    if (t.cube_k() < 0 || t.cube_k_arg() > static_cast<uint32_t>(t.dynamic_args_size())) {
      return bad(absl::StrCat(where, ": cube_k ", t.cube_k(), " or cube_k_arg ",
                              t.cube_k_arg(), " out of range"));
    }
    for (const pto::v1::ExtentFunction& f : t.functions()) {
      // A generic entry (extents all 0) reads the extents from the args.
      const bool generic = std::all_of(f.extent().begin(), f.extent().end(),
                                       [](int64_t e) { return e == 0; });
      if (generic && !t.extents_in_args()) {
        return bad(absl::StrCat(where, ": a generic function entry (extents 0) "
                                       "but the tasks get no extents"));
      }
      if (f.function() >= static_cast<uint32_t>(graph.functions_size()) ||
          f.extent_size() != rank ||
          graph.functions(f.function()).num_args() !=
              static_cast<uint32_t>(rank + t.dynamic_args_size() +
                                    (t.extents_in_args() ? rank : 0))) {
        return bad(absl::StrCat(where, ": a function entry does not match the "
                                       "functions or the rank"));
      }
    }
    for (const pto::v1::TemplateAccess& a : t.accesses()) {
      if (a.buffer() >= static_cast<uint32_t>(graph.buffers_size()) ||
          a.index_size() != graph.buffers(a.buffer()).shape().dims_size()) {
        return bad(absl::StrCat(where, ": an access names a buffer out of range "
                                       "or indexes the wrong rank"));
      }
      for (const pto::v1::AccessIndex& x : a.index()) {
        // -1: a fixed index; kExpandWholeDim: a dim read whole (matmul's K).
        if ((x.space_dim() < -1 && x.space_dim() != kExpandWholeDim) ||
            x.space_dim() >= rank || x.div() < 1) {
          return bad(absl::StrCat(where, ": an access index is out of range"));
        }
      }
      if (absl::Status s = VerifyStrideArgs(graph, t, a, where); !s.ok()) return s;
    }
  }
  if (graph.program_size() > 0 || graph.dynamic_offsets_size() > 0) {
    return VerifyProgram(graph);
  }
  for (const pto::v1::TaskTemplate& t : graph.templates()) {
    if (t.dynamic_args_size() > 0) {
      return bad("a template has dynamic args but the graph has no program");
    }
  }
  return absl::OkStatus();
}

}  // namespace pto::runtime
