// The cache key: SHA-256 over a canonical byte encoding of what determines a
// kernel binary.
//
// The encoding is written here field by field (never proto serialization,
// whose byte order is not a contract): the key-schema version, the resolved
// target, the options with defaults filled in (sorted by name), the compiler
// fingerprint, then the Tensor Graph as imported: value ids are already
// canonical (topological order), names are left out, attributes are sorted,
// tile shapes are included.
//
// Symbolic dims: symbol values never enter the key (one binary serves every
// size). Symbol names do not either: symbols are renamed s0, s1, ... in order
// of first appearance (values in canonical order, dims outermost first) and
// each symbolic dim is encoded as -1 followed by its canonical expression
// text, so two graphs that differ only in symbol names share a key (and a
// binary, whose parameter shapes name the symbols of the first compile, as
// its parameter names already are). Static dims are positive, so -1 cannot
// be confused with one, and static graphs encode exactly as before.
#ifndef PTO_COMPILER_KEY_CACHE_KEY_H_
#define PTO_COMPILER_KEY_CACHE_KEY_H_

#include <cstdint>
#include <string>

#include "compiler/ir/tensor_graph.h"
#include "compiler/options.h"

namespace pto::compiler {

// Bumped whenever the encoding below changes meaning.
inline constexpr uint32_t kKeySchemaVersion = 1;

// The canonical bytes of the graph alone (exposed for tests).
std::string CanonicalGraphBytes(const TensorGraph& graph);

// Lowercase hex SHA-256 of the full canonical encoding. `options` must be
// canonical (CanonicalOptions) and `target` resolved.
std::string ComputeCacheKey(const TensorGraph& graph, const std::string& target,
                            const CompileOptions& options,
                            const std::string& fingerprint);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_KEY_CACHE_KEY_H_
