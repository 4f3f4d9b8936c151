// libmvec's vector powf (what pto_tile.h's TPow/TPowS/TRPowS call, 8 lanes
// in x86-64-v3 kernels, 4 in baseline ones) against glibc's scalar powf:
// the largest error of each in ulp against the double pow over 45M pairs
// (random bit patterns, x in [0, 10) with y in [-20, 20), negative x with
// integer y) plus every pair of 29 special values (NaN, +-inf, +-0, +-1,
// subnormals, huge, odd and even integers), how many results differ in bits
// from the scalar one, and how many differ in kind (NaN, inf, zero or the
// sign of a zero); then ns per value on one thread (8192 values, best of 30).
//
//   bazel test //compiler/targets/host/numerics:mvec_pow
//   bazel-bin/compiler/targets/host/numerics/mvec_pow
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#if defined(__AVX2__)
typedef float FV __attribute__((vector_size(32)));
extern "C" FV _ZGVdN8vv_powf(FV, FV);
#define VPOW _ZGVdN8vv_powf
#else
typedef float FV __attribute__((vector_size(16)));
extern "C" FV _ZGVbN4vv_powf(FV, FV);
#define VPOW _ZGVbN4vv_powf
#endif
constexpr int kLanes = sizeof(FV) / sizeof(float);

namespace {

double Ulps(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : 1e9;
  if (std::isinf(want) || std::isinf(got)) return static_cast<float>(want) == got ? 0 : 1e9;
  if (want == 0) return got == 0 && std::signbit(got) == std::signbit(want) ? 0 : 1e9;
  int e;
  std::frexp(want, &e);
  const double ulp = std::ldexp(1.0, std::max(e - 24, -149));
  return std::fabs(got - want) / ulp;
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

bool SameKind(float a, float b) {
  return std::isnan(a) == std::isnan(b) && std::isinf(a) == std::isinf(b) &&
         (a == 0) == (b == 0) && (a != 0 || std::signbit(a) == std::signbit(b));
}

double BestSeconds(void (*f)(const float*, const float*, float*, int), const float* a,
                   const float* b, float* d, int n) {
  double best = 1e9;
  for (int r = 0; r < 30; ++r) {
    const auto t = std::chrono::steady_clock::now();
    f(a, b, d, n);
    asm volatile("" : : "r"(d) : "memory");
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
  }
  return best;
}

void VectorPow(const float* a, const float* b, float* d, int n) {
  for (int i = 0; i + kLanes <= n; i += kLanes) {
    FV x, y;
    std::memcpy(&x, a + i, sizeof x);
    std::memcpy(&y, b + i, sizeof y);
    const FV z = VPOW(x, y);
    std::memcpy(d + i, &z, sizeof z);
  }
}

void ScalarPow(const float* a, const float* b, float* d, int n) {
  for (int i = 0; i < n; ++i) d[i] = powf(a[i], b[i]);
}

}  // namespace

int main() {
  std::mt19937_64 rng(1);
  std::vector<float> xs, ys;
  auto add = [&](float x, float y) { xs.push_back(x); ys.push_back(y); };
  for (int i = 0; i < 20000000; ++i) {
    const uint32_t a = rng(), b = rng();
    float x, y;
    std::memcpy(&x, &a, 4);
    std::memcpy(&y, &b, 4);
    add(x, y);
  }
  std::uniform_real_distribution<float> ux(0, 10), uy(-20, 20);
  for (int i = 0; i < 20000000; ++i) add(ux(rng), uy(rng));
  for (int i = 0; i < 5000000; ++i) add(ux(rng) - 5, std::round(uy(rng)));
  const float special[] = {0.f, -0.f, 1.f, -1.f, INFINITY, -INFINITY, NAN, -NAN, 0.5f, 2.f,
                           -2.f, 3.f, -3.f, 1e-45f, -1e-45f, 1e38f, -1e38f, 2.5f, -2.5f,
                           0.3333333f, 16777216.f, -16777217.f, 1.0000001f, 0.99999994f,
                           127.f, 128.f, -126.f, -149.f, -150.f};
  for (float x : special)
    for (float y : special) add(x, y);
  while (xs.size() % kLanes) add(1, 1);

  double worst_vector = 0, worst_scalar = 0;
  float at_x = 0, at_y = 0;
  long differ = 0, kind = 0;
  for (size_t i = 0; i < xs.size(); i += kLanes) {
    FV x, y;
    std::memcpy(&x, &xs[i], sizeof x);
    std::memcpy(&y, &ys[i], sizeof y);
    const FV r = VPOW(x, y);
    for (int l = 0; l < kLanes; ++l) {
      const float v = r[l], s = powf(xs[i + l], ys[i + l]);
      const double want = std::pow(static_cast<double>(xs[i + l]), static_cast<double>(ys[i + l]));
      const double u = Ulps(v, want);
      if (u > worst_vector) {
        worst_vector = u;
        at_x = xs[i + l];
        at_y = ys[i + l];
      }
      worst_scalar = std::max(worst_scalar, Ulps(s, want));
      if (Bits(v) != Bits(s) && !(std::isnan(v) && std::isnan(s))) ++differ;
      if (!SameKind(v, s)) {
        if (++kind <= 10) std::printf("differs in kind: pow(%g, %g) = %g, scalar %g\n", xs[i + l], ys[i + l], v, s);
      }
    }
  }
  std::printf("%d lanes, %zu pairs: vector within %.3f ulp (worst at pow(%.9g, %.9g)), scalar powf %.3f;\n"
              "%ld results differ in bits from powf's (NaNs aside), %ld in kind\n",
              kLanes, xs.size(), worst_vector, at_x, at_y, worst_scalar, differ, kind);
  std::vector<float> a(8192), b(8192, 2.5f), d(8192);
  for (int i = 0; i < 8192; ++i) a[i] = 0.1f + static_cast<float>(i) * 3e-4f;
  std::printf("ns per value, one thread: vector %.2f, scalar %.2f\n",
              BestSeconds(VectorPow, a.data(), b.data(), d.data(), 8192) / 8192 * 1e9,
              BestSeconds(ScalarPow, a.data(), b.data(), d.data(), 8192) / 8192 * 1e9);
  return kind == 0 ? 0 : 1;
}
