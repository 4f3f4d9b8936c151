// MutateRequest (compile_request_fuzzer.h): structure-aware mutations of a
// serialized pto.v1.CompileRequest, byte mutations when it does not parse.
#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compiler/fuzz/compile_request_fuzzer.h"
#include "compiler/ops/op_registry.h"

namespace pto::compiler::fuzz {
namespace {

using Rng = std::mt19937_64;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

size_t Below(Rng& rng, size_t n) { return n == 0 ? 0 : rng() % n; }
bool OneIn(Rng& rng, size_t n) { return Below(rng, n) == 0; }

// The values that break size arithmetic, and some ordinary ones.
int64_t Extreme(Rng& rng) {
  static const int64_t kValues[] = {
      0, 1, -1, 2, 3, 7, 8, 16, 17, 64, 4096,
      (int64_t{1} << 31) - 1, int64_t{1} << 31, int64_t{1} << 32,
      int64_t{1} << 20, (int64_t{1} << 20) + 1, int64_t{1} << 40, (int64_t{1} << 40) + 1,
      int64_t{1} << 62, kInt64Max, kInt64Max - 1, kInt64Min, kInt64Min + 1,
      -(int64_t{1} << 31), -(int64_t{1} << 62)};
  switch (Below(rng, 4)) {
    case 0: return static_cast<int64_t>(rng());              // anything
    case 1: return static_cast<int64_t>(Below(rng, 200)) - 20;  // small
    default: return kValues[Below(rng, sizeof(kValues) / sizeof(kValues[0]))];
  }
}

// Every op of the request, those in regions included.
void CollectOps(google::protobuf::RepeatedPtrField<pto::v1::Op>* ops,
                std::vector<pto::v1::Op*>* out) {
  for (pto::v1::Op& op : *ops) {
    out->push_back(&op);
    for (pto::v1::Region& r : *op.mutable_regions()) CollectOps(r.mutable_ops(), out);
  }
}

// Every DimExpr node reachable from the request (shape dims, attrs).
void CollectExprs(pto::v1::DimExpr* e, std::vector<pto::v1::DimExpr*>* out, int depth) {
  if (depth > 64) return;
  out->push_back(e);
  if (e->has_binary()) {
    CollectExprs(e->mutable_binary()->mutable_lhs(), out, depth + 1);
    CollectExprs(e->mutable_binary()->mutable_rhs(), out, depth + 1);
  }
}

// The symbols the request uses (names of symbol dims, loop indices) plus a
// few others.
std::vector<std::string> Symbols(const pto::v1::CompileRequest& req) {
  std::vector<std::string> out = {"n", "i", "bs", "s0"};
  for (const pto::v1::Value& v : req.graph().values()) {
    for (const pto::v1::Dim& d : v.shape().dims()) {
      if (d.has_symbol()) out.push_back(d.symbol());
    }
  }
  return out;
}

pto::v1::DimExpr Leaf(Rng& rng, const std::vector<std::string>& symbols) {
  pto::v1::DimExpr e;
  if (OneIn(rng, 2)) {
    e.set_symbol(symbols[Below(rng, symbols.size())]);
  } else {
    e.set_constant(Extreme(rng));
  }
  return e;
}

pto::v1::DimExpr Binary(pto::v1::DimOp op, pto::v1::DimExpr lhs, pto::v1::DimExpr rhs) {
  pto::v1::DimExpr e;
  e.mutable_binary()->set_op(op);
  *e.mutable_binary()->mutable_lhs() = std::move(lhs);
  *e.mutable_binary()->mutable_rhs() = std::move(rhs);
  return e;
}

// A tree of `terms` leaves: a product of sums (s+1)*(s+2)*..., a sum of
// products, or random operators (comparisons included).
pto::v1::DimExpr DeepExpr(Rng& rng, const std::vector<std::string>& symbols) {
  const int terms = 1 + static_cast<int>(Below(rng, 12));
  const std::string s = symbols[Below(rng, symbols.size())];
  pto::v1::DimExpr sym;
  sym.set_symbol(s);
  pto::v1::DimExpr out;
  switch (Below(rng, 3)) {
    case 0:  // (s+1)*(s+2)*...
      for (int k = 1; k <= terms; ++k) {
        pto::v1::DimExpr c;
        c.set_constant(OneIn(rng, 4) ? Extreme(rng) : k);
        pto::v1::DimExpr f = Binary(pto::v1::DIM_OP_ADD, sym, c);
        out = k == 1 ? f : Binary(pto::v1::DIM_OP_MUL, out, f);
      }
      return out;
    case 1:  // s*c1 + s*s*c2 + ...
      for (int k = 1; k <= terms; ++k) {
        pto::v1::DimExpr c;
        c.set_constant(Extreme(rng));
        pto::v1::DimExpr f = Binary(pto::v1::DIM_OP_MUL, sym, c);
        out = k == 1 ? f : Binary(pto::v1::DIM_OP_ADD, out, Binary(pto::v1::DIM_OP_MUL, f, sym));
      }
      return out;
    default:
      out = Leaf(rng, symbols);
      for (int k = 1; k < terms; ++k) {
        const auto op = static_cast<pto::v1::DimOp>(1 + Below(rng, 15));
        out = OneIn(rng, 2) ? Binary(op, out, Leaf(rng, symbols))
                            : Binary(op, Leaf(rng, symbols), out);
      }
      return out;
  }
}

void MutateDim(Rng& rng, pto::v1::Dim* d, const std::vector<std::string>& symbols) {
  switch (Below(rng, 4)) {
    case 0: d->set_symbol(symbols[Below(rng, symbols.size())]); break;
    case 1: *d->mutable_expr() = DeepExpr(rng, symbols); break;
    default: d->set_size(Extreme(rng)); break;
  }
}

// Attribute names the ops take (so mutations reach the checks behind them).
const char* const kAttrNames[] = {"dim",   "keepdim", "offsets", "shape", "dims",
                                  "dim0",  "dim1",    "start",   "stop",  "step",
                                  "unroll", "index",  "cond",    "scalar", "value",
                                  "dtype", "out_dtype", "a_trans", "b_trans", "min",
                                  "max"};

void MutateAttr(Rng& rng, pto::v1::Op* op, const std::vector<std::string>& symbols) {
  auto* attrs = op->mutable_attrs();
  std::string name;
  if (!attrs->empty() && !OneIn(rng, 4)) {
    auto it = attrs->begin();
    std::advance(it, Below(rng, attrs->size()));
    name = it->first;
  } else {
    name = kAttrNames[Below(rng, sizeof(kAttrNames) / sizeof(kAttrNames[0]))];
  }
  pto::v1::Attribute& a = (*attrs)[name];
  switch (a.value_case() == pto::v1::Attribute::VALUE_NOT_SET ? Below(rng, 8)
                                                              : Below(rng, 3)) {
    case 0: {  // the same kind of value, extreme
      switch (a.value_case()) {
        case pto::v1::Attribute::kInts:
          if (a.ints().values_size() > 0 && !OneIn(rng, 4)) {
            a.mutable_ints()->set_values(
                static_cast<int>(Below(rng, a.ints().values_size())), Extreme(rng));
          } else {
            a.mutable_ints()->add_values(Extreme(rng));
          }
          break;
        case pto::v1::Attribute::kExprs:
          if (a.exprs().values_size() > 0) {
            *a.mutable_exprs()->mutable_values(
                static_cast<int>(Below(rng, a.exprs().values_size()))) =
                DeepExpr(rng, symbols);
          }
          break;
        case pto::v1::Attribute::kExpr: *a.mutable_expr() = DeepExpr(rng, symbols); break;
        case pto::v1::Attribute::kF: a.set_f(static_cast<double>(Extreme(rng))); break;
        case pto::v1::Attribute::kDtype:
          a.set_dtype(static_cast<pto::v1::DataType>(Below(rng, 12)));
          break;
        case pto::v1::Attribute::kB: a.set_b(!a.b()); break;
        case pto::v1::Attribute::kS:
          a.set_s(OneIn(rng, 2) ? symbols[Below(rng, symbols.size())] : "");
          break;
        default: a.set_i(Extreme(rng)); break;
      }
      break;
    }
    case 1: a.set_i(Extreme(rng)); break;
    case 2: *a.mutable_expr() = DeepExpr(rng, symbols); break;
    case 3: {
      pto::v1::IntList* l = a.mutable_ints();
      l->Clear();
      const int n = static_cast<int>(Below(rng, 6));
      for (int k = 0; k < n; ++k) l->add_values(Extreme(rng));
      break;
    }
    case 4: {
      pto::v1::DimExprList* l = a.mutable_exprs();
      l->Clear();
      const int n = static_cast<int>(Below(rng, 5));
      for (int k = 0; k < n; ++k) *l->add_values() = DeepExpr(rng, symbols);
      break;
    }
    case 5: a.set_f(OneIn(rng, 2) ? static_cast<double>(Extreme(rng))
                                  : std::numeric_limits<double>::infinity());
      break;
    case 6: a.set_dtype(static_cast<pto::v1::DataType>(Below(rng, 12))); break;
    default: a.set_b(OneIn(rng, 2)); break;
  }
}

void MutateTile(Rng& rng, pto::v1::Op* op) {
  auto* dims = op->mutable_vec_tile()->mutable_dims();
  switch (Below(rng, 6)) {
    case 0: dims->Add(Extreme(rng)); break;
    case 1: if (!dims->empty()) dims->RemoveLast(); break;
    case 2:  // a huge tile count: every dim 1
      for (int64_t& d : *dims) d = 1;
      break;
    default:
      if (!dims->empty()) dims->Set(static_cast<int>(Below(rng, dims->size())), Extreme(rng));
      break;
  }
}

void MutateCubeTile(Rng& rng, pto::v1::Op* op) {
  pto::v1::CubeTileShape* t = op->mutable_cube_tile();
  google::protobuf::RepeatedField<int64_t>* dims[3] = {t->mutable_m(), t->mutable_k(),
                                                       t->mutable_n()};
  auto* d = dims[Below(rng, 3)];
  if (d->empty() || OneIn(rng, 5)) {
    d->Add(Extreme(rng));
  } else {
    d->Set(static_cast<int>(Below(rng, d->size())), Extreme(rng));
  }
}

// Symbols named in `e`.
void ExprSymbols(const pto::v1::DimExpr& e, std::vector<std::string>* out, int depth) {
  if (depth > 64) return;
  if (e.has_symbol()) out->push_back(e.symbol());
  if (e.has_binary()) {
    ExprSymbols(e.binary().lhs(), out, depth + 1);
    ExprSymbols(e.binary().rhs(), out, depth + 1);
  }
}

// Replaces a dim everywhere it occurs (so the graph's types stay consistent)
// by an extreme size or a deep expression, and binds the expression's
// symbols with a new IN parameter of shape [s] each.
void ReplaceDimEverywhere(Rng& rng, pto::v1::Graph* g, const std::vector<std::string>& symbols) {
  std::vector<pto::v1::Dim*> dims;
  for (pto::v1::Value& v : *g->mutable_values()) {
    for (pto::v1::Dim& d : *v.mutable_shape()->mutable_dims()) dims.push_back(&d);
  }
  if (dims.empty()) return;
  const std::string old = dims[Below(rng, dims.size())]->SerializeAsString();
  pto::v1::Dim replacement;
  if (OneIn(rng, 2)) {
    replacement.set_size(Extreme(rng));
  } else {
    *replacement.mutable_expr() = DeepExpr(rng, symbols);
  }
  for (pto::v1::Dim* d : dims) {
    if (d->SerializeAsString() == old) *d = replacement;
  }
  std::vector<std::string> used;
  if (replacement.has_expr()) ExprSymbols(replacement.expr(), &used, 0);
  uint32_t next_id = 1;
  for (const pto::v1::Value& v : g->values()) next_id = std::max(next_id, v.id() + 1);
  for (const std::string& name : used) {
    pto::v1::Value* v = g->add_values();
    v->set_id(next_id);
    v->set_dtype(pto::v1::DT_FP32);
    v->mutable_shape()->add_dims()->set_symbol(name);
    pto::v1::Parameter* p = g->add_params();
    p->set_name("bind_" + name);
    p->set_role(pto::v1::PARAM_ROLE_IN);
    p->set_value_id(next_id++);
  }
}

// One structural mutation of `req`.
void MutateOnce(Rng& rng, pto::v1::CompileRequest* req) {
  pto::v1::Graph* g = req->mutable_graph();
  std::vector<pto::v1::Op*> ops;
  CollectOps(g->mutable_ops(), &ops);
  const std::vector<std::string> symbols = Symbols(*req);
  pto::v1::Op* op = ops.empty() ? nullptr : ops[Below(rng, ops.size())];
  switch (Below(rng, 18)) {
    case 15:
    case 16:
      ReplaceDimEverywhere(rng, g, symbols);
      return;
    case 0:
    case 1: {  // a shape dim
      if (g->values_size() == 0) return;
      pto::v1::Value* v = g->mutable_values(static_cast<int>(Below(rng, g->values_size())));
      auto* dims = v->mutable_shape()->mutable_dims();
      if (dims->empty() || OneIn(rng, 8)) {
        MutateDim(rng, v->mutable_shape()->add_dims(), symbols);
      } else {
        MutateDim(rng, v->mutable_shape()->mutable_dims(static_cast<int>(Below(rng, dims->size()))),
                  symbols);
      }
      return;
    }
    case 2:
    case 3:
      if (op) MutateTile(rng, op);
      return;
    case 4:
      if (op) MutateCubeTile(rng, op);
      return;
    case 5:
    case 6:
      if (op) MutateAttr(rng, op, symbols);
      return;
    case 7: {  // deepen or perturb an expression anywhere
      std::vector<pto::v1::DimExpr*> exprs;
      for (pto::v1::Value& v : *g->mutable_values()) {
        for (pto::v1::Dim& d : *v.mutable_shape()->mutable_dims()) {
          if (d.has_expr()) CollectExprs(d.mutable_expr(), &exprs, 0);
        }
      }
      for (pto::v1::Op* o : ops) {
        for (auto& [name, a] : *o->mutable_attrs()) {
          if (a.has_expr()) CollectExprs(a.mutable_expr(), &exprs, 0);
          if (a.has_exprs()) {
            for (pto::v1::DimExpr& e : *a.mutable_exprs()->mutable_values()) {
              CollectExprs(&e, &exprs, 0);
            }
          }
        }
      }
      if (exprs.empty()) return;
      pto::v1::DimExpr* e = exprs[Below(rng, exprs.size())];
      if (OneIn(rng, 2)) {
        *e = DeepExpr(rng, symbols);
      } else if (e->has_constant()) {
        e->set_constant(Extreme(rng));
      } else {
        pto::v1::DimExpr c;
        c.set_constant(Extreme(rng));
        *e = Binary(static_cast<pto::v1::DimOp>(1 + Below(rng, 7)), *e, c);
      }
      return;
    }
    case 8: {  // the op kind
      if (!op) return;
      const std::vector<OpInfo>& all = AllOps();
      op->set_kind(all[Below(rng, all.size())].kind);
      return;
    }
    case 9: {  // inputs: swap, retarget, add, drop
      if (!op || g->values_size() == 0) return;
      auto* in = op->mutable_inputs();
      const uint32_t some = g->values(static_cast<int>(Below(rng, g->values_size()))).id();
      switch (Below(rng, 4)) {
        case 0:
          if (in->size() >= 2) in->SwapElements(0, in->size() - 1);
          break;
        case 1:
          if (!in->empty()) in->Set(static_cast<int>(Below(rng, in->size())), some);
          break;
        case 2: in->Add(some); break;
        default: if (!in->empty()) in->RemoveLast(); break;
      }
      return;
    }
    case 10: {  // duplicate, drop or swap ops
      auto* list = g->mutable_ops();
      if (list->empty()) return;
      const int k = static_cast<int>(Below(rng, list->size()));
      switch (Below(rng, 3)) {
        case 0: *list->Add() = list->Get(k); break;
        case 1: list->DeleteSubrange(k, 1); break;
        default: list->SwapElements(k, static_cast<int>(Below(rng, list->size()))); break;
      }
      return;
    }
    case 11: {  // params
      if (g->params_size() == 0) return;
      pto::v1::Parameter* p = g->mutable_params(static_cast<int>(Below(rng, g->params_size())));
      switch (Below(rng, 3)) {
        case 0: p->set_role(static_cast<pto::v1::ParamRole>(Below(rng, 5))); break;
        case 1: p->set_value_id(static_cast<uint32_t>(Extreme(rng))); break;
        default: p->set_result_value_id(static_cast<uint32_t>(Below(rng, 64))); break;
      }
      return;
    }
    case 12: {  // dtype
      if (g->values_size() == 0) return;
      g->mutable_values(static_cast<int>(Below(rng, g->values_size())))
          ->set_dtype(static_cast<pto::v1::DataType>(Below(rng, 12)));
      return;
    }
    case 13: {  // huge tile counts: big static dims, unit tiles
      for (pto::v1::Value& v : *g->mutable_values()) {
        for (pto::v1::Dim& d : *v.mutable_shape()->mutable_dims()) {
          if (d.has_size() && OneIn(rng, 2)) d.set_size(int64_t{1} << (10 + Below(rng, 12)));
        }
      }
      if (op) {
        for (int64_t& d : *op->mutable_vec_tile()->mutable_dims()) d = 1;
      }
      return;
    }
    case 14: {  // loop bounds and view offsets
      for (pto::v1::Op* o : ops) {
        if (o->kind() != "loop" && o->kind() != "view" && o->kind() != "assemble") continue;
        if (!OneIn(rng, 2)) continue;
        const char* names[] = {"start", "stop", "step", "unroll", "offsets", "shape"};
        pto::v1::Attribute& a = (*o->mutable_attrs())[names[Below(rng, 6)]];
        if (a.has_ints() && a.ints().values_size() > 0) {
          a.mutable_ints()->set_values(static_cast<int>(Below(rng, a.ints().values_size())),
                                       Extreme(rng));
        } else if (a.has_exprs() && a.exprs().values_size() > 0) {
          pto::v1::DimExpr* e = a.mutable_exprs()->mutable_values(
              static_cast<int>(Below(rng, a.exprs().values_size())));
          pto::v1::DimExpr c;
          c.set_constant(Extreme(rng));
          *e = Binary(OneIn(rng, 2) ? pto::v1::DIM_OP_ADD : pto::v1::DIM_OP_MUL, *e, c);
        } else {
          a.set_i(Extreme(rng));
        }
      }
      return;
    }
    default: {  // the target and options
      static const char* kTargets[] = {"host", "host-x86_64", "host-x86_64-v3", "cuda",
                                       "", "host-x86_64-v4-amx", "x"};
      static const char* kLevels[] = {"0", "3", "-1", "9999999999999", "", "2x"};
      if (OneIn(rng, 2)) {
        req->set_target(kTargets[Below(rng, 7)]);
      } else {
        (*req->mutable_options())[OneIn(rng, 4) ? "bogus" : "opt_level"] =
            kLevels[Below(rng, 6)];
      }
      return;
    }
  }
}

size_t MutateBytes(Rng& rng, uint8_t* data, size_t size, size_t max_size) {
  const int edits = 1 + static_cast<int>(Below(rng, 4));
  for (int e = 0; e < edits; ++e) {
    switch (Below(rng, 3)) {
      case 0:
        if (size > 0) data[Below(rng, size)] = static_cast<uint8_t>(rng());
        break;
      case 1:
        if (size < max_size) {
          const size_t at = Below(rng, size + 1);
          std::memmove(data + at + 1, data + at, size - at);
          data[at] = static_cast<uint8_t>(rng());
          ++size;
        }
        break;
      default:
        if (size > 1) {
          const size_t at = Below(rng, size);
          std::memmove(data + at, data + at + 1, size - at - 1);
          --size;
        }
        break;
    }
  }
  return size;
}

}  // namespace

size_t MutateRequest(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  Rng rng(seed);
  pto::v1::CompileRequest req;
  if (size == 0 || !req.ParseFromArray(data, static_cast<int>(size)) || OneIn(rng, 16)) {
    return MutateBytes(rng, data, size, max_size);
  }
  const int rounds = 1 + static_cast<int>(Below(rng, 3));
  for (int r = 0; r < rounds; ++r) MutateOnce(rng, &req);
  std::string out;
  if (!req.SerializeToString(&out) || out.size() > max_size) {
    return MutateBytes(rng, data, size, max_size);
  }
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace pto::compiler::fuzz
