#include "compiler/key/cache_key.h"

#include <cstring>
#include <map>
#include <string>
#include <type_traits>

#include "runtime/sha256.h"

namespace pto::compiler {
namespace {

// Appends fixed-width little-endian integers and length-prefixed strings, each
// after a one-byte tag, so no two different inputs share an encoding.
class Encoder {
 public:
  void Tag(char t) { out_.push_back(t); }
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void F64(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    U64(bits);
  }
  void Str(const std::string& s) {
    U64(s.size());
    out_.append(s);
  }
  void Ints(const std::vector<int64_t>& v) {
    U64(v.size());
    for (int64_t x : v) I64(x);
  }
  void IntList(const std::vector<int>& v) {
    U64(v.size());
    for (int x : v) I64(x);
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

using Names = std::map<std::string, std::string>;

void EncodeAttr(const AttrValue& value, const Names& names, Encoder* e) {
  e->U64(value.index());
  std::visit(
      [e, &names](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) e->I64(v);
        else if constexpr (std::is_same_v<T, double>) e->F64(v);
        else if constexpr (std::is_same_v<T, std::string>) e->Str(v);
        else if constexpr (std::is_same_v<T, bool>) e->U64(v ? 1 : 0);
        else if constexpr (std::is_same_v<T, pto::v1::DataType>) e->I64(v);
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>) e->Ints(v);
        else if constexpr (std::is_same_v<T, SymExpr>) e->Str(v.Rename(names).ToString());
        else if constexpr (std::is_same_v<T, CondExpr>) e->Str(v.Rename(names).ToString());
        else {  // std::vector<SymExpr>
          e->U64(v.size());
          for (const SymExpr& x : v) e->Str(x.Rename(names).ToString());
        }
      },
      value);
}

void AddName(const std::string& s, Names* names) {
  if (names->count(s) == 0) names->emplace(s, "s" + std::to_string(names->size()));
}

void AddIndexNames(const std::vector<TensorOp>& ops, Names* names) {
  for (const TensorOp& op : ops) {
    if (auto it = op.attrs.find("index");
        op.info->kind == "loop" && it != op.attrs.end()) {
      AddName(std::get<std::string>(it->second), names);
    }
    for (const TensorRegion& r : op.regions) AddIndexNames(r.ops, names);
  }
}

// Symbol -> "s<k>" by first appearance: in value dims, then loop indices in
// program order (so two graphs that differ only in the names of their
// symbols or loop indices share a key).
Names CanonicalSymbolNames(const TensorGraph& g) {
  Names names;
  for (const TensorValue& v : g.values) {
    for (const SymExpr& d : v.sym_shape) {
      // Symbols() is sorted; order of appearance within one dim follows the
      // canonical form's text, which is what a reader sees first.
      for (const std::string& s : d.Symbols()) AddName(s, &names);
    }
  }
  AddIndexNames(g.ops, &names);
  return names;
}

void EncodeOps(const std::vector<TensorOp>& ops, const Names& names, Encoder* e) {
  e->U64(ops.size());
  for (const TensorOp& op : ops) {
    e->Str(op.info->kind);
    e->IntList(op.inputs);
    e->IntList(op.outputs);
    e->U64(op.attrs.size());
    for (const auto& [name, value] : op.attrs) {  // std::map: sorted
      e->Str(name);
      if (op.info->kind == "loop" && name == "index") {
        EncodeAttr(AttrValue(names.at(std::get<std::string>(value))), names, e);
      } else {
        EncodeAttr(value, names, e);
      }
    }
    e->Ints(op.vec_tile);
    // Only cube ops have one (keys of other graphs stay as they were).
    if (!op.cube_tile.empty()) e->Ints(op.cube_tile);
    // Only control ops have regions (likewise).
    if (!op.regions.empty()) {
      e->Tag('R');
      e->U64(op.regions.size());
      for (const TensorRegion& r : op.regions) {
        e->IntList(r.args);
        EncodeOps(r.ops, names, e);
        e->IntList(r.results);
      }
    }
  }
}

void EncodeGraph(const TensorGraph& g, Encoder* e) {
  const Names names = g.HasSymbolicDims() || g.HasRegions()
                          ? CanonicalSymbolNames(g)
                          : Names();
  e->Tag('V');
  e->U64(g.values.size());
  for (const TensorValue& v : g.values) {
    e->I64(v.dtype);
    e->U64(v.shape.size());
    for (size_t d = 0; d < v.shape.size(); ++d) {
      e->I64(v.shape[d]);
      if (v.shape[d] == kSymbolicDim) e->Str(v.sym_shape[d].Rename(names).ToString());
    }
  }
  e->Tag('P');
  e->U64(g.params.size());
  for (const TensorParam& p : g.params) {
    e->I64(p.role);
    e->I64(p.in_value);
    e->I64(p.out_value);
  }
  e->Tag('O');
  EncodeOps(g.ops, names, e);
}

}  // namespace

std::string CanonicalGraphBytes(const TensorGraph& graph) {
  Encoder e;
  EncodeGraph(graph, &e);
  return std::move(e.bytes());
}

std::string ComputeCacheKey(const TensorGraph& graph, const std::string& target,
                            const CompileOptions& options,
                            const std::string& fingerprint) {
  Encoder e;
  e.Tag('K');
  e.U64(kKeySchemaVersion);
  e.Tag('T');
  e.Str(target);
  e.Tag('o');
  e.U64(options.size());
  for (const auto& [name, value] : options) {  // std::map: sorted
    e.Str(name);
    e.Str(value);
  }
  e.Tag('F');
  e.Str(fingerprint);
  EncodeGraph(graph, &e);
  return runtime::ToHex(runtime::Sha256(e.bytes()));
}

}  // namespace pto::compiler
