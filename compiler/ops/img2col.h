// The im2col geometry of a matmul whose B operand is read from a feature
// map (matmul's attr "img2col"; the TIMG2COL instruction): one fact, read
// by shape inference, the reference evaluator, the lowering and host code.
//
// A feature map x [N, C, H, W] (or [N, C, W]: H = 1) and a matmul a [G, M, K] (G groups of C / G
// channels, K = kh * kw * C / G) give B [N, G, K, OH * OW]:
//
//   B[n, g, k, p] = x[n, g * C/G + c, oh * sh - ph + i * dh, ow * sw - pw + j * dw]
//
// with k = (i * kw + j) * C/G + c (kernel tap (i, j) major, channel minor),
// p = oh * OW + ow, and zero where the row or column falls outside x (the
// padding). OH = (H + 2 ph - dh (kh - 1) - 1) / sh + 1, OW likewise: the
// output of torch's conv2d with that stride, padding and dilation.
#ifndef PTO_COMPILER_OPS_IMG2COL_H_
#define PTO_COMPILER_OPS_IMG2COL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace pto::compiler {

struct Img2Col {
  int64_t kh = 1, kw = 1;  // kernel
  int64_t sh = 1, sw = 1;  // strides
  int64_t ph = 0, pw = 0;  // zero padding before (and up to it after) each dim
  int64_t dh = 1, dw = 1;  // dilations

  // The output's rows and columns over an input of h x w (<= 0: none).
  int64_t OutH(int64_t h) const { return (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  int64_t OutW(int64_t w) const { return (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
  int64_t Taps() const { return kh * kw; }
  // The attr's ints: kh, kw, sh, sw, ph, pw, dh, dw.
  std::vector<int64_t> Ints() const { return {kh, kw, sh, sw, ph, pw, dh, dw}; }
};

// The geometry of attr "img2col" (8 ints: kh, kw, sh, sw, ph, pw, dh, dw),
// checked: kernel, strides and dilations at least 1, paddings at least 0,
// each at most 2^20. INVALID_ARGUMENT naming the attr otherwise.
absl::StatusOr<Img2Col> ParseImg2Col(const std::vector<int64_t>& ints);

// TIMG2COL's operand (TileInstr::img2col): the geometry's 8 ints, then the
// feature map's channels per group, H and W.
inline constexpr int kImg2ColInts = 11;

// "img2col[k=3x3 s=1x1 p=1x1 d=1x1 c=64 hw=32x32]" for TIMG2COL's operand
// (the 8 ints of the attr alone print without c and hw).
std::string Img2ColText(const std::vector<int64_t>& ints);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_OPS_IMG2COL_H_
