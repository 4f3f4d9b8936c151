#include "compiler/targets/ascend/ascend_cube_codegen.h"

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/targets/ascend/ascend_bf16_matmul.h"
#include "compiler/targets/ascend/ascend_unmapped.h"
#include "compiler/targets/host/host_function_plan.h"
#include "compiler/targets/memory_model.h"

namespace pto::compiler {
namespace {

constexpr int64_t kFractal = 16;  // the cube's tile rows and columns pad to this

int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

const char* Elem(pto::v1::DataType dtype) {
  return dtype == pto::v1::DT_FP16   ? "half"
         : dtype == pto::v1::DT_BF16 ? "bfloat16_t"
                                     : "float";
}

int64_t ElemBytes(pto::v1::DataType dtype) { return dtype == pto::v1::DT_FP16 ? 2 : 4; }

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int j = static_cast<int>(shape.size()) - 2; j >= 0; --j) s[j] = s[j + 1] * shape[j + 1];
  return s;
}

bool AnyDynamic(const std::vector<int>& stride_dynamic) {
  for (int k : stride_dynamic) {
    if (k >= 0) return true;
  }
  return false;
}

// The GM stride of the buffer dim that `in` indexes with space dim `dim`
// (kGmIndexK for K); `fallback` when no dim is (a single row or column).
int64_t StrideOf(const PtoBuffer& buf, const PtoInstr& in, int dim, int64_t fallback) {
  const std::vector<int64_t>& shape = in.view_shape.empty() ? buf.shape : in.view_shape;
  const std::vector<int64_t> s = RowMajorStrides(shape);
  for (size_t j = 0; j < shape.size() && j < in.index.size(); ++j) {
    if (in.index[j].space_dim == dim && shape[j] != 1) return s[j];
  }
  return fallback;
}

}  // namespace

absl::StatusOr<std::string> EmitAscendCubeFunction(const PtoProgram& p, int index) {
  const PtoFunction& fn = p.functions[index];
  const CubeLoop& c = fn.cube;
  auto unsupported = [&](absl::string_view why) {
    return absl::UnimplementedError(absl::StrCat(
        "ascend target: function @f", index, ": TMATMUL ", why,
        " (docs/pto-isa.md lists what the target maps)"));
  };
  const int rank = static_cast<int>(fn.tile.size());
  const PtoInstr* load_a = nullptr;
  const PtoInstr* load_b = nullptr;
  const PtoInstr* store = nullptr;
  for (const PtoInstr& in : fn.body) {
    if (const char* why = AscendUnmappedReason(in.op)) {
      // (TIMG2COL: pypto.conv traced for this target records its
      // composition instead, so only a graph traced for another gets here.)
      return absl::UnimplementedError(absl::StrCat(
          "ascend target: function @f", index, ": ", PtoOpcodeName(in.op), " ", why,
          " (docs/pto-isa.md lists what the target maps)"));
    }
    if (in.op == PtoOpcode::kTLoad) (in.dst == 0 ? load_a : load_b) = &in;
    if (in.op == PtoOpcode::kTStore) store = &in;
  }
  const int num_buffers = static_cast<int>(p.buffers.size());
  for (const PtoInstr* in : {load_a, load_b, store}) {
    if (rank < 2 || in == nullptr || in->buffer < 0 || in->buffer >= num_buffers) {
      return absl::InternalError(absl::StrCat(
          "cube function @f", index, " lacks a well-formed TLOAD A, TLOAD B or TSTORE"));
    }
  }
  if (c.k_dynamic >= 0 || fn.runtime_extents) return unsupported("with a run-time K or tile");
  if (c.k <= 0) return unsupported("over an empty K");
  for (int d = 0; d + 2 < rank; ++d) {
    if (fn.tile[d] != 1) return unsupported("over a batched tile");
  }
  if (AnyDynamic(load_a->stride_dynamic) || AnyDynamic(load_b->stride_dynamic) ||
      AnyDynamic(store->stride_dynamic)) {
    return unsupported("with run-time strides");
  }
  const PtoBuffer& a = p.buffers[load_a->buffer];
  const PtoBuffer& b = p.buffers[load_b->buffer];
  const PtoBuffer& o = p.buffers[store->buffer];
  const pto::v1::DataType in_type = a.dtype;
  const bool bf16 = in_type == pto::v1::DT_BF16;
  const auto is_float = [](pto::v1::DataType t) {
    return t == pto::v1::DT_FP32 || t == pto::v1::DT_FP16 || t == pto::v1::DT_BF16;
  };
  if (!is_float(in_type) || b.dtype != in_type || !is_float(o.dtype)) {
    return unsupported(absl::StrCat("of ", pto::v1::DataType_Name(a.dtype), " x ",
                                    pto::v1::DataType_Name(b.dtype), " -> ",
                                    pto::v1::DataType_Name(o.dtype),
                                    " (f32 x f32, f16 x f16 or bf16 x bf16 into f32, f16 or "
                                    "bf16)"));
  }
  const int m_dim = rank - 2, n_dim = rank - 1;
  const int64_t m = fn.tile[m_dim], n = fn.tile[n_dim], kl0 = c.k_l0;
  const int64_t mp = RoundUp(m, kFractal), np = RoundUp(n, kFractal), kp = RoundUp(kl0, kFractal);
  // A [m x K]: rows lda apart, K contiguous (a_trans: stored [K x m], its
  // K rows lda apart, m contiguous: loaded as a DN view into a ColMajor
  // tile). B [K x n]: rows ldb apart (b_trans: stored [n x K], likewise).
  const int64_t a_last = (load_a->view_shape.empty() ? a.shape : load_a->view_shape).back();
  const int64_t b_last = (load_b->view_shape.empty() ? b.shape : load_b->view_shape).back();
  const int a_outer = c.a_trans ? kGmIndexK : m_dim, a_inner = c.a_trans ? m_dim : kGmIndexK;
  const int b_outer = c.b_trans ? n_dim : kGmIndexK, b_inner = c.b_trans ? kGmIndexK : n_dim;
  const int64_t lda = StrideOf(a, *load_a, a_outer, a_last);
  const int64_t ldb = StrideOf(b, *load_b, b_outer, b_last);
  if (StrideOf(a, *load_a, a_inner, 1) != 1 || StrideOf(b, *load_b, b_inner, 1) != 1) {
    return unsupported("with an operand strided along its rows");
  }
  const host_plan::Access ca = host_plan::MakeAccess(o, fn.tile, store->index, -1);
  const host_plan::Access aa =
      host_plan::MakeAccess(host_plan::Viewed(a, *load_a), fn.tile, load_a->index, -1);
  const host_plan::Access ba =
      host_plan::MakeAccess(host_plan::Viewed(b, *load_b), fn.tile, load_b->index, -1);
  const int64_t ldc = ca.strides4[2] != 0 ? ca.strides4[2] : n;
  if (ca.strides4[3] != 1 && n > 1) return unsupported("storing a strided result");
  // L1 holds A's and B's step; L0A, L0B and L0C one tile each. (BF16: the
  // simulation's f32 tiles, the larger.)
  const int64_t esz = bf16 ? 4 : ElemBytes(in_type);
  const int64_t l1a_bytes = RoundUp(mp * kp * esz, 512), l1b_bytes = kp * np * esz;
  const MemoryModel& mem = kAiCoreMemoryModel;
  if (l1a_bytes + l1b_bytes > mem.l1_bytes || mp * kp * esz > mem.l0a_bytes ||
      kp * np * esz > mem.l0b_bytes || mp * np * 4 > mem.l0c_bytes) {
    return unsupported(absl::StrCat("of a [", m, " x ", kl0, "] x [", kl0, " x ", n,
                                    "] step: its padded tiles exceed L1 or L0"));
  }
  std::set<int> used = {load_a->buffer, load_b->buffer, store->buffer};
  std::vector<std::string> params;
  for (int buf : used) {
    params.push_back(absl::StrCat("__gm__ ", Elem(p.buffers[buf].dtype), "* b", buf));
  }
  params.push_back("__gm__ const int64_t* args");
  // What the K loop's body reads its operands through: A's and B's step in
  // GM (`a_at`, `b_at`) as views of their Mat tiles' element type `t`.
  struct Form {
    std::string t, decls, widen;
    std::string a_view, b_view, a_at, b_at;
  };
  // Each operand's view: its Mat tile layout, GM layout and strides.
  auto view = [](bool trans, int64_t ld) {
    return trans ? absl::StrCat("Stride<1, 1, 1, 1, ", ld, ">, Layout::DN")
                 : absl::StrCat("Stride<1, 1, 1, ", ld, ", 1>, Layout::ND");
  };
  const std::string a_step = c.a_trans ? absl::StrCat("k * ", lda) : "k";
  const std::string b_step = c.b_trans ? "k" : absl::StrCat("k * ", ldb);
  auto in_gm = [&](const char* t) {
    return Form{t,
                absl::StrCat("  __gm__ ", t, "* a = b", load_a->buffer, " + (", aa.offset, ");\n",
                             "  __gm__ ", t, "* b = b", load_b->buffer, " + (", ba.offset, ");\n"),
                "",
                view(c.a_trans, lda),
                view(c.b_trans, ldb),
                absl::StrCat("a + ", a_step),
                absl::StrCat("b + ", b_step)};
  };
  std::vector<Form> forms;
  if (!bf16) {
    forms.push_back(in_gm(Elem(in_type)));
  } else {
    forms.push_back(in_gm("bfloat16_t"));
    // The simulation's form (ascend_bf16_matmul.h): each block as stored,
    // widened into its workspace, which the Mat tile's view then reads.
    const std::string mm = absl::StrCat(m), nn = absl::StrCat(n);
    ascend::Bf16CubeOperand oa{"a", load_a->buffer, aa.offset, a_step,
                               c.a_trans ? "kc" : mm, c.a_trans ? mm : "kc",
                               c.a_trans ? kp : mp, c.a_trans ? mp : kp, lda};
    ascend::Bf16CubeOperand ob{"b", load_b->buffer, ba.offset, b_step,
                               c.b_trans ? nn : "kc", c.b_trans ? "kc" : nn,
                               c.b_trans ? np : kp, c.b_trans ? kp : np, ldb};
    Form words{"float", "", "", view(c.a_trans, oa.pad_cols), view(c.b_trans, ob.pad_cols),
               "wsf_a", "wsf_b"};
    for (const ascend::Bf16CubeOperand* op : {&oa, &ob}) {
      absl::StatusOr<std::string> decls = ascend::Bf16CubeDeclarations(*op, index);
      if (!decls.ok()) return decls.status();
      absl::StrAppend(&words.decls, *decls);
      absl::StrAppend(&words.widen, ascend::Bf16CubeWiden(*op));
    }
    forms.push_back(std::move(words));
  }
  auto sync = [](const char* from, const char* to) {
    return absl::StrCat("set_flag(", from, ", ", to, ", EVENT_ID0);\n", "wait_flag(", from,
                        ", ", to, ", EVENT_ID0);\n");
  };
  auto indent = [](const std::string& lines, const char* pad) {
    std::string out;
    for (absl::string_view line : absl::StrSplit(lines, '\n', absl::SkipEmpty())) {
      absl::StrAppend(&out, pad, line, "\n");
    }
    return out;
  };
  const char* a_tile = c.a_trans ? "ColMajor" : "RowMajor";
  const char* b_tile = c.b_trans ? "ColMajor" : "RowMajor";
  auto body = [&](const Form& f, const std::string& store_text) {
    const std::string& t = f.t;
    return absl::StrCat(
        "  using L1A = Tile<TileType::Mat, ", t, ", ", mp, ", ", kp, ", BLayout::", a_tile,
        ", DYNAMIC, DYNAMIC>;\n",
        "  using L1B = Tile<TileType::Mat, ", t, ", ", kp, ", ", np, ", BLayout::", b_tile,
        ", DYNAMIC, DYNAMIC>;\n",
        "  using L0A = TileLeft<", t, ", ", mp, ", ", kp, ", DYNAMIC, DYNAMIC>;\n",
        "  using L0B = TileRight<", t, ", ", kp, ", ", np, ", DYNAMIC, DYNAMIC>;\n",
        "  using L0C = TileAcc<float, ", mp, ", ", np, ", ", m, ", ", n, ">;\n",
        "  using GStep = Shape<1, 1, 1, DYNAMIC, DYNAMIC>;\n",
        "  using GA = GlobalTensor<", t, ", GStep, ", f.a_view, ">;\n",
        "  using GB = GlobalTensor<", t, ", GStep, ", f.b_view, ">;\n",
        "  using GC = GlobalTensor<", Elem(o.dtype), ", Shape<1, 1, 1, ", m, ", ", n,
        ">, Stride<1, 1, 1, ", ldc, ", 1>, Layout::ND>;\n",
        f.decls, "  L0C l0c;\n  TASSIGN(l0c, 0x0);\n",
        "  for (int64_t k = 0; k < ", c.k, "; k += ", kl0, ") {\n",
        "    const int kc = static_cast<int>(", c.k, " - k < ", kl0, " ? ", c.k, " - k : ", kl0,
        ");\n",
        f.widen,
        "    L1A l1a(", m, ", kc);\n    TASSIGN(l1a, 0x0);\n",
        "    L1B l1b(kc, ", n, ");\n", absl::StrFormat("    TASSIGN(l1b, 0x%x);\n", l1a_bytes),
        "    L0A l0a(", m, ", kc);\n    TASSIGN(l0a, 0x0);\n",
        "    L0B l0b(kc, ", n, ");\n    TASSIGN(l0b, 0x0);\n",
        "    GA ga(", f.a_at, ", GStep(", m, ", kc));\n",
        "    GB gb(", f.b_at, ", GStep(kc, ", n, "));\n",
        "    TLOAD(l1a, ga);\n    TLOAD(l1b, gb);\n",
        indent(sync("PIPE_MTE2", "PIPE_MTE1"), "    "),
        "    TMOV(l0a, l1a);\n    TMOV(l0b, l1b);\n",
        indent(sync("PIPE_MTE1", "PIPE_M"), "    "),
        "    if (k == 0) {\n      TMATMUL(l0c, l0a, l0b);\n    } else {\n"
        "      TMATMUL_ACC(l0c, l0c, l0a, l0b);\n    }\n",
        indent(sync("PIPE_M", "PIPE_MTE2"), "    "), "  }\n",
        indent(sync("PIPE_M", "PIPE_FIX"), "  "),
        "  GC gc(b", store->buffer, " + (", ca.offset, "));\n", store_text);
  };
  // The store: TSTORE from L0C, which converts f32 to an f16 or bf16 GM
  // type in the fixpipe. The CPU simulation's TSTORE moves the Acc tile's
  // f32 values as they are, so an f16 or bf16 result takes its own store.
  const std::string device_store = "  TSTORE(gc, l0c);\n";
  const std::string sim_store =
      o.dtype == pto::v1::DT_FP32
          ? device_store
          : ascend::HalfResultSimStore(o.dtype == pto::v1::DT_BF16, m, n, mp, np, ldc,
                                       store->buffer, ca.offset);
  std::string code;
  if (bf16) {
    // The CPU simulation's TMATMUL has no bf16 operands: its own form.
    code = absl::StrCat("#if !defined(__CPU_SIM)\n", body(forms[0], device_store),
                        "#else  // BF16 widened to f32 (ascend_bf16_matmul.h)\n",
                        body(forms[1], sim_store), "#endif\n");
  } else if (sim_store != device_store) {
    code = absl::StrCat(body(forms[0], ""), "#if !defined(__CPU_SIM)\n", device_store,
                        "#else  // the f32 result rounded in UB (ascend_bf16_matmul.h)\n",
                        sim_store, "#endif\n");
  } else {
    code = body(forms[0], device_store);
  }
  std::string out = absl::StrCat(
      "// @f", index, ": cube, C[", m, " x ", n, "] over K=", c.k, " in L0 steps of ", kl0, "\n",
      "__global__ AICORE void pto_f", index, "(", absl::StrJoin(params, ", "), ") {\n", code,
      "}\n\n");
  return out;
}

}  // namespace pto::compiler
