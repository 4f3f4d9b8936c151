// The on-chip buffers a target's code may use: the model of an AI core that
// bounds tile shapes.
//
//   absl::StatusOr<MemoryModel> m = TargetMemoryModel("host-x86_64-v3");
//   // m->ub_bytes == 192 KiB: every block's UB tiles fit in it
//
// The host targets model an Ascend AI core's buffers
//   UB   192 KiB  a vector block's tiles (ExpandToTiles: a fused group's
//                 peak UB use; 8 bytes a value for INT32/INT64/DOUBLE
//                 tiles, 4 for the rest, which the host stores as f32)
//   L1   512 KiB  a cube task's A [mL1 x kL1] and B [kL1 x nL1] blocks
//   L0A   64 KiB  A's [mL0 x kL0] step, f32
//   L0B   64 KiB  B's [kL0 x nL0] step, f32
//   L0C  128 KiB  the [mL0 x nL0] f32 accumulator
// so a tile shape accepted on the host fits the device it stands in for. A
// tile whose buffers do not fit is INVALID_ARGUMENT naming the op, the tile
// shape, the buffer and both sizes (lower/fuse_groups.cc,
// lower/expand_reduction.cc, lower/expand_matmul.cc).
//
// Every target has an entry in one table (memory_model.cc). The lowering
// reads it, so an entry is part of what the compiler does for a target:
// changing one changes code, and the compiler fingerprint
// (key/fingerprint.cc) must be bumped with it; the target name is already
// in every cache key, so targets with different models never share one.
#ifndef PTO_COMPILER_TARGETS_MEMORY_MODEL_H_
#define PTO_COMPILER_TARGETS_MEMORY_MODEL_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace pto::compiler {

struct MemoryModel {
  int64_t ub_bytes = 0;   // unified buffer: one vector block's tiles
  int64_t l1_bytes = 0;   // cube: A and B blocks of one K step
  int64_t l0a_bytes = 0;  // cube: A's L0 step (f32)
  int64_t l0b_bytes = 0;  // cube: B's L0 step (f32)
  int64_t l0c_bytes = 0;  // cube: the f32 accumulator
};

// An AI core's buffers, the model of every host target.
inline constexpr MemoryModel kAiCoreMemoryModel = {
    192 * 1024, 512 * 1024, 64 * 1024, 64 * 1024, 128 * 1024};

// The model of `resolved`, a name ResolveTarget returned; INVALID_ARGUMENT
// naming it when no target of that name has one.
absl::StatusOr<MemoryModel> TargetMemoryModel(const std::string& resolved);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_TARGETS_MEMORY_MODEL_H_
