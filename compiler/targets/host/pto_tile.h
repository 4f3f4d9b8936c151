// PTO tile instructions for host targets: what generated kernel code calls.
// Generated code includes this header alone; it includes the instructions'
// topic headers, each of which includes the ones it builds on:
//
//   pto_tile_fp8.h          the FP8 storage types and their f32 conversions
//   pto_tile_convert.h      element types, UB storage, conversions, rounding
//   pto_tile_moves.h        loads and stores (GM <-> UB), copies, fills, TCVT
//   pto_tile_mvec.h         glibc's vector math library over runs of values
//   pto_tile_exp.h          pto_tile's own f32 exp and softmax's exp
//   pto_tile_erf.h          pto_tile's own f32 erf and erfc
//   pto_tile_elementwise.h  f32 arithmetic, comparisons, transcendentals
//   pto_tile_int.h          int64 and double arithmetic
//   pto_tile_reduce.h       reductions, argmax/argmin steps
//   pto_tile_rows.h         fused softmax rows, rows of a run-time length
//   pto_tile_index.h        MGATHER, MSCATTER
//   pto_tile_sort.h         MSORT
//   pto_tile_scan.h         TCUMSUM, TCUMPROD, TREDLAST
//   pto_tile_random.h       TPHILOX (Philox4x32-10 words)
//
// These headers are embedded into the compiler (compiler/BUILD's
// embedded_headers genrule) and written next to each generated source file,
// so kernels never depend on the source tree. They are self-contained C++17
// that includes only <stdint.h> and <type_traits> and calls compiler
// builtins instead of <cmath>/<cstring> (they are parsed for every kernel,
// and those headers would dominate a small kernel's compile time).
//
// Layout: a UB tile is a dense row-major array of its extents, of its
// values' storage type (Elem<T>::S: f32 for FP32, FP16, BF16, BOOL, INT8,
// INT16, UINT8; int64 for INT32, INT64; double for DOUBLE). A GM
// buffer is a dense row-major array of its element type; a load or store
// addresses the tile's region through the buffer's strides, with extents
// padded to four dims (leading 1s). Inner loops run over contiguous memory
// with __restrict pointers so the C++ compiler can vectorize them.
#ifndef PTO_TILE_H_
#define PTO_TILE_H_

#include "pto_tile_convert.h"
#include "pto_tile_moves.h"
#include "pto_tile_mvec.h"
#include "pto_tile_exp.h"
#include "pto_tile_erf.h"
#include "pto_tile_elementwise.h"
#include "pto_tile_int.h"
#include "pto_tile_reduce.h"
#include "pto_tile_rows.h"
#include "pto_tile_index.h"
#include "pto_tile_sort.h"
#include "pto_tile_scan.h"
#include "pto_tile_random.h"

#endif  // PTO_TILE_H_
