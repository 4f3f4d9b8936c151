#include "compiler/targets/host/cube_codegen.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ops/img2col.h"
#include "compiler/targets/host/amx_codegen.h"
#include "runtime/host_target.h"

namespace pto::compiler {
namespace {

const char* CubeGmType(pto::v1::DataType dtype) {
  switch (dtype) {
    case pto::v1::DT_FP16: return "pto_tile::half";
    case pto::v1::DT_BF16: return "pto_tile::bf16";
    default: return "float";
  }
}

// The shape a load reads its buffer as (a reshape's view shape, or the
// buffer's own).
const std::vector<int64_t>& ReadShape(const PtoBuffer& buf, const PtoInstr& in) {
  return in.view_shape.empty() ? buf.shape : in.view_shape;
}

std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> stride(shape.size(), 1);
  for (int j = static_cast<int>(shape.size()) - 2; j >= 0; --j) {
    stride[j] = stride[j + 1] * shape[j + 1];
  }
  return stride;
}

// The GM stride of each dim of a buffer of `shape` as code: a constant, or
// (a buffer with a dynamic inner dim, TileInstr::stride_dynamic) the dynamic
// arg args[rank + k] that holds it.
std::vector<std::string> StrideText(const std::vector<int64_t>& shape,
                                    const std::vector<int>& stride_dynamic, int rank) {
  const std::vector<int64_t> stride = Strides(shape);
  std::vector<std::string> text(shape.size());
  for (size_t j = 0; j < shape.size(); ++j) {
    const bool dynamic = j < stride_dynamic.size() && stride_dynamic[j] >= 0;
    text[j] = dynamic ? absl::StrCat("args[", rank + stride_dynamic[j], "]")
                      : absl::StrCat(stride[j]);
  }
  return text;
}

bool AnyDynamic(const std::vector<int>& stride_dynamic) {
  for (int k : stride_dynamic) {
    if (k >= 0) return true;
  }
  return false;
}

// The element offset of a task's region of a buffer of `shape` addressed
// through `index`: its space dims (not K, not broadcast dims) times their
// strides, plus a view's offsets; a loop-dependent offset (GmIndex::dynamic,
// lower_regions.h) is dynamic arg args[rank + dynamic] times its stride.
// Strides held in dynamic args (stride_dynamic) are read from there.
std::string OffsetExpr(const std::vector<int64_t>& shape,
                       const std::vector<GmIndex>& index, int rank,
                       const std::vector<int>& stride_dynamic) {
  const std::vector<int64_t> stride = Strides(shape);
  const std::vector<std::string> text = StrideText(shape, stride_dynamic, rank);
  std::vector<std::string> terms;
  int64_t fixed = 0;
  for (size_t j = 0; j < shape.size(); ++j) {
    const int s = index[j].space_dim;
    const bool dynamic = j < stride_dynamic.size() && stride_dynamic[j] >= 0;
    if (dynamic && index[j].offset != 0) {
      terms.push_back(absl::StrCat(index[j].offset, " * ", text[j]));
    } else if (!dynamic) {
      fixed += index[j].offset * stride[j];
    }
    if (s >= 0 && shape[j] != 1) terms.push_back(absl::StrCat("args[", s, "] * ", text[j]));
    if (index[j].dynamic >= 0) {
      terms.push_back(absl::StrCat("args[", rank + index[j].dynamic, "] * ", text[j]));
    }
  }
  if (fixed != 0) terms.push_back(absl::StrCat(fixed));
  return terms.empty() ? "0" : absl::StrJoin(terms, " + ");
}

// The leading dimension of an operand stored as [rows x cols] (row-major in
// the cube's sense), as code: the stride of the dim indexed by `rows` (a
// space dim, or kGmIndexK); a single row (no such dim) takes the last dim's
// extent. The dim indexed by `cols` must be contiguous (expand_matmul reads
// an operand with contiguous rows transposed instead).
absl::StatusOr<std::string> LeadingDim(const std::vector<int64_t>& shape,
                                       const std::vector<GmIndex>& index,
                                       const std::vector<int>& stride_dynamic, int rank,
                                       int rows, int cols, int fn) {
  const std::vector<int64_t> stride = Strides(shape);
  const std::vector<std::string> text = StrideText(shape, stride_dynamic, rank);
  // The last dim's extent is the stride of the dim before it.
  std::string ld = shape.size() >= 2 ? text[shape.size() - 2] : absl::StrCat(shape.back());
  for (size_t j = 0; j < shape.size(); ++j) {
    if (index[j].space_dim == rows) ld = text[j];
    const bool contiguous = stride[j] == 1 && !(j < stride_dynamic.size() && stride_dynamic[j] >= 0);
    if (index[j].space_dim == cols && shape[j] != 1 && !contiguous) {
      return absl::InternalError(absl::StrCat(
          "cube function @f", fn, ": an operand's columns are strided in GM"));
    }
  }
  return ld;
}

// L1 tiles hold converted (f16/bf16) operands and TIMG2COL's blocks; f32
// operands in GM are read in place (CubeLoadL1 returns a view), so theirs
// is a null pointer. Large
// ones go on the heap: a cube task may run on a calling thread that has
// only Executor::kMinHelperStackBytes (1 MiB) of stack left.
constexpr int64_t kMaxStackL1Bytes = 256 * 1024;

// pto_cube::kSmallM: up to this many rows of A, B is not packed into L0B.
constexpr int64_t kSmallM = 16;
// On the AMX targets, bf16 tiles of more rows than this run on AMX tiles
// (a 16-row tile is one AMX tile high); up to it they stream B.
constexpr int64_t kAmxStreamM = 4;

// pto_cube::kBf16KBlock and Bf16L0BElems / Bf16L0AElems: the uint16 scratch
// of the BF16 dot-product path.
constexpr int64_t kBf16KBlock = 256;
constexpr int64_t kCubeCols = 16;
int64_t EvenKBlock(int64_t k) { return ((k < kBf16KBlock ? k : kBf16KBlock) + 1) / 2 * 2; }
int64_t Bf16L0BElems(int64_t k, int64_t n) {
  return EvenKBlock(k) * ((n + kCubeCols - 1) / kCubeCols * kCubeCols);
}
int64_t Bf16L0AElems(int64_t m, int64_t k) { return m * EvenKBlock(k); }

// Scratch past this many bytes goes on the heap (as L1 tiles do).
constexpr int64_t kMaxStackScratchBytes = 128 * 1024;

// A uint16 scratch tile `name` of `elems` elements: its declaration, and
// (on the heap) the statement that frees it.
struct Scratch {
  std::string declare, free;
};
Scratch Uint16Scratch(const char* name, int64_t elems) {
  if (elems * 2 > kMaxStackScratchBytes) {
    return {absl::StrCat("    uint16_t* const ", name,
                         " = static_cast<uint16_t*>(__builtin_malloc(", elems * 2, "));\n"),
            absl::StrCat("    __builtin_free(", name, ");\n")};
  }
  return {absl::StrCat("    alignas(64) uint16_t ", name, "[", elems, "];\n"), ""};
}

bool L1OnHeap(bool in_place, int64_t elems) {
  return !in_place && elems * 4 > kMaxStackL1Bytes;
}

std::string L1Tile(const char* name, bool in_place, int64_t elems) {
  if (in_place) {
    return absl::StrCat("  float* const ", name, " = nullptr;  // f32: read in place\n");
  }
  if (L1OnHeap(in_place, elems)) {
    return absl::StrCat("  float* const ", name, " = static_cast<float*>(__builtin_malloc(",
                        elems * 4, "));\n");
  }
  return absl::StrCat("  alignas(64) float ", name, "[", elems, "];\n");
}

}  // namespace

absl::StatusOr<std::string> EmitCubeFunction(const PtoProgram& p, int index) {
  const PtoFunction& fn = p.functions[index];
  const CubeLoop& c = fn.cube;
  const int rank = static_cast<int>(fn.tile.size());
  const PtoInstr* load_a = nullptr;
  const PtoInstr* load_b = nullptr;
  const PtoInstr* store = nullptr;
  for (const PtoInstr& in : fn.body) {
    if (in.op == PtoOpcode::kTLoad) (in.dst == 0 ? load_a : load_b) = &in;
    if (in.op == PtoOpcode::kTImg2Col) load_b = &in;
    if (in.op == PtoOpcode::kTStore) store = &in;
  }
  const int num_buffers = static_cast<int>(p.buffers.size());
  for (const PtoInstr* in : {load_a, load_b, store}) {
    if (rank < 2 || in == nullptr || in->buffer < 0 || in->buffer >= num_buffers ||
        in->index.size() != ReadShape(p.buffers[in->buffer], *in).size() ||
        ReadShape(p.buffers[in->buffer], *in).empty()) {
      return absl::InternalError(absl::StrCat(
          "cube function @f", index, " lacks a well-formed TLOAD A, TLOAD B or TSTORE"));
    }
  }
  const PtoBuffer& a = p.buffers[load_a->buffer];
  const PtoBuffer& b = p.buffers[load_b->buffer];
  const PtoBuffer& o = p.buffers[store->buffer];
  // m and n: the tile's rows and columns, bounds of a tail's; a generic
  // function (runtime_extents, a tail in a loop body) takes them from its
  // last args and sizes its tiles at the bounds.
  const int64_t m = fn.tile[rank - 2], n = fn.tile[rank - 1];
  std::string ms = absl::StrCat(m), ns = absl::StrCat(n), extents;
  if (fn.runtime_extents) {
    ms = "tm";
    ns = "tn";
    extents = absl::StrCat("  const int tm = static_cast<int>(args[", fn.num_args - 2,
                           "]), tn = static_cast<int>(args[", fn.num_args - 1, "]);\n");
  }
  const std::vector<int64_t>& a_shape = ReadShape(a, *load_a);
  const std::vector<int64_t>& b_shape = ReadShape(b, *load_b);
  const int m_dim = rank - 2, n_dim = rank - 1;
  const std::vector<int>& a_sd = load_a->stride_dynamic;
  const std::vector<int>& b_sd = load_b->stride_dynamic;
  const std::vector<int>& c_sd = store->stride_dynamic;
  absl::StatusOr<std::string> lda =
      c.a_trans ? LeadingDim(a_shape, load_a->index, a_sd, rank, kGmIndexK, m_dim, index)
                : LeadingDim(a_shape, load_a->index, a_sd, rank, m_dim, kGmIndexK, index);
  // TIMG2COL builds B's L1 blocks itself (no leading dimension in GM).
  const bool img2col = load_b->op == PtoOpcode::kTImg2Col;
  if (img2col && (load_b->img2col.size() != kImg2ColInts ||
                  (b_shape.size() != 3 && b_shape.size() != 4) ||
                  c.b_trans || rank != 4)) {
    return absl::InternalError(absl::StrCat("cube function @f", index,
                                            ": a malformed TIMG2COL"));
  }
  absl::StatusOr<std::string> ldb =
      img2col ? absl::StatusOr<std::string>("0")
      : c.b_trans ? LeadingDim(b_shape, load_b->index, b_sd, rank, n_dim, kGmIndexK, index)
                  : LeadingDim(b_shape, load_b->index, b_sd, rank, kGmIndexK, n_dim, index);
  if (!lda.ok()) return lda.status();
  if (!ldb.ok()) return ldb.status();
  // C's rows: the stride of its buffer's next-to-last dim (its last dim's
  // extent), a dynamic arg when that dim is symbolic.
  const std::string ldc =
      o.shape.size() >= 2 ? StrideText(o.shape, c_sd, rank)[o.shape.size() - 2]
                          : absl::StrCat(o.shape.back());
  // Leading dimensions held in args (a buffer with a dynamic inner dim).
  const bool runtime_ld = AnyDynamic(a_sd) || AnyDynamic(b_sd) || AnyDynamic(c_sd);
  const std::string ta = CubeGmType(a.dtype), tb = CubeGmType(b.dtype),
                    tc = CubeGmType(store->dtype);
  // A few rows of A: the multiply reads B's L1 rows, no L0B (pto_cube.h,
  // "Small M"), a whole L1 block per multiply: with no L0B to fill, L0
  // steps would only cut the multiply's K steps short (it takes its own).
  const bool rows_path = m <= kSmallM && !c.b_trans;
  const std::string kl1 = absl::StrCat(c.k_l1),
                    kl0 = rows_path ? kl1 : absl::StrCat(c.k_l0);
  // K: a constant, or (a tail of K in a loop body) a dynamic arg at most c.k.
  const std::string ks = c.k_dynamic >= 0 ? "tk" : absl::StrCat(c.k);
  if (c.k_dynamic >= 0) {
    absl::StrAppend(&extents, "  const int64_t tk = args[", rank + c.k_dynamic, "];\n");
  }
  std::string b_offset = OffsetExpr(b_shape, load_b->index, rank, b_sd);
  if (img2col) {  // space dim 1 is the group: channels from g * C/G on
    std::vector<GmIndex> image = load_b->index;
    image[1].space_dim = -1;
    b_offset = absl::StrCat(OffsetExpr(b_shape, image, rank, b_sd), " + args[1] * ",
                            load_b->img2col[8], " * ", StrideText(b_shape, b_sd, rank)[1]);
  }
  std::string out = absl::StrCat(
      "// @f", index, ": cube, C[", m, " x ", n, "] over K=", c.k, " (L1 blocks of ",
      c.k_l1, ", L0 steps of ", c.k_l0, ")\n",
      "static void pto_f", index, "(void* const* buffers, const int64_t* args) {\n",
      "  const ", ta, "* a = static_cast<const ", ta, "*>(buffers[", load_a->buffer,
      "]) + (", OffsetExpr(a_shape, load_a->index, rank, a_sd), ");\n",
      "  const ", tb, "* b = static_cast<const ", tb, "*>(buffers[", load_b->buffer,
      "]) + (", b_offset, ");\n",
      "  ", tc, "* c = static_cast<", tc, "*>(buffers[", store->buffer, "]) + (",
      OffsetExpr(o.shape, store->index, rank, c_sd), ");\n");
  // BF16 on a target with AMX-BF16: tiles instead of the FMA kernel, except
  // for a run-time K (a tail of K in a loop body: the FMA kernel walks it)
  // or run-time leading dimensions (a buffer with a dynamic inner dim; its
  // kernel takes them as constants), and tiles of at most kAmxStreamM rows
  // (16-row tiles would multiply padding, and packing B costs more than the
  // multiply: these stream B like the rows path of other targets).
  const bool amx_streams = rows_path && m <= kAmxStreamM;
  if (!img2col && runtime::HostTargetHasAmx(p.target) && a.dtype == pto::v1::DT_BF16 &&
      b.dtype == pto::v1::DT_BF16 && c.k_dynamic < 0 && !runtime_ld && !amx_streams) {
    absl::StrAppend(&out,
                    EmitAmxCubeBody({m, n, c.k, std::stoll(*lda), std::stoll(*ldb), std::stoll(ldc), c.a_trans, c.b_trans, tc,
                                     fn.runtime_extents ? ms : "",
                                     fn.runtime_extents ? ns : "", extents}),
                    "}\n\n");
    return out;
  }
  absl::StrAppend(&out, "  alignas(64) float l0c[", m * n, "];\n", extents);
  // BF16 (not the rows path): pairs of K on VDPBF16PS where the CPU reports
  // AVX512-BF16 (pto_cube.h, CubeMatmulBf16Store: the task and its TSTORE),
  // the widening path below otherwise.
  if (a.dtype == pto::v1::DT_BF16 && b.dtype == pto::v1::DT_BF16 && !rows_path && !img2col) {
    const Scratch l0b16 = Uint16Scratch("l0p", Bf16L0BElems(c.k, n));
    const Scratch l0a16 =
        c.a_trans ? Uint16Scratch("l0q", Bf16L0AElems(m, c.k)) : Scratch{"", ""};
    absl::StrAppend(
        &out, "#if PTO_CUBE_BF16_DOT\n", "  if (pto_cube::CubeHasBf16Dot()) {\n",
        l0b16.declare, l0a16.declare,
        "    pto_cube::CubeMatmulBf16Store<pto_tile::Elem<", tc, ">>(c, ", ldc,
        ", l0c, reinterpret_cast<const uint16_t*>(a), ", *lda, ", ",
        c.a_trans ? "true" : "false", ", reinterpret_cast<const uint16_t*>(b), ", *ldb, ", ",
        c.b_trans ? "true" : "false", ", ", ms, ", ", ks, ", ", ns, ", ",
        c.a_trans ? "l0q" : "nullptr", ", l0p);\n", l0b16.free, l0a16.free,
        "    return;\n  }\n#endif\n");
  }
  // The rows path reads bf16 B from GM, widening in registers (no L1 tile).
  const bool b_gm_bf16 = rows_path && b.dtype == pto::v1::DT_BF16 && !img2col;
  const bool a_in_place = a.dtype == pto::v1::DT_FP32;
  const bool b_in_place = b.dtype == pto::v1::DT_FP32 && !img2col;
  absl::StrAppend(
      &out, L1Tile("l1a", a_in_place, m * c.k_l1),
      b_gm_bf16 ? "" : L1Tile("l1b", b_in_place, c.k_l1 * n),
      rows_path ? ""
                : absl::StrCat("  alignas(64) float l0b[pto_cube::L0BElems(", kl0, ", ", n,
                               ")];\n"));
  // f16 rows widen 8 at a time (pto_tile's F16C path where the target has
  // it); other types element by element (Conv::Load).
  auto load = [](pto::v1::DataType dtype, const std::string& type) {
    return dtype == pto::v1::DT_FP16
               ? std::string("pto_cube::CubeLoadL1Rows<PtoCubeHalfRows>")
               : absl::StrCat("pto_cube::CubeLoadL1<pto_tile::Elem<", type, ">>");
  };
  const std::string load_a_fn = load(a.dtype, ta), load_b_fn = load(b.dtype, tb);
  if (img2col) {
    const std::vector<int64_t>& g = load_b->img2col;
    const std::vector<std::string> stride = StrideText(b_shape, b_sd, rank);
    const int64_t ow = Img2Col{g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7]}.OutW(g[10]);
    // A feature map [N, C, W] has one row (H = 1): its row stride is never used.
    absl::StrAppend(&out, "  const pto_cube::CubeImg2Col geo = {", stride[1], ", ",
                    b_shape.size() == 4 ? stride[2] : "0",
                    ", ", g[8], ", ", g[9], ", ", g[10], ", ", absl::StrJoin(g.begin(),
                    g.begin() + 8, ", "), ", ", ow, "};\n");
  }
  if (c.k == 0 || c.k_dynamic >= 0) {
    absl::StrAppend(&out, c.k_dynamic >= 0 ? "  if (tk <= 0) " : "  ", "for (int i = 0; i < ",
                    m * n, "; ++i) l0c[i] = 0.0f;\n");
  }
  const bool l1b_heap = !b_gm_bf16 && L1OnHeap(b_in_place, c.k_l1 * n);
  const bool heap = L1OnHeap(a_in_place, m * c.k_l1) || l1b_heap;
  // TLOAD A: [m x kb] at column k (a_trans: [kb x m] at row k); B: [kb x n]
  // at row k (b_trans: [n x kb] at column k).
  const char* a_trans = c.a_trans ? "true" : "false";
  const char* b_trans = c.b_trans ? "true" : "false";
  absl::StrAppend(
      &out, "  for (int64_t k = 0; k < ", ks, "; k += ", kl1, ") {\n",
      "    const int kb = static_cast<int>(", ks, " - k < ", kl1, " ? ", ks,
      " - k : ", kl1, ");\n",
      "    int64_t lda1, ldb1;\n",
      c.a_trans
          ? absl::StrCat("    const float* a1 = ", load_a_fn, "(l1a, a + k * ", *lda, ", ",
                         *lda, ", kb, ", ms, ", &lda1);\n")
          : absl::StrCat("    const float* a1 = ", load_a_fn, "(l1a, a + k, ", *lda, ", ", ms,
                         ", kb, &lda1);\n"),
      img2col
          ? absl::StrCat("    const float* b1 = pto_cube::CubeLoadImg2Col<pto_tile::Elem<", tb,
                         ">>(l1b, b, geo, k, kb, args[", n_dim, "], ", ns, ", &ldb1);\n")
      : b_gm_bf16
          ? absl::StrCat("    const uint16_t* b1 = reinterpret_cast<const uint16_t*>(b + k * ",
                         *ldb, ");\n    ldb1 = ", *ldb, ";\n")
      : c.b_trans
          ? absl::StrCat("    const float* b1 = ", load_b_fn, "(l1b, b + k, ", *ldb, ", ", ns,
                         ", kb, &ldb1);\n")
          : absl::StrCat("    const float* b1 = ", load_b_fn, "(l1b, b + k * ", *ldb, ", ",
                         *ldb, ", kb, ", ns, ", &ldb1);\n"),
      "    for (int kk = 0; kk < kb; kk += ", kl0, ") {\n",
      "      const int kc = kb - kk < ", kl0, " ? kb - kk : ", kl0, ";\n",
      "      int64_t rs0, ps0;\n",
      "      const float* a0 = pto_cube::CubeMovL0A(a1, lda1, kk, ", a_trans,
      ", &rs0, &ps0);\n",
      rows_path ? "" : absl::StrCat("      pto_cube::CubeMovL0B(l0b, b1, ldb1, kk, kc, ", ns,
                                    ", ", b_trans, ");\n"),
      "      if (k + kk == 0) {\n",
      "        pto_cube::CubeMatmul", rows_path ? "Rows" : "", "(l0c, a0, rs0, ps0, ",
      rows_path ? "b1 + kk * ldb1, ldb1" : "l0b", ", ", ms, ", kc, ", ns, ");\n",
      "      } else {\n",
      "        pto_cube::CubeMatmul", rows_path ? "RowsAcc" : "Acc", "(l0c, a0, rs0, ps0, ",
      rows_path ? "b1 + kk * ldb1, ldb1" : "l0b", ", ", ms, ", kc, ", ns, ");\n",
      "      }\n    }\n  }\n",
      "  pto_cube::CubeStoreL0C<pto_tile::Elem<", tc, ">>(c, ", ldc, ", l0c, ", ms,
      ", ", ns, ");\n",
      heap ? absl::StrCat(L1OnHeap(a_in_place, m * c.k_l1) ? "  __builtin_free(l1a);\n" : "",
                          l1b_heap ? "  __builtin_free(l1b);\n" : "")
           : "",
      "}\n\n");
  return out;
}

}  // namespace pto::compiler
