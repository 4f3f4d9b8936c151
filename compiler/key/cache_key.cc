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

void EncodeAttr(const AttrValue& value, Encoder* e) {
  e->U64(value.index());
  std::visit(
      [e](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) e->I64(v);
        else if constexpr (std::is_same_v<T, double>) e->F64(v);
        else if constexpr (std::is_same_v<T, std::string>) e->Str(v);
        else if constexpr (std::is_same_v<T, bool>) e->U64(v ? 1 : 0);
        else if constexpr (std::is_same_v<T, pto::v1::DataType>) e->I64(v);
        else e->Ints(v);
      },
      value);
}

// Symbol -> "s<k>" by first appearance.
std::map<std::string, std::string> CanonicalSymbolNames(const TensorGraph& g) {
  std::map<std::string, std::string> names;
  for (const TensorValue& v : g.values) {
    for (const SymExpr& d : v.sym_shape) {
      // Symbols() is sorted; order of appearance within one dim follows the
      // canonical form's text, which is what a reader sees first.
      for (const std::string& s : d.Symbols()) {
        if (names.count(s) == 0) {
          names.emplace(s, "s" + std::to_string(names.size()));
        }
      }
    }
  }
  return names;
}

void EncodeGraph(const TensorGraph& g, Encoder* e) {
  const std::map<std::string, std::string> names =
      g.HasSymbolicDims() ? CanonicalSymbolNames(g)
                          : std::map<std::string, std::string>();
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
  e->U64(g.ops.size());
  for (const TensorOp& op : g.ops) {
    e->Str(op.info->kind);
    e->IntList(op.inputs);
    e->IntList(op.outputs);
    e->U64(op.attrs.size());
    for (const auto& [name, value] : op.attrs) {  // std::map: sorted
      e->Str(name);
      EncodeAttr(value, e);
    }
    e->Ints(op.vec_tile);
    // Only cube ops have one (keys of other graphs stay as they were).
    if (!op.cube_tile.empty()) e->Ints(op.cube_tile);
  }
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
