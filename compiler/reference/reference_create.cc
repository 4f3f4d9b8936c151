#include "compiler/reference/reference_create.h"

#include <cmath>

#include "compiler/reference/reference_error.h"
#include "compiler/reference/reference_family.h"

namespace pto::reference {
namespace {

// Word `w` of Philox4x32-10 (Random123's constants) of the 128-bit counter
// (c[0] + j, with carries) under the key (k0, k1), from the generator's
// definition in 64-bit integers.
uint32_t PhiloxWord(const uint64_t c[4], uint64_t j, uint64_t k0, uint64_t k1, int w) {
  constexpr uint64_t kMask = 0xFFFFFFFFu;
  uint64_t x[4];
  uint64_t carry = j;
  for (int i = 0; i < 4; ++i) {
    const uint64_t s = c[i] + (carry & kMask);
    x[i] = s & kMask;
    carry = (carry >> 32) + (s >> 32);
  }
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = x[0] * 0xD2511F53u, p1 = x[2] * 0xCD9E8D57u;
    const uint64_t y[4] = {(p1 >> 32) ^ x[1] ^ k0, p1 & kMask, (p0 >> 32) ^ x[3] ^ k1,
                           p0 & kMask};
    for (int i = 0; i < 4; ++i) x[i] = y[i];
    k0 = (k0 + 0x9E3779B9u) & kMask;
    k1 = (k1 + 0xBB67AE85u) & kMask;
  }
  return static_cast<uint32_t>(x[w]);
}

}  // namespace

absl::Status EvaluateCreation(const pto::v1::Op& op, const std::string& where,
                              RefTensor* out) {
  const std::string& kind = op.kind();
  // Float attributes reach the kernel as floats (full's value as a
  // double for INT32, INT64 and DOUBLE results; arange's start and step
  // always as doubles).
  auto attr = [&](const char* name) {
    auto it = op.attrs().find(name);
    if (it == op.attrs().end()) return 0.0;
    return kind == "arange" || kind == "philox" || kind == "philox_normal" ||
                   WideScalars(out->dtype)
               ? it->second.f()
               : static_cast<double>(static_cast<float>(it->second.f()));
  };
  int64_t n = 1;
  for (int64_t d : out->shape) n *= d;
  out->data.resize(n);
  // philox and philox_normal: the counter and the key of block 0.
  const uint64_t c[4] = {static_cast<uint64_t>(attr("counter0")),
                         static_cast<uint64_t>(attr("counter1")),
                         static_cast<uint64_t>(attr("counter2")),
                         static_cast<uint64_t>(attr("counter3"))};
  const uint64_t k0 = static_cast<uint64_t>(attr("key0"));
  const uint64_t k1 = static_cast<uint64_t>(attr("key1"));
  if (kind == "philox") {  // element e: word e % 4 of the block at counter + e / 4
    for (int64_t e = 0; e < n; ++e) {
      out->data[e] = PhiloxWord(c, static_cast<uint64_t>(e) / 4, k0, k1, static_cast<int>(e % 4));
    }
    out->bound.assign(n, 0.0);
    return absl::OkStatus();
  }
  if (kind == "philox_normal") {  // element e: z(e % 4) of the block at counter + e / 4
    out->bound.resize(n);
    for (int64_t e = 0; e < n; ++e) {
      // Box-Muller of the pair (w0, w1) or (w2, w3): u1 in (0, 1], the
      // angle's f32 product as the instruction rounds it, the rest exact.
      const uint64_t j = static_cast<uint64_t>(e) / 4;
      const int pair = static_cast<int>(e % 4) / 2;
      const uint32_t w0 = PhiloxWord(c, j, k0, k1, 2 * pair);
      const uint32_t w1 = PhiloxWord(c, j, k0, k1, 2 * pair + 1);
      const double u1 = (static_cast<double>(w0 >> 8) + 1) * 0x1p-24;
      const float t = static_cast<float>((w1 >> 8) * 0x1p-24) * static_cast<float>(2 * M_PI);
      const double r = std::sqrt(-2 * std::log(u1));
      const double z = r * (e % 2 == 0 ? std::cos(t) : std::sin(t));
      out->data[e] = RoundToDType(z, out->dtype);
      out->bound[e] = OpError(kind, out->data[e], out->dtype);
    }
    return absl::OkStatus();
  }
  for (int64_t k = 0; k < n; ++k) {
    out->data[k] = kind == "full" ? attr("value")
                                  : attr("start") + attr("step") * static_cast<double>(k);
    out->data[k] = RoundToDType(out->data[k], out->dtype);
  }
  out->bound.resize(n);
  for (int64_t k = 0; k < n; ++k) out->bound[k] = OpError(kind, out->data[k], out->dtype);
  return absl::OkStatus();
}

}  // namespace pto::reference
