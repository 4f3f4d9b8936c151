// Whether two payloads of the same 2-D kernel give the same bits: runs every
// tile of A and of B on the same inputs and compares the last buffer (the
// output) bit for bit, NaN payloads included. Inputs are uniform in [-6, 6)
// with special rows: a NaN at the start of row 1 and at the end of row 2, -inf
// and inf in rows 3 and 4, row 5 all -inf, row 6 signed zeros, row 7 all
// 1e30 (ROWS >= 8). Every buffer holds ROWS x COLS floats (a [COLS] operand
// such as gamma reads the first row's worth).
//
//   g++ -O1 -std=c++17 -o /tmp/block_bitcmp bench/block_bitcmp.cc -ldl
//   /tmp/block_bitcmp before.so after.so ROWS COLS TILE_ROWS BUFFERS
//
// Prints "N of M differ (K NaN)"; exits 1 if any value differs.
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

using BlockFn = void (*)(void* const*, const int64_t*);

BlockFn Load(const char* path) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "block_bitcmp: %s\n", dlerror());
    std::exit(2);
  }
  auto block_at = reinterpret_cast<BlockFn (*)(int)>(dlsym(lib, "pto_block"));
  if (block_at == nullptr || block_at(0) == nullptr) {
    std::fprintf(stderr, "block_bitcmp: no pto_block(0) in %s\n", path);
    std::exit(2);
  }
  return block_at(0);
}

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: block_bitcmp A.so B.so ROWS COLS TILE_ROWS BUFFERS\n");
    return 2;
  }
  const int64_t rows = std::atoll(argv[3]), cols = std::atoll(argv[4]);
  const int64_t tile_rows = std::atoll(argv[5]);
  const int nbuf = std::atoi(argv[6]);
  if (rows < 8 || cols < 1 || tile_rows < 1 || rows % tile_rows || nbuf < 2) {
    std::fprintf(stderr, "block_bitcmp: bad sizes\n");
    return 2;
  }
  const BlockFn fn[2] = {Load(argv[1]), Load(argv[2])};
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-6.0f, 6.0f);
  std::vector<std::vector<float>> buffers(nbuf, std::vector<float>(rows * cols));
  for (int b = 0; b + 1 < nbuf; ++b) {
    for (float& x : buffers[b]) x = u(rng);
  }
  float* x = buffers[0].data();
  x[1 * cols] = NAN;
  x[2 * cols + cols - 1] = NAN;
  x[3 * cols + cols / 2] = -INFINITY;
  x[4 * cols + cols / 3] = INFINITY;
  for (int64_t k = 0; k < cols; ++k) {
    x[5 * cols + k] = -INFINITY;
    x[6 * cols + k] = k % 3 ? 0.0f : -0.0f;
    x[7 * cols + k] = 1e30f;
  }
  std::vector<float> out[2];
  for (int v = 0; v < 2; ++v) {
    std::vector<void*> ptrs;
    for (std::vector<float>& b : buffers) ptrs.push_back(b.data());
    std::fill(buffers[nbuf - 1].begin(), buffers[nbuf - 1].end(), 12345.0f);
    for (int64_t i = 0; i < rows; i += tile_rows) {
      const int64_t args[2] = {i, 0};
      fn[v](ptrs.data(), args);
    }
    out[v] = buffers[nbuf - 1];
  }
  int64_t differ = 0, nan = 0;
  for (int64_t k = 0; k < rows * cols; ++k) {
    if (std::memcmp(&out[0][k], &out[1][k], sizeof(float)) != 0) {
      if (differ < 5) std::printf("at %lld: %a vs %a\n", static_cast<long long>(k), out[0][k], out[1][k]);
      ++differ;
    }
    nan += std::isnan(out[0][k]);
  }
  std::printf("%lld of %lld differ (%lld NaN)\n", static_cast<long long>(differ),
              static_cast<long long>(rows * cols), static_cast<long long>(nan));
  return differ != 0;
}
