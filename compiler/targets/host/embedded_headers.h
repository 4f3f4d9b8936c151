// Headers that generated host code includes, embedded at build time (see
// the embedded_headers genrule in compiler/BUILD): "pto_tile.h" (tile
// instructions) and the topic headers it includes (pto_tile_*.h),
// "pto_cube.h" (cube instructions: the matmul path), "pto_amx.h" (its BF16
// matmul on AMX tiles, included by pto_cube.h), "pto_cube_img2col.h" (its
// TIMG2COL, included by pto_cube.h) and "kernel_abi.h" (the
// runtime's C ABI). The host target writes them next to each generated
// source; the compiler fingerprint hashes them.
#ifndef PTO_COMPILER_TARGETS_HOST_EMBEDDED_HEADERS_H_
#define PTO_COMPILER_TARGETS_HOST_EMBEDDED_HEADERS_H_

#include <vector>

#include "absl/strings/string_view.h"

namespace pto::compiler {

struct EmbeddedFile {
  const char* name;         // file name the generated code includes
  absl::string_view contents;
};

const std::vector<EmbeddedFile>& EmbeddedHostHeaders();

}  // namespace pto::compiler

#endif  // PTO_COMPILER_TARGETS_HOST_EMBEDDED_HEADERS_H_
