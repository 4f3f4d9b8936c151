// StageTime: how long one stage of the lowering pipeline took.
#ifndef PTO_COMPILER_STAGE_TIME_H_
#define PTO_COMPILER_STAGE_TIME_H_

#include <string>

#include "absl/time/time.h"

namespace pto::compiler {

// Time spent in one stage, in pipeline order.
struct StageTime {
  std::string stage;  // "verify", "import", "tensor_to_tile",
                      // "tile_to_block", "block_to_execute", "codegen",
                      // "native_compile" (PipelineStages(), pipeline.h)
  absl::Duration duration;
};

}  // namespace pto::compiler

#endif  // PTO_COMPILER_STAGE_TIME_H_
