#include "runtime/expand_regions.h"

#include <algorithm>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pto::runtime {
namespace {

constexpr int64_t kMaxIterations = int64_t{1} << 24;
constexpr int kMaxNesting = 16;
constexpr int kMaxNodes = 1 << 16;
constexpr int kMaxRank = 8;

std::string Dims(const std::vector<int64_t>& d) {
  return absl::StrCat("[", absl::StrJoin(d, ","), "]");
}

// "i=3, bs=7": the values in scope, for errors.
std::string Bindings(const SymbolValues& values) {
  std::vector<std::string> parts;
  for (const auto& [name, v] : values) parts.push_back(absl::StrCat(name, "=", v));
  return absl::StrJoin(parts, ", ");
}

absl::StatusOr<int64_t> Eval(const pto::v1::DimExpr& e, const SymbolValues& values,
                             const std::string& where) {
  absl::StatusOr<int64_t> v = EvaluateDimExpr(e, values);
  if (!v.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", v.status().message()));
  }
  return v;
}

class Expander {
 public:
  Expander(const pto::v1::ExecuteGraph& graph, SymbolValues values,
           std::vector<ExpandGroup>* groups,
           std::vector<std::vector<LoopVisit>>* loops)
      : graph_(graph), values_(std::move(values)), groups_(groups), loops_(loops) {}

  absl::Status Walk(const google::protobuf::RepeatedPtrField<pto::v1::ExecNode>& nodes) {
    for (const pto::v1::ExecNode& node : nodes) {
      absl::Status s = Node(node);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Node(const pto::v1::ExecNode& node) {
    switch (node.kind_case()) {
      case pto::v1::ExecNode::kTemplateIndex: {
        absl::StatusOr<ExpandGroup> g = Instance(static_cast<int>(node.template_index()));
        if (!g.ok()) return g.status();
        groups_->push_back(*std::move(g));
        if (loops_ != nullptr) loops_->push_back(path_);
        return absl::OkStatus();
      }
      case pto::v1::ExecNode::kLoop: return Loop(node.loop());
      case pto::v1::ExecNode::kIfNode: {
        absl::StatusOr<int64_t> c = Eval(node.if_node().cond(), values_, "if");
        if (!c.ok()) return c.status();
        return Walk(*c != 0 ? node.if_node().then_body() : node.if_node().else_body());
      }
      case pto::v1::ExecNode::kCheck: return Check(node.check());
      default: return absl::InvalidArgumentError("program node is not set");
    }
  }

  // Template `index` at the current values. A template met again (the next
  // iteration of its loop) whose space evaluates the same reuses the group
  // built the first time (function per tail mask, accesses, checked once)
  // and rebinds only what depends on the values: its dynamic args and the
  // access offsets they shift (BindDynamicArgs, the same checks).
  absl::StatusOr<ExpandGroup> Instance(int index) {
    const pto::v1::TaskTemplate& t = graph_.templates(index);
    if (static_cast<size_t>(index) >= built_.size()) built_.resize(index + 1);
    std::unique_ptr<ExpandGroup>& cached = built_[index];
    if (cached != nullptr) {
      bool same = true;
      for (int d = 0; d < t.space_size() && same; ++d) {
        absl::StatusOr<int64_t> v = EvaluateDim(t.space(d), values_);
        same = v.ok() && *v == cached->space[d];
      }
      if (same) {
        ExpandGroup g = *cached;
        if (absl::Status s = BindDynamicArgs(graph_, t, values_, &g); !s.ok()) return s;
        return g;
      }
    }
    absl::StatusOr<ExpandGroup> g = TemplateGroup(graph_, t, values_);
    if (g.ok()) cached = std::make_unique<ExpandGroup>(*g);
    return g;
  }

  absl::Status Loop(const pto::v1::LoopNode& loop) {
    const std::string where = absl::StrCat("loop ", loop.index());
    absl::StatusOr<int64_t> start = Eval(loop.start(), values_, where + " start");
    if (!start.ok()) return start.status();
    absl::StatusOr<int64_t> stop = Eval(loop.stop(), values_, where + " stop");
    if (!stop.ok()) return stop.status();
    const int64_t step = loop.step();
    for (int64_t i = *start; step > 0 ? i < *stop : i > *stop;) {
      if (++iterations_ > kMaxIterations) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": the loops run more than ", kMaxIterations,
            " iterations in total (", Bindings(values_), ")"));
      }
      values_[loop.index()] = i;
      path_.push_back({&loop, visits_[&loop]++});
      absl::Status s = Walk(loop.body());
      path_.pop_back();
      if (!s.ok()) return s;
      if (__builtin_add_overflow(i, step, &i)) break;
    }
    values_.erase(loop.index());
    return absl::OkStatus();
  }

  // The region [offsets, offsets + extent) must lie in [0, bound).
  absl::Status Check(const pto::v1::RegionCheck& c) {
    std::vector<int64_t> offsets, extent, bound;
    for (const pto::v1::DimExpr& e : c.offsets()) {
      absl::StatusOr<int64_t> v = Eval(e, values_, c.label());
      if (!v.ok()) return v.status();
      offsets.push_back(*v);
    }
    for (const pto::v1::Dim& d : c.extent()) {
      absl::StatusOr<int64_t> v = EvaluateDim(d, values_);
      if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat(c.label(), ": ", v.status().message()));
      extent.push_back(*v);
    }
    for (const pto::v1::Dim& d : c.bound()) {
      absl::StatusOr<int64_t> v = EvaluateDim(d, values_);
      if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat(c.label(), ": ", v.status().message()));
      bound.push_back(*v);
    }
    for (size_t d = 0; d < bound.size(); ++d) {
      if (d < extent.size() && extent[d] <= 0) {
        // (x[:, :n//2] at n = 1: tensors here have at least one element
        // per dim.)
        return absl::InvalidArgumentError(absl::StrCat(
            c.label(), ": the region at offsets ", Dims(offsets), " of extent ",
            Dims(extent), " is empty in dim ", d, " at ", Bindings(values_),
            " (empty tensors are not supported: a view or assemble needs at least one "
            "element in each dim)"));
      }
      if (offsets[d] < 0 || offsets[d] > bound[d] - extent[d]) {
        return absl::InvalidArgumentError(absl::StrCat(
            c.label(), ": the region at offsets ", Dims(offsets), " of extent ",
            Dims(extent), " leaves its tensor of shape ", Dims(bound), " in dim ",
            d, " ([", offsets[d], ", ", offsets[d] + extent[d], ") is not inside [0, ",
            bound[d], ")) at ", Bindings(values_)));
      }
    }
    return absl::OkStatus();
  }

  const pto::v1::ExecuteGraph& graph_;
  SymbolValues values_;
  std::vector<ExpandGroup>* groups_;
  std::vector<std::unique_ptr<ExpandGroup>> built_;  // per template (Instance)
  std::vector<std::vector<LoopVisit>>* loops_;
  std::vector<LoopVisit> path_;  // the loops around the node being walked
  absl::flat_hash_map<const void*, int64_t> visits_;  // iterations per loop
  int64_t iterations_ = 0;
};

absl::Status Bad(const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat("kernel binary refused: execute graph: program: ", what));
}

absl::Status VerifyNodes(const pto::v1::ExecuteGraph& graph,
                         const google::protobuf::RepeatedPtrField<pto::v1::ExecNode>& nodes,
                         int depth, int* count) {
  if (depth > kMaxNesting) return Bad(absl::StrCat("nested deeper than ", kMaxNesting));
  for (const pto::v1::ExecNode& n : nodes) {
    if (++*count > kMaxNodes) return Bad(absl::StrCat("more than ", kMaxNodes, " nodes"));
    switch (n.kind_case()) {
      case pto::v1::ExecNode::kTemplateIndex:
        if (n.template_index() >= static_cast<uint32_t>(graph.templates_size())) {
          return Bad(absl::StrCat("template index ", n.template_index(), " out of range"));
        }
        break;
      case pto::v1::ExecNode::kLoop: {
        const pto::v1::LoopNode& l = n.loop();
        if (l.index().empty() || l.index().size() > 64 || l.step() == 0) {
          return Bad("a loop has an empty or overlong index, or step 0");
        }
        absl::Status s = VerifyNodes(graph, l.body(), depth + 1, count);
        if (!s.ok()) return s;
        break;
      }
      case pto::v1::ExecNode::kIfNode: {
        absl::Status s = VerifyNodes(graph, n.if_node().then_body(), depth + 1, count);
        if (s.ok()) s = VerifyNodes(graph, n.if_node().else_body(), depth + 1, count);
        if (!s.ok()) return s;
        break;
      }
      case pto::v1::ExecNode::kCheck: {
        const pto::v1::RegionCheck& c = n.check();
        if (c.offsets_size() != c.bound_size() || c.extent_size() != c.bound_size() ||
            c.bound_size() > kMaxRank) {
          return Bad(absl::StrCat("region check '", c.label(), "' has mismatched ranks"));
        }
        break;
      }
      default: return Bad("a node is not set");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ExpandGroup> TemplateGroup(const pto::v1::ExecuteGraph& graph,
                                          const pto::v1::TaskTemplate& t,
                                          const SymbolValues& values) {
  ExpandGroup g;
  g.label = t.label();
  for (const pto::v1::Dim& d : t.space()) {
    absl::StatusOr<int64_t> v = EvaluateDim(d, values);
    if (!v.ok() || *v <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "template ", t.label(), " space: dim ", DimToString(d),
          v.ok() ? absl::StrCat(" is ", *v, " at ", Bindings(values),
                                " (must be positive: empty tensors are not supported)")
                 : absl::StrCat(": ", v.status().message())));
    }
    g.space.push_back(*v);
  }
  g.tile.assign(t.tile().begin(), t.tile().end());
  const int rank = static_cast<int>(g.space.size());
  g.function_of_mask.assign(size_t{1} << rank, -1);
  for (int mask = 0; mask < (1 << rank); ++mask) {
    std::vector<int64_t> extent = g.tile;
    bool occurs = true;
    for (int d = 0; d < rank; ++d) {
      if ((mask & (1 << d)) == 0) continue;
      const int64_t tail = g.space[d] % g.tile[d];
      if (tail == 0) occurs = false;
      extent[d] = tail;
    }
    if (!occurs) continue;
    for (const pto::v1::ExtentFunction& f : t.functions()) {
      if (std::equal(f.extent().begin(), f.extent().end(), extent.begin(),
                     extent.end())) {
        g.function_of_mask[mask] = static_cast<int>(f.function());
      }
    }
    // Else the generic function (extents all 0), which reads them from args.
    for (const pto::v1::ExtentFunction& f : t.functions()) {
      if (g.function_of_mask[mask] >= 0) break;
      if (std::all_of(f.extent().begin(), f.extent().end(),
                      [](int64_t e) { return e == 0; })) {
        g.function_of_mask[mask] = static_cast<int>(f.function());
      }
    }
    if (g.function_of_mask[mask] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "template ", t.label(), ": no block function for tile extents ",
          Dims(extent), " (space ", Dims(g.space), ", tile ", Dims(g.tile), ")"));
    }
  }
  g.append_extents = t.extents_in_args();
  if (t.serial_dim() > static_cast<uint32_t>(rank)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "template ", t.label(), ": serial dim ", t.serial_dim() - 1, " out of range"));
  }
  g.serial_dim = static_cast<int>(t.serial_dim()) - 1;
  g.serial_all = t.serial_all();
  for (const pto::v1::TemplateAccess& a : t.accesses()) {
    ExpandAccess access;
    access.buffer = static_cast<int>(a.buffer());
    access.write = a.write();
    access.reads_k = a.reads_k();
    access.stride_arg.assign(a.stride_arg().begin(), a.stride_arg().end());
    for (const pto::v1::Dim& d : a.view_shape()) {
      absl::StatusOr<int64_t> v = EvaluateDim(d, values);
      if (!v.ok() || *v <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "template ", t.label(), ": an access's view shape: dim ", DimToString(d),
            v.ok() ? absl::StrCat(" is ", *v, " (must be positive)")
                   : absl::StrCat(": ", v.status().message())));
      }
      access.view_shape.push_back(*v);
    }
    for (const pto::v1::AccessIndex& x : a.index()) {
      access.index.push_back({x.space_dim(), x.div(), x.offset()});
    }
    g.accesses.push_back(std::move(access));
  }
  if (absl::Status s = BindDynamicArgs(graph, t, values, &g); !s.ok()) return s;
  return g;
}

absl::Status BindDynamicArgs(const pto::v1::ExecuteGraph& graph,
                             const pto::v1::TaskTemplate& t,
                             const SymbolValues& values, ExpandGroup* group) {
  ExpandGroup& g = *group;
  g.extra_args.clear();
  for (uint32_t k : t.dynamic_args()) {
    if (k >= static_cast<uint32_t>(graph.dynamic_offsets_size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "template ", t.label(), ": dynamic arg ", k, " out of range"));
    }
    absl::StatusOr<int64_t> v = Eval(graph.dynamic_offsets(static_cast<int>(k)),
                                     values, absl::StrCat("template ", t.label()));
    if (!v.ok()) return v.status();
    g.extra_args.push_back(*v);
  }
  if (t.cube_k_arg() > g.extra_args.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "template ", t.label(), ": K is dynamic arg ", t.cube_k_arg(), " of ",
        g.extra_args.size()));
  }
  g.k = t.cube_k_arg() > 0 ? g.extra_args[t.cube_k_arg() - 1] : t.cube_k();
  if (g.accesses.size() != static_cast<size_t>(t.accesses_size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "template ", t.label(), ": the group to rebind is not this template's"));
  }
  for (int ai = 0; ai < t.accesses_size(); ++ai) {
    const pto::v1::TemplateAccess& a = t.accesses(ai);
    if (g.accesses[ai].index.size() != static_cast<size_t>(a.index_size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "template ", t.label(), ": the group to rebind is not this template's"));
    }
    for (int j = 0; j < a.index_size(); ++j) {
      const pto::v1::AccessIndex& x = a.index(j);
      int64_t offset = x.offset();
      if (x.dynamic() > g.extra_args.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "template ", t.label(), ": an access names dynamic arg ", x.dynamic(),
            " of ", g.extra_args.size()));
      }
      if (x.dynamic() > 0 &&
          __builtin_add_overflow(offset, g.extra_args[x.dynamic() - 1], &offset)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "template ", t.label(), ": an access offset overflows int64"));
      }
      g.accesses[ai].index[j].offset = offset;
    }
  }
  return absl::OkStatus();
}

namespace {

// Each GM stride `a` takes from a dynamic arg (ExpandAccess::stride_arg) is
// the buffer's row-major stride at this binding (through a reshape: its
// view shape's, which must hold the buffer's elements): the region the
// caller checks is then the memory the block code reaches. (`access`: its
// index in the template, for the error.)
absl::Status CheckStrideArgs(const ExpandGroup& g, int access, const ExpandAccess& a,
                             const std::vector<int64_t>& buffer_shape) {
  const bool view = !a.view_shape.empty();
  const std::vector<int64_t>& shape = view ? a.view_shape : buffer_shape;
  const std::string what = absl::StrCat(
      "template ", g.label, ": access #", access, " (a ", a.write ? "store into" : "load of",
      " buffer ", a.buffer, " of shape ", Dims(buffer_shape),
      view ? absl::StrCat(" read as ", Dims(shape)) : "", ")");
  if (view) {
    int64_t elements = 1, held = 1;
    bool overflow = false;
    for (int64_t d : shape) overflow = overflow || __builtin_mul_overflow(elements, d, &elements);
    for (int64_t d : buffer_shape) overflow = overflow || __builtin_mul_overflow(held, d, &held);
    if (overflow || elements != held) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": the view has ", overflow ? "more than int64" : absl::StrCat(elements),
          " elements and the buffer ", held, "; refused before any task reads outside it"));
    }
  }
  if (a.stride_arg.empty()) return absl::OkStatus();
  if (a.stride_arg.size() != shape.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " names stride args for ", a.stride_arg.size(), " dims"));
  }
  int64_t stride = 1;
  for (int j = static_cast<int>(shape.size()) - 1; j >= 0; --j) {
    const uint32_t k = a.stride_arg[j];
    if (k > g.extra_args.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": the stride of dim ", j, " is dynamic arg ", k - 1, " of ",
          g.extra_args.size()));
    }
    if (k > 0 && g.extra_args[k - 1] != stride) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " addresses dim ", j, " with stride ", g.extra_args[k - 1],
          " (dynamic arg ", k - 1, "), but the ", view ? "view's" : "buffer's",
          " row-major stride there is ",
          stride, "; refused before any task reads or writes outside the buffer"));
    }
    if (__builtin_mul_overflow(stride, shape[j], &stride)) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": the buffer's size overflows int64"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckAccessBounds(const ExpandGroup& g,
                               const std::vector<std::vector<int64_t>>& shapes) {
  for (size_t ai = 0; ai < g.accesses.size(); ++ai) {
    const ExpandAccess& a = g.accesses[ai];
    if (a.buffer < 0 || a.buffer >= static_cast<int>(shapes.size()) ||
        a.index.size() != shapes[a.buffer].size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "template ", g.label, ": an access names buffer ", a.buffer,
          " with the wrong rank"));
    }
    const std::vector<int64_t>& shape = shapes[a.buffer];
    for (size_t j = 0; j < shape.size(); ++j) {
      const ExpandIndex& x = a.index[j];
      if (x.space_dim == kExpandWholeDim && a.reads_k) {
        // A matmul's K: the tasks read g.k elements from the offset (a
        // run-time K is a dynamic arg: a binary whose K passes the operand's
        // end would make the cube read past it).
        int64_t end = 0;
        if (g.k < 0 || x.offset < 0 || __builtin_add_overflow(x.offset, g.k, &end) ||
            end > shape[j]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "template ", g.label, ": a matmul reads K = ", g.k, " elements of buffer ",
              a.buffer, " of shape ", Dims(shape), " from index ", x.offset, " in dim ",
              j, ", outside the buffer"));
        }
        continue;
      }
      // Any other whole dim is read whole from index 0.
      if (x.space_dim == kExpandWholeDim && x.offset == 0) continue;
      if (shape[j] == 1) continue;
      int64_t first = x.offset, last = x.offset;
      if (x.space_dim == kExpandWholeDim) {
        first = -1;  // a whole dim at an offset: refused below
      } else if (x.space_dim >= static_cast<int>(g.space.size())) {
        first = -1;  // out of range: refused below
      } else if (x.space_dim >= 0 && x.div > 1) {
        first = 0;
        last = (g.space[x.space_dim] - 1) / x.div;
      } else if (x.space_dim >= 0 &&
                 __builtin_add_overflow(x.offset, g.space[x.space_dim] - 1, &last)) {
        first = -1;
      }
      if (first < 0 || last >= shape[j]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "template ", g.label, ": an access to buffer ", a.buffer, " of shape ",
            Dims(shape), " covers [", first, ", ", last + 1, ") in dim ", j,
            ", outside the buffer"));
      }
    }
    // The region is inside; the strides must reach that region.
    if (absl::Status s = CheckStrideArgs(g, static_cast<int>(ai), a, shape); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status ExpandProgram(const pto::v1::ExecuteGraph& graph,
                           const SymbolValues& values,
                           std::vector<ExpandGroup>* groups,
                           std::vector<std::vector<LoopVisit>>* loops) {
  return Expander(graph, values, groups, loops).Walk(graph.program());
}

absl::Status VerifyProgram(const pto::v1::ExecuteGraph& graph) {
  int count = 0;
  absl::Status s = VerifyNodes(graph, graph.program(), 1, &count);
  if (!s.ok()) return s;
  for (int i = 0; i < graph.templates_size(); ++i) {
    const pto::v1::TaskTemplate& t = graph.templates(i);
    for (uint32_t k : t.dynamic_args()) {
      if (k >= static_cast<uint32_t>(graph.dynamic_offsets_size())) {
        return Bad(absl::StrCat("template ", i, ": dynamic arg ", k, " out of range"));
      }
    }
    for (const pto::v1::TemplateAccess& a : t.accesses()) {
      for (const pto::v1::AccessIndex& x : a.index()) {
        if (x.dynamic() > static_cast<uint32_t>(t.dynamic_args_size())) {
          return Bad(absl::StrCat("template ", i, ": an access names dynamic arg ",
                                  x.dynamic(), " of ", t.dynamic_args_size()));
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace pto::runtime
