// Times the block function of a generated kernel payload on one thread, with
// no runtime around it: every tile of a 1-D or 2-D elementwise kernel, in
// order, repeatedly. bench/codegen_probe.py uses it to compare the generated
// C++ with hand-edited variants.
//
//   block_harness PAYLOAD.so ROWS COLS TILE_ROWS TILE_COLS ELEM_BYTES BUFFERS REPS
//
// ROWS = 1 means a 1-D kernel (the block's args are {col}); otherwise the args
// are {row, col}. Inputs are filled with values in [0.5, 1.5) of the element
// type (f32 or f16 by ELEM_BYTES), so transcendentals take their usual path.
// Prints "min_ms median_ms".
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using BlockFn = void (*)(void* const*, const int64_t*);

int main(int argc, char** argv) {
  if (argc != 9) {
    std::fprintf(stderr,
                 "usage: block_harness PAYLOAD.so ROWS COLS TILE_ROWS TILE_COLS "
                 "ELEM_BYTES BUFFERS REPS\n");
    return 2;
  }
  const int64_t rows = std::atoll(argv[2]), cols = std::atoll(argv[3]);
  const int64_t tile_rows = std::atoll(argv[4]), tile_cols = std::atoll(argv[5]);
  const int elem = std::atoi(argv[6]), nbuf = std::atoi(argv[7]);
  const int reps = std::atoi(argv[8]);
  if (rows < 1 || cols < 1 || tile_rows < 1 || tile_cols < 1 ||
      rows % tile_rows || cols % tile_cols || (elem != 2 && elem != 4) ||
      nbuf < 1 || reps < 1) {
    std::fprintf(stderr, "block_harness: bad sizes\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "block_harness: %s\n", dlerror());
    return 1;
  }
  auto block_at = reinterpret_cast<BlockFn (*)(int)>(dlsym(lib, "pto_block"));
  if (block_at == nullptr || block_at(0) == nullptr) {
    std::fprintf(stderr, "block_harness: no pto_block(0) in %s\n", argv[1]);
    return 1;
  }
  const BlockFn block = block_at(0);
  const int64_t n = rows * cols;
  std::vector<void*> buffers(nbuf);
  for (void*& b : buffers) {
    b = std::aligned_alloc(64, ((n * elem + 63) / 64) * 64);
    for (int64_t i = 0; i < n; ++i) {
      const float v = 0.5f + static_cast<float>(i % 1000) / 1000.0f;
      if (elem == 4) {
        static_cast<float*>(b)[i] = v;
      } else {  // f16 of v in [0.5, 1.5): exponent 14 or 15, 10-bit mantissa
        uint32_t w;
        std::memcpy(&w, &v, 4);
        const uint16_t h = static_cast<uint16_t>(
            ((((w >> 23) & 0xFF) - 127 + 15) << 10) | ((w >> 13) & 0x3FF));
        static_cast<uint16_t*>(b)[i] = h;
      }
    }
  }
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < rows; i += tile_rows) {
      for (int64_t j = 0; j < cols; j += tile_cols) {
        const int64_t args2[2] = {i, j};
        const int64_t args1[1] = {j};
        block(buffers.data(), rows == 1 ? args1 : args2);
      }
    }
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%.3f %.3f\n", ms[0], ms[ms.size() / 2]);
  return 0;
}
