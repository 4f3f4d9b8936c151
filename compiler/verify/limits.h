// Bounds on untrusted graphs. Graphs come from the network: everything that
// could make the compiler allocate or loop without limit is capped here.
#ifndef PTO_COMPILER_VERIFY_LIMITS_H_
#define PTO_COMPILER_VERIFY_LIMITS_H_

#include <cstdint>

namespace pto::compiler {

inline constexpr int kMaxOps = 4096;  // all ops, those in regions included
// Regions nested in regions (a loop in a loop: 2).
inline constexpr int kMaxRegionDepth = 8;
inline constexpr int kMaxValues = 65536;
inline constexpr int kMaxParams = 256;
inline constexpr int kMaxRankBound = 8;            // any shape, any issue
inline constexpr int kMinSupportedRank = 0;        // rank 0: one element
inline constexpr int kMaxSupportedRank = 4;
inline constexpr int64_t kMaxElements = int64_t{1} << 40;  // per tensor
inline constexpr int64_t kMaxTilesPerOp = int64_t{1} << 20;
inline constexpr int64_t kMaxTilesPerGraph = int64_t{1} << 20;
inline constexpr int kMaxNameLength = 256;
inline constexpr int kMaxAttrsPerOp = 64;
// Block functions one kernel may have (each is native code to compile; a
// group has one per combination of tail dims).
inline constexpr int kMaxBlockFunctions = 4096;
// Total dependency edges an Execute Graph may have (mismatched tilings of
// the same tensor multiply edges).
inline constexpr int64_t kMaxDependencies = int64_t{1} << 24;

}  // namespace pto::compiler

#endif  // PTO_COMPILER_VERIFY_LIMITS_H_
