// libmvec's 16-lane AVX-512 float functions (_ZGVeN16v_*, what pto_tile.h's
// MvecMap calls in kernels built for x86-64-v4) against the 8-lane AVX2 ones
// (_ZGVdN8v_*, v3): the largest error of each in ulp against glibc's double
// function over every 509th float plus NaN/+-inf/+-0/subnormals, the share
// of inputs whose bits differ between the two, special-value mismatches, and
// ns per value on one thread (8192 values in [0.1, 3], best of 20).
//
//   bazel build //bench:mvec_lanes && bazel-bin/bench/mvec_lanes
//   (or: g++ -O2 -std=c++17 -march=x86-64-v4 -o /tmp/mvec_lanes bench/mvec_lanes.cc -lmvec -lm)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <vector>
typedef float F8 __attribute__((vector_size(32)));
typedef float F16 __attribute__((vector_size(64)));
#define DECL(f) extern "C" F8 _ZGVdN8v_##f(F8); extern "C" F16 _ZGVeN16v_##f(F16);
DECL(exp2f) DECL(expm1f) DECL(logf) DECL(log2f) DECL(log10f) DECL(log1pf) DECL(tanhf) DECL(sinf) DECL(cosf) DECL(erff) DECL(erfcf)
static double ulp(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : 1e9;
  if (std::isinf(want) || std::isinf(got)) return (float)want == got ? 0 : 1e9;
  int e; std::frexp(want, &e); double u = std::ldexp(1.0, std::max(e - 24, -149));
  return std::fabs(got - want) / u;
}
template <class R>
void run(const char* name, F8 (*f8)(F8), F16 (*f16)(F16), R ref) {
  double w8 = 0, w16 = 0; long diff = 0, spec = 0;
  std::vector<float> x;
  for (uint64_t b = 0; b < (1ull << 32); b += 509) { uint32_t u = b; float f; memcpy(&f, &u, 4); x.push_back(f); }
  for (float s : {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-45f, -1e-45f, 1.0f, -1.0f}) x.push_back(s);
  while (x.size() % 16) x.push_back(0.5f);
  std::vector<float> a(x.size()), b(x.size());
  for (size_t i = 0; i < x.size(); i += 16) {
    F16 v; memcpy(&v, &x[i], 64); F16 r = f16(v); memcpy(&b[i], &r, 64);
    F8 v0, v1; memcpy(&v0, &x[i], 32); memcpy(&v1, &x[i + 8], 32);
    F8 r0 = f8(v0), r1 = f8(v1); memcpy(&a[i], &r0, 32); memcpy(&a[i + 8], &r1, 32);
  }
  for (size_t i = 0; i < x.size(); ++i) {
    double want = ref((double)x[i]);
    w8 = std::max(w8, ulp(a[i], want)); w16 = std::max(w16, ulp(b[i], want));
    uint32_t ba, bb; memcpy(&ba, &a[i], 4); memcpy(&bb, &b[i], 4);
    diff += ba != bb;
    bool sp = !std::isfinite(x[i]) || x[i] == 0;
    if (sp && !(ba == bb || (std::isnan(a[i]) && std::isnan(b[i])))) { ++spec; if (spec < 4) printf("  %s special x=%g: 8 %g 16 %g\n", name, x[i], a[i], b[i]); }
  }
  // time on 8192 values in [0.1, 3]
  std::vector<float> t(8192), o(8192);
  for (int i = 0; i < 8192; ++i) t[i] = 0.1f + 2.9f * i / 8192;
  double best8 = 1e9, best16 = 1e9;
  for (int r = 0; r < 20; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 8192; i += 8) { F8 v; memcpy(&v, &t[i], 32); v = f8(v); memcpy(&o[i], &v, 32); }
    auto t1 = std::chrono::steady_clock::now();
    for (int i = 0; i < 8192; i += 16) { F16 v; memcpy(&v, &t[i], 64); v = f16(v); memcpy(&o[i], &v, 64); }
    auto t2 = std::chrono::steady_clock::now();
    best8 = std::min(best8, std::chrono::duration<double, std::nano>(t1 - t0).count() / 8192);
    best16 = std::min(best16, std::chrono::duration<double, std::nano>(t2 - t1).count() / 8192);
  }
  printf("%-7s max ulp 8-lane %.2f 16-lane %.2f; bits differ %.3f%%; special mismatches %ld; ns/value %.3f -> %.3f\n",
         name, w8, w16, 100.0 * diff / x.size(), spec, best8, best16);
}
int main() {
  run("exp2f", _ZGVdN8v_exp2f, _ZGVeN16v_exp2f, [](double v) { return std::exp2(v); });
  run("expm1f", _ZGVdN8v_expm1f, _ZGVeN16v_expm1f, [](double v) { return std::expm1(v); });
  run("logf", _ZGVdN8v_logf, _ZGVeN16v_logf, [](double v) { return std::log(v); });
  run("log2f", _ZGVdN8v_log2f, _ZGVeN16v_log2f, [](double v) { return std::log2(v); });
  run("log10f", _ZGVdN8v_log10f, _ZGVeN16v_log10f, [](double v) { return std::log10(v); });
  run("log1pf", _ZGVdN8v_log1pf, _ZGVeN16v_log1pf, [](double v) { return std::log1p(v); });
  run("tanhf", _ZGVdN8v_tanhf, _ZGVeN16v_tanhf, [](double v) { return std::tanh(v); });
  run("sinf", _ZGVdN8v_sinf, _ZGVeN16v_sinf, [](double v) { return std::sin(v); });
  run("cosf", _ZGVdN8v_cosf, _ZGVeN16v_cosf, [](double v) { return std::cos(v); });
}
