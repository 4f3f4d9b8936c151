#include "compiler/lower/lower_symbolic.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/dtype.h"
#include "compiler/lower/build_execute_graph.h"
#include "compiler/lower/expand_to_tiles.h"
#include "compiler/lower/partition_blocks.h"
#include "compiler/lower/symbolic_rows.h"
#include "compiler/util/checked_math.h"
#include "compiler/util/strings.h"
#include "compiler/verify/limits.h"

namespace pto::compiler {
namespace {

// A kernel with symbolic dims this lowering cannot compile once for every
// size; `what` says what and why.
absl::Status Unimplemented(const std::string& what) {
  return absl::UnimplementedError(
      absl::StrCat(what, " (a kernel with symbolic dims compiles once when its "
                         "lowering at two probe sizes differs only in dims it can "
                         "express: lower_symbolic.h)"));
}

// The symbols of the graph's dims, in order. A dim that is an expression of
// symbols (x[:, :n//2]'s n//2, a reshape's s*2) goes to `exprs`, each once.
std::vector<std::string> Symbols(const TensorGraph& g, std::vector<SymExpr>* exprs) {
  std::set<std::string> symbols;
  for (size_t v = 0; v < g.values.size(); ++v) {
    const SymShape& shape = g.values[v].sym_shape;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d].IsConstant()) continue;
      std::optional<std::string> name = shape[d].AsSymbol();
      if (name) {
        symbols.insert(*name);
        continue;
      }
      for (const std::string& s : shape[d].Symbols()) symbols.insert(s);
      if (std::find(exprs->begin(), exprs->end(), shape[d]) == exprs->end()) {
        exprs->push_back(shape[d]);
      }
    }
  }
  return std::vector<std::string>(symbols.begin(), symbols.end());
}

// The graph with every symbol replaced by its probe size; a dim whose value
// there is not a positive int64 is UNIMPLEMENTED (the probes are chosen so
// that every candidate evaluates, so only other dims get here).
absl::StatusOr<TensorGraph> AtProbe(const TensorGraph& g, const SymBindings& probe) {
  TensorGraph out = g;
  for (size_t i = 0; i < out.values.size(); ++i) {
    TensorValue& v = out.values[i];
    for (size_t d = 0; d < v.sym_shape.size(); ++d) {
      absl::StatusOr<int64_t> size = v.sym_shape[d].Evaluate(probe);
      if (!size.ok() || *size <= 0 || *size > kMaxElements) {
        return Unimplemented(absl::StrCat(
            "value %", i, " dim ", d, " (", v.sym_shape[d].ToString(),
            ") is not a size of at most ", kMaxElements, " at the probe sizes"));
      }
      v.shape[d] = *size;
      v.sym_shape[d] = SymExpr(v.shape[d]);
    }
    std::optional<int64_t> elements = CheckedProduct(v.shape);
    if (!elements || *elements > kMaxElements) {
      return Unimplemented(absl::StrCat(
          "value %", i, " ", FormatSymShape(g.values[i].sym_shape), " has more than ",
          kMaxElements, " elements at the probe sizes ", FormatDims(v.shape)));
    }
  }
  return out;
}

// Whether `e` evaluates to `want` at `at`.
bool EvaluatesTo(const SymExpr& e, const SymBindings& at, int64_t want) {
  absl::StatusOr<int64_t> v = e.Evaluate(at);
  return v.ok() && *v == want;
}

bool SameInstr(const TileInstr& a, const TileInstr& b) {
  if (a.op != b.op || a.dst != b.dst || a.srcs != b.srcs || a.gm != b.gm ||
      a.scalars != b.scalars || a.reduce_dim != b.reduce_dim ||
      a.dtype != b.dtype || a.index.size() != b.index.size() ||
      a.index_dim != b.index_dim || a.scatter != b.scatter ||
      a.descending != b.descending || a.img2col != b.img2col) {
    return false;
  }
  for (size_t j = 0; j < a.index.size(); ++j) {
    if (a.index[j].space_dim != b.index[j].space_dim ||
        a.index[j].div != b.index[j].div ||
        a.index[j].offset != b.index[j].offset) {
      return false;
    }
  }
  return true;
}

// Where the two probe lowerings differ in structure, or "" when they agree.
std::string StructureDifference(const TileGraph& a, const TileGraph& b) {
  if (a.buffers.size() != b.buffers.size() || a.gm.size() != b.gm.size() ||
      a.groups.size() != b.groups.size()) {
    return "the number of buffers or groups";
  }
  if (a.row_caps.size() != b.row_caps.size()) return "the rows over symbolic dims";
  for (size_t i = 0; i < a.row_caps.size(); ++i) {
    if (a.row_caps[i].value != b.row_caps[i].value || a.row_caps[i].cap != b.row_caps[i].cap) {
      return "the rows over symbolic dims";
    }
  }
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    const GmBuffer &x = a.buffers[i], &y = b.buffers[i];
    if (x.param != y.param || x.role != y.role || x.dtype != y.dtype ||
        x.shape.size() != y.shape.size()) {
      return absl::StrCat("buffer #", i);
    }
  }
  for (size_t i = 0; i < a.gm.size(); ++i) {
    if (a.gm[i].value != b.gm[i].value || a.gm[i].buffer != b.gm[i].buffer) {
      return absl::StrCat("GM tensor #", i);
    }
  }
  for (size_t i = 0; i < a.groups.size(); ++i) {
    const TileGroup &x = a.groups[i], &y = b.groups[i];
    const std::string label = absl::StrCat("op #", x.ops.empty() ? -1 : x.ops.front());
    bool same = x.ops == y.ops && x.tile == y.tile &&
                x.space.size() == y.space.size() &&
                x.num_ub_tiles == y.num_ub_tiles && x.ub_types == y.ub_types &&
                x.ub_rows == y.ub_rows && x.serial_dim == y.serial_dim &&
                x.serial_all == y.serial_all &&
                x.branch == y.branch &&
                x.body.size() == y.body.size();
    for (size_t k = 0; same && k < x.body.size(); ++k) {
      same = SameInstr(x.body[k], y.body[k]);
    }
    if (!same) return label;
  }
  return "";
}

// The expression that gives `a` at probe A and `b` at probe B: a constant
// when they are equal, else a candidate (a symbol or a dim's expression) or
// ceil(candidate / t) for a tile size t. (ProbesAreGood made the match
// unique.)
absl::StatusOr<SymExpr> Recover(int64_t a, int64_t b,
                                const std::vector<SymExpr>& candidates,
                                const SymBindings& pa, const SymBindings& pb,
                                const std::set<int64_t>& tiles,
                                const std::string& where) {
  if (a == b) return SymExpr(a);
  for (const SymExpr& c : candidates) {
    if (EvaluatesTo(c, pa, a) && EvaluatesTo(c, pb, b)) return c;
    for (int64_t t : tiles) {
      const SymExpr e = SymExpr::CeilDiv(c, t);
      if (EvaluatesTo(e, pa, a) && EvaluatesTo(e, pb, b)) return e;
    }
  }
  return Unimplemented(absl::StrCat(where, " depends on the symbolic sizes other than as "
                                    "a symbol, a dim's expression or ceil(that / tile)"));
}

// Whether `a` and `b`, two forms the canonical form does not equate
// ((s*2+15)//16 and (s+7)//8), agree at every binding of a sample: each
// symbol 1..300 (every symbol alike, then each with its own offset) and a
// few large sizes. Either then serves Recover.
bool SameFunction(const SymExpr& a, const SymExpr& b) {
  std::set<std::string> symbols = a.Symbols();
  for (const std::string& s : b.Symbols()) symbols.insert(s);
  std::vector<int64_t> sizes;
  for (int64_t v = 1; v <= 300; ++v) sizes.push_back(v);
  for (int64_t v : {999, 1000, 1001, 4095, 4096, 4097, 65537, 1000003}) sizes.push_back(v);
  for (int spread = 0; spread < 2; ++spread) {
    for (int64_t v : sizes) {
      SymBindings at;
      int64_t k = 0;
      for (const std::string& s : symbols) at[s] = v + spread * 37 * k++;
      absl::StatusOr<int64_t> x = a.Evaluate(at), y = b.Evaluate(at);
      if (x.ok() != y.ok() || (x.ok() && *x != *y)) return false;
    }
  }
  return true;
}

// Evaluations SameFunction does (its sample, at most), and the most the
// probe search may do in all: a request's graph must not keep a worker
// searching for minutes (a valid kernel needs far fewer).
constexpr int64_t kSameFunctionWork = 1200;
constexpr int64_t kMaxProbeSearchWork = 4'000'000;

// Whether probes A and B let Recover tell every candidate apart: each
// candidate is above every static dim and tile (no tile clamped to it, no
// coincidence with a static dim), different at A and B (so never taken for
// a constant), and no two different expressions among the candidates and
// their ceil(c / t) give the same pair of values. `tails`: each candidate is
// also a multiple of no tile (a tail in both probes, as a plain symbol has;
// n and n-1 cannot both have one while ceil(n/4) and ceil((n-1)/4) differ,
// and a dim without a tail in either probe lowers the same: tails run the
// generic function).
// `work` counts the evaluations done (SameFunction's sample included), so
// the caller can bound the search.
bool ProbesAreGood(const std::vector<SymExpr>& candidates, const SymBindings& pa,
                   const SymBindings& pb, const std::set<int64_t>& tiles,
                   int64_t floor, bool tails, int64_t* work) {
  std::map<std::pair<int64_t, int64_t>, SymExpr> seen;
  auto unique = [&seen, work](const SymExpr& e, int64_t a, int64_t b) {
    auto [it, added] = seen.emplace(std::make_pair(a, b), e);
    if (added || it->second == e) return true;
    *work += kSameFunctionWork;
    return SameFunction(it->second, e);
  };
  for (const SymExpr& c : candidates) {
    *work += 1 + static_cast<int64_t>(tiles.size());
    absl::StatusOr<int64_t> a = c.Evaluate(pa), b = c.Evaluate(pb);
    if (!a.ok() || !b.ok() || *a <= floor || *b <= floor || *a == *b ||
        !unique(c, *a, *b)) {
      return false;
    }
    for (int64_t t : tiles) {
      if (t <= 1) continue;
      if (tails && (*a % t == 0 || *b % t == 0)) return false;
      const SymExpr e = SymExpr::CeilDiv(c, t);
      absl::StatusOr<int64_t> ea = e.Evaluate(pa), eb = e.Evaluate(pb);
      if (!ea.ok() || !eb.ok() || *ea == *eb || !unique(e, *ea, *eb)) return false;
    }
  }
  return true;
}

int64_t Lcm(int64_t a, int64_t b) { return a / std::gcd(a, b) * b; }

// What the probes must respect: every tile size (`tiles`) and their least
// common multiple, the largest static dim, and the options the probes are
// lowered with (symbolic_rows off when the row caps would make the
// multiple too large).
struct ProbeConstraints {
  std::set<int64_t> tiles;
  int64_t lcm = 1;
  int64_t max_static = 1;
  ExpandOptions row_options;
};

// The probes' constraints from the graph's tile sizes. With symbolic_rows,
// the caps of rows over symbolic dims count as tile sizes (a probe's row is
// then longer than its cap: symbolic_rows.h); when they would make the
// multiple too large, those rows take the accumulating form only.
absl::StatusOr<ProbeConstraints> ConstraintsOf(const TensorGraph& graph,
                                               const ExpandOptions& options) {
  ProbeConstraints c;
  c.row_options = options;
  for (const TensorOp& op : graph.ops) {
    // A matmul's L0 rows and columns and its K blocks too: a probe then has
    // full cube tiles (no tile is clamped to a symbolic M, N or K).
    std::vector<int64_t> sizes = op.vec_tile;
    if (op.cube_tile.size() == 6) {
      for (int j : {0, 2, 3, 4}) {
        if (op.cube_tile[j] > 0) sizes.push_back(op.cube_tile[j]);
      }
    }
    for (int64_t t : sizes) {
      c.lcm = Lcm(c.lcm, t);
      c.tiles.insert(t);
      if (c.lcm > (int64_t{1} << 16)) {
        return Unimplemented(absl::StrCat(
            "the tile sizes of the kernel have a least common multiple above ",
            int64_t{1} << 16, ", which the probe sizes are multiples of (plus a "
            "remainder): use tile sizes with a smaller one"));
      }
    }
  }
  if (options.symbolic_rows) {
    int64_t with_caps = c.lcm;
    std::set<int64_t> caps;
    for (const TensorOp& op : graph.ops) {
      if (op.info->category != OpCategory::kReduce || op.vec_tile.empty() ||
          op.inputs.empty()) {
        continue;
      }
      const std::vector<int64_t>& shape = graph.values[op.inputs[0]].shape;
      std::vector<int64_t> tile = op.vec_tile;
      for (size_t d = 0; d < tile.size() && d < shape.size(); ++d) {
        if (shape[d] > 0) tile[d] = std::min(tile[d], shape[d]);
      }
      const int64_t cap = SymbolicRowCap(tile, options.memory.ub_bytes);
      with_caps = Lcm(with_caps, cap);
      caps.insert(cap);
    }
    if (with_caps > (int64_t{1} << 16)) {
      c.row_options.symbolic_rows = false;
    } else {
      c.lcm = with_caps;
      c.tiles.insert(caps.begin(), caps.end());
    }
  }
  for (const TensorValue& v : graph.values) {
    for (int64_t d : v.shape) c.max_static = std::max(c.max_static, d);
  }
  return c;
}

// Why no two probes tell the symbolic dims `exprs` apart, after `work`
// evaluations.
absl::Status NoProbes(const std::vector<SymExpr>& exprs, int64_t work) {
  std::vector<std::string> printed;
  for (const SymExpr& e : exprs) {
    if (printed.size() == 8) {
      printed.push_back(absl::StrCat("... (", exprs.size(), " in all)"));
      break;
    }
    printed.push_back(e.ToString());
  }
  if (work >= kMaxProbeSearchWork) {
    return Unimplemented(absl::StrCat(
        "the symbolic dims ", absl::StrJoin(printed, ", "), " are not told apart by "
        "two probe sizes within ", kMaxProbeSearchWork, " evaluations (the limit)"));
  }
  return Unimplemented(absl::StrCat(
      "the symbolic dims ", absl::StrJoin(printed, ", "), " cannot be told apart "
      "by two probe sizes (an expression that stays small or constant for large "
      "sizes, such as n//4096, is not lowered symbolically)"));
}

// The two probe bindings of `symbols`: ProbesAreGood for `candidates`. The
// first try is 1 more than a multiple of lcm (plain symbols take it); an
// expression of symbols (n-1, n//2) may need another remainder or larger
// probes.
absl::Status ChooseProbes(const std::vector<std::string>& symbols,
                          const std::vector<SymExpr>& exprs,
                          const std::vector<SymExpr>& candidates,
                          const ProbeConstraints& c, SymBindings* pa, SymBindings* pb) {
  const int64_t n = static_cast<int64_t>(symbols.size());
  const int64_t lcm = c.lcm;
  int64_t work = 0;
  for (bool tails : {true, false}) {
    for (int64_t scale = 1; scale <= 64; scale *= 4) {
      const int64_t base = (c.max_static / lcm + 1) * scale;
      // Remainders 1..256, then the 256 below lcm: an expression a few
      // above a symbol (n+8 of a concat after [., n]) has another ceil(e/t)
      // than the symbol only when n's remainder mod a large t (a row cap,
      // 4096) is near t.
      std::vector<int64_t> remainders;
      const int64_t last_r = std::max<int64_t>(1, std::min<int64_t>(lcm, 256));
      for (int64_t r = 1; r <= last_r; ++r) remainders.push_back(r);
      for (int64_t r = std::max(last_r + 1, lcm - 256); r < lcm; ++r) remainders.push_back(r);
      for (size_t ri = 0; ri < remainders.size() && work < kMaxProbeSearchWork; ++ri) {
        const int64_t r = remainders[ri];
        for (int64_t k = 0; k < n; ++k) {
          (*pa)[symbols[k]] = lcm * (base + k) + r;
          (*pb)[symbols[k]] = lcm * (base + k + n * scale) + r;
        }
        if (ProbesAreGood(candidates, *pa, *pb, c.tiles, std::max(c.max_static, lcm), tails,
                          &work)) {
          return absl::OkStatus();
        }
      }
    }
  }
  return NoProbes(exprs, work);
}

// The options both probes are lowered with: the caller's, with every dim
// that is symbolic in `graph` marked (ExpandOptions::symbolic), so both
// lower reductions over symbolic dims the same way. (Dims the caller marks,
// loop-dependent extents, count too.)
ExpandOptions ProbeOptions(const TensorGraph& graph, const ExpandOptions& options,
                           const ExpandOptions& row_options) {
  ExpandOptions probe_options = row_options;
  probe_options.symbolic.assign(graph.values.size(), {});
  for (size_t v = 0; v < graph.values.size(); ++v) {
    const SymShape& shape = graph.values[v].sym_shape;
    for (size_t d = 0; d < shape.size(); ++d) {
      const bool marked = v < options.symbolic.size() && d < options.symbolic[v].size() &&
                          options.symbolic[v][d];
      probe_options.symbolic[v].push_back(marked || !shape[d].IsConstant());
    }
  }
  return probe_options;
}

// Where two probe lowerings differ, the expressions of the symbols that
// give both values (Recover), per group, buffer and load.
struct RecoveredDims {
  std::vector<SymShape> spaces;                   // per group
  std::vector<SymShape> shapes;                   // per buffer
  std::vector<std::vector<SymShape>> view_shapes; // per group, per instruction
};

// Recover the symbolic dims where the two probe lowerings `ta` and `tb`
// (of the same structure) differ, from `candidates` at probes pa and pb.
absl::StatusOr<RecoveredDims> RecoverDims(const TileGraph& ta, const TileGraph& tb,
                                          const std::vector<SymExpr>& candidates,
                                          const SymBindings& pa, const SymBindings& pb,
                                          const std::set<int64_t>& tiles) {
  RecoveredDims r;
  r.spaces.resize(ta.groups.size());
  r.shapes.resize(ta.buffers.size());
  for (size_t i = 0; i < ta.groups.size(); ++i) {
    const TileGroup &x = ta.groups[i], &y = tb.groups[i];
    for (size_t d = 0; d < x.space.size(); ++d) {
      absl::StatusOr<SymExpr> e =
          Recover(x.space[d], y.space[d], candidates, pa, pb, tiles,
                  absl::StrCat("op #", x.ops.front(), ": space dim ", d));
      if (!e.ok()) return e.status();
      r.spaces[i].push_back(*e);
    }
  }
  for (size_t i = 0; i < ta.buffers.size(); ++i) {
    for (size_t d = 0; d < ta.buffers[i].shape.size(); ++d) {
      absl::StatusOr<SymExpr> e = Recover(
          ta.buffers[i].shape[d], tb.buffers[i].shape[d], candidates, pa, pb,
          tiles, absl::StrCat("buffer #", i, " dim ", d));
      if (!e.ok()) return e.status();
      r.shapes[i].push_back(*e);
    }
  }
  // Loads through a reshape of a symbolic tensor: the shape they read it as.
  r.view_shapes.resize(ta.groups.size());
  for (size_t g = 0; g < ta.groups.size(); ++g) {
    const TileGroup &x = ta.groups[g], &y = tb.groups[g];
    r.view_shapes[g].resize(x.body.size());
    for (size_t k = 0; k < x.body.size(); ++k) {
      const std::vector<int64_t>&va = x.body[k].view_shape, &vb = y.body[k].view_shape;
      if (va == vb) continue;
      if (va.size() != vb.size()) {
        return Unimplemented(absl::StrCat("op #", x.ops.front(), ": a load's shape through "
                                          "a reshape has a rank that depends on the sizes"));
      }
      for (size_t d = 0; d < va.size(); ++d) {
        absl::StatusOr<SymExpr> e =
            Recover(va[d], vb[d], candidates, pa, pb, tiles,
                    absl::StrCat("op #", x.ops.front(), ": a load through a reshape, dim ", d));
        if (!e.ok()) return e.status();
        r.view_shapes[g][k].push_back(*e);
      }
    }
  }
  return r;
}

// Writes the recovered dims into the first probe's Tile Graph `tile`: each
// load's sym_view_shape, and the symbolic spaces and buffer shapes.
void AttachSymbolicDims(RecoveredDims* dims, TileGraph* tile) {
  for (size_t g = 0; g < tile->groups.size(); ++g) {
    for (size_t k = 0; k < tile->groups[g].body.size(); ++k) {
      tile->groups[g].body[k].sym_view_shape = std::move(dims->view_shapes[g][k]);
    }
  }
  for (size_t g = 0; g < tile->groups.size(); ++g) {
    if (!StaticDims(dims->spaces[g])) tile->groups[g].sym_space = dims->spaces[g];
  }
  for (size_t i = 0; i < tile->buffers.size(); ++i) {
    if (!StaticDims(dims->shapes[i])) tile->buffers[i].sym_shape = dims->shapes[i];
  }
}

// Tails along symbolic dims run the caller's generic function (extents
// from the task's args, tail_functions.h): drops the probe's tails there.
void DropProbeTails(const std::vector<SymShape>& spaces, const TileGraph& tile,
                    BlockGraph* block) {
  std::vector<int> renumber(block->functions.size(), -1);
  std::vector<BlockFunction> kept;
  for (size_t f = 0; f < block->functions.size(); ++f) {
    const BlockFunction& fn = block->functions[f];
    const TileGroup& group = tile.groups[fn.group];
    bool probe_tail = false;
    for (size_t d = 0; d < fn.extent.size(); ++d) {
      probe_tail = probe_tail ||
                   (!spaces[fn.group][d].IsConstant() && fn.extent[d] != group.tile[d]);
    }
    if (probe_tail) continue;
    renumber[f] = static_cast<int>(kept.size());
    kept.push_back(fn);
  }
  block->functions = std::move(kept);
  for (BlockGroup& bg : block->groups) {
    for (int& f : bg.function_of_mask) f = f < 0 ? -1 : renumber[f];
  }
}

// The Execute Graph's buffers: names, element sizes, symbolic shapes, and a
// static workspace's bytes.
void AddBuffers(const TileGraph& tile, const std::vector<SymShape>& shapes,
                pto::v1::ExecuteGraph* out) {
  for (size_t i = 0; i < tile.buffers.size(); ++i) {
    const GmBuffer& buf = tile.buffers[i];
    pto::v1::BufferDesc* desc = out->add_buffers();
    desc->set_name(buf.param >= 0 ? buf.name : absl::StrCat("ws", i));
    desc->set_element_bytes(static_cast<uint32_t>(DTypeBytes(buf.dtype)));
    for (const SymExpr& d : shapes[i]) *desc->mutable_shape()->add_dims() = SymExprToDim(d);
    if (buf.param < 0 && StaticDims(shapes[i])) desc->set_workspace_bytes(buf.Bytes());
  }
}

// Each symbol's binding: the first parameter dim that is exactly it.
absl::Status AddSymbolBindings(const TensorGraph& graph,
                               const std::vector<std::string>& symbols,
                               pto::v1::ExecuteGraph* out) {
  for (const std::string& s : symbols) {
    bool bound = false;
    for (size_t p = 0; p < graph.params.size() && !bound; ++p) {
      const TensorParam& param = graph.params[p];
      const int v = param.in_value >= 0 ? param.in_value : param.out_value;
      const SymShape& shape = graph.values[v].sym_shape;
      for (size_t d = 0; d < shape.size() && !bound; ++d) {
        if (shape[d].AsSymbol() == s) {
          pto::v1::SymbolBinding* b = out->add_symbols();
          b->set_name(s);
          b->set_param(static_cast<uint32_t>(p));
          b->set_dim(static_cast<uint32_t>(d));
          bound = true;
        }
      }
    }
    if (!bound) {  // the verifier guarantees a binding
      return absl::InternalError(absl::StrCat("symbol ", s, " has no binding"));
    }
  }
  return absl::OkStatus();
}

// One task template per group: its symbolic space, tile, serial dims, its
// functions (the full tile and its static tails; the caller adds the
// generic one) and its GM accesses.
void AddTemplates(const TileGraph& tile, const BlockGraph& block,
                  const std::vector<SymShape>& spaces, pto::v1::ExecuteGraph* out) {
  std::vector<std::vector<int>> functions_of_group(tile.groups.size());
  for (size_t f = 0; f < block.functions.size(); ++f) {
    functions_of_group[block.functions[f].group].push_back(static_cast<int>(f));
  }
  for (size_t g = 0; g < tile.groups.size(); ++g) {
    const TileGroup& group = tile.groups[g];
    pto::v1::TaskTemplate* t = out->add_templates();
    t->set_label(absl::StrCat("op #", group.ops.front()));
    for (const SymExpr& d : spaces[g]) *t->add_space() = SymExprToDim(d);
    for (int64_t x : group.tile) t->add_tile(x);
    t->set_serial_dim(static_cast<uint32_t>(group.serial_dim + 1));
    t->set_serial_all(group.serial_all);
    if (group.is_cube) t->set_cube_k(group.cube.k);  // a run-time K: bind_dynamic_args.cc
    for (int f : functions_of_group[g]) {
      pto::v1::ExtentFunction* ef = t->add_functions();
      for (int64_t e : block.functions[f].extent) ef->add_extent(e);
      ef->set_function(static_cast<uint32_t>(f));
    }
    for (const runtime::ExpandAccess& a : ExpandAccessesOf(tile, group)) {
      pto::v1::TemplateAccess* ta_out = t->add_accesses();
      ta_out->set_buffer(static_cast<uint32_t>(a.buffer));
      ta_out->set_write(a.write);
      ta_out->set_reads_k(a.reads_k);
      for (const runtime::ExpandIndex& x : a.index) {
        pto::v1::AccessIndex* ai = ta_out->add_index();
        ai->set_space_dim(x.space_dim);
        ai->set_div(x.div);
        ai->set_offset(x.offset);
      }
    }
  }
}

}  // namespace

absl::Status LowerSymbolic(const TensorGraph& graph, const ExpandOptions& options,
                           TileGraph* tile, BlockGraph* block,
                           pto::v1::ExecuteGraph* execute) {
  std::vector<SymExpr> exprs;
  const std::vector<std::string> symbols = Symbols(graph, &exprs);

  // Probes: 1 more than a multiple of every tile size, above every static
  // dim, distinct per symbol and between the two lowerings.
  absl::StatusOr<ProbeConstraints> constraints = ConstraintsOf(graph, options);
  if (!constraints.ok()) return constraints.status();
  // Symbols and dims' expressions: what a symbolic space or buffer dim is
  // recovered from.
  std::vector<SymExpr> candidates;
  for (const std::string& s : symbols) candidates.push_back(SymExpr::Symbol(s));
  candidates.insert(candidates.end(), exprs.begin(), exprs.end());
  SymBindings pa, pb;
  if (absl::Status s = ChooseProbes(symbols, exprs, candidates, *constraints, &pa, &pb);
      !s.ok()) {
    return s;
  }

  // The static passes at both probes, which must agree in structure.
  absl::StatusOr<TensorGraph> probe_a = AtProbe(graph, pa);
  if (!probe_a.ok()) return probe_a.status();
  absl::StatusOr<TensorGraph> probe_b = AtProbe(graph, pb);
  if (!probe_b.ok()) return probe_b.status();
  const ExpandOptions probe_options = ProbeOptions(graph, options, constraints->row_options);
  absl::StatusOr<TileGraph> ta = ExpandToTiles(*probe_a, probe_options);
  if (!ta.ok()) return ta.status();
  absl::StatusOr<TileGraph> tb = ExpandToTiles(*probe_b, probe_options);
  if (!tb.ok()) return tb.status();
  if (std::string diff = StructureDifference(*ta, *tb); !diff.empty()) {
    return Unimplemented(absl::StrCat(diff, ": its groups, tiles or code differ "
                                      "between two probe sizes of the symbolic dims"));
  }

  // Symbolic spaces, buffer shapes and load shapes, on the first probe's
  // Tile and Block Graphs.
  absl::StatusOr<RecoveredDims> dims =
      RecoverDims(*ta, *tb, candidates, pa, pb, constraints->tiles);
  if (!dims.ok()) return dims.status();
  *tile = *std::move(ta);
  AttachSymbolicDims(&*dims, tile);
  absl::StatusOr<BlockGraph> blocks = PartitionBlocks(*probe_a, *tile);
  if (!blocks.ok()) return blocks.status();
  *block = *std::move(blocks);
  block->tiles = tile;
  DropProbeTails(dims->spaces, *tile, block);

  // The Execute Graph: buffers with shapes, functions, symbols, templates.
  pto::v1::ExecuteGraph out;
  AddBuffers(*tile, dims->shapes, &out);
  AddBlockFunctions(*block, &out);
  if (absl::Status s = AddSymbolBindings(graph, symbols, &out); !s.ok()) return s;
  AddTemplates(*tile, *block, dims->spaces, &out);
  *execute = std::move(out);
  return absl::OkStatus();
}

}  // namespace pto::compiler
