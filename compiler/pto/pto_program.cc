#include "compiler/pto/pto_program.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ops/img2col.h"
#include "compiler/util/strings.h"

namespace pto::compiler {
namespace {

std::string OffsetArgs(int rank) {
  std::vector<std::string> args;
  for (int d = 0; d < rank; ++d) args.push_back(absl::StrCat("a", d));
  return absl::StrJoin(args, ", ");
}

// The indices of a load or store: the task's offsets, aligned to the
// buffer's last dims; a broadcast dim (size 1) reads index 0.
std::string BufferIndex(const std::vector<int64_t>& shape, int rank) {
  const int lead = rank - static_cast<int>(shape.size());
  std::vector<std::string> index;
  for (size_t d = 0; d < shape.size(); ++d) {
    index.push_back(shape[d] == 1 ? std::string("0")
                                  : absl::StrCat("a", lead + static_cast<int>(d)));
  }
  return absl::StrJoin(index, ", ");
}

std::string PrintInstr(const PtoInstr& in, const PtoFunction& fn,
                       const PtoProgram& p) {
  std::vector<int64_t> dst_shape = fn.tile;  // a reduction's: 1 in its dim
  if (in.reduce_dim >= 0 && in.reduce_dim < static_cast<int>(dst_shape.size()) &&
      !PtoIsScan(in.op)) {
    dst_shape[in.reduce_dim] = 1;
  }
  if (in.dst >= 0 && in.dst < static_cast<int>(fn.ub_rows.size()) &&
      fn.ub_rows[in.dst] && !dst_shape.empty()) {
    dst_shape.back() = 1;
  }
  const std::string ub_type =
      absl::StrCat(":ub.", DTypeShortName(in.dtype), FormatDims(dst_shape));
  const int rank = static_cast<int>(fn.tile.size());
  std::vector<std::string> operands;
  switch (in.op) {
    case PtoOpcode::kTLoad:
      operands.push_back(absl::StrCat("%t", in.dst, ub_type));
      // "%0 as [4,6][a0, a1]": read through a reshape's view shape.
      operands.push_back(absl::StrCat(
          "%", in.buffer,
          in.view_shape.empty() ? "" : absl::StrCat(" as ", FormatDims(in.view_shape)),
          "[",
          in.buffer < 0 || in.buffer >= static_cast<int>(p.buffers.size())
              ? OffsetArgs(rank)
          : in.index.empty() ? BufferIndex(p.buffers[in.buffer].shape, rank)
          : FormatGmIndex(in.index, in.view_shape.empty()
                                        ? p.buffers[in.buffer].shape
                                        : in.view_shape),
          "]"));
      break;
    case PtoOpcode::kTStore:
      operands.push_back(absl::StrCat(
          "%", in.buffer, "[",
          in.buffer < 0 || in.buffer >= static_cast<int>(p.buffers.size()) ||
                  in.index.empty()
              ? OffsetArgs(rank)
              : FormatGmIndex(in.index, p.buffers[in.buffer].shape),
          "]"));
      operands.push_back(absl::StrCat("%t", in.srcs[0]));
      break;
    case PtoOpcode::kMGather:  // %t1:ub.f32[4,8], %0[dim=1], %t0 (the index)
      operands.push_back(absl::StrCat("%t", in.dst, ub_type));
      operands.push_back(absl::StrCat("%", in.buffer, "[dim=", in.index_dim, "]"));
      for (int s : in.srcs) operands.push_back(absl::StrCat("%t", s));
      break;
    case PtoOpcode::kMSort:  // %t0:ub.i64[4,8], %0[dim=1 desc]
      operands.push_back(absl::StrCat("%t", in.dst, ub_type));
      operands.push_back(absl::StrCat("%", in.buffer, "[dim=", in.index_dim, " ",
                                      in.descending ? "desc" : "asc", "]"));
      break;
    case PtoOpcode::kMScatter:  // %2[dim=1 add], %t1 (the values), %t0 (the index)
      operands.push_back(absl::StrCat("%", in.buffer, "[dim=", in.index_dim, " ",
                                      ScatterReduceName(in.scatter), "]"));
      for (int s : in.srcs) operands.push_back(absl::StrCat("%t", s));
      break;
    default:
      operands.push_back(absl::StrCat("%t", in.dst, ub_type));
      for (int s : in.srcs) operands.push_back(absl::StrCat("%t", s));
      for (std::string& s : FormatScalars(in.scalars, in.scalar_dynamic)) {
        operands.push_back(std::move(s));
      }
      if (in.reduce_dim >= 0) operands.push_back(absl::StrCat("dim=", in.reduce_dim));
  }
  // Names longer than the column get one space.
  return absl::StrCat("  ", absl::StrFormat("%-6s ", PtoOpcodeName(in.op)),
                      absl::StrJoin(operands, ", "));
}

// A cube function's body with its K loops (CubeLoop): per L1 block at k,
// TLOAD A and B into L1; per L0 step at kk within it, TMOV to L0A/L0B and
// TMATMUL (kk + k == 0) or TMATMUL_ACC; then TSTORE L0C.
std::string PrintCubeBody(const PtoFunction& fn, const PtoProgram& p) {
  const CubeLoop& c = fn.cube;
  const int rank = static_cast<int>(fn.tile.size());
  const int64_t m = rank >= 2 ? fn.tile[rank - 2] : 1;
  const int64_t n = rank >= 1 ? fn.tile[rank - 1] : 1;
  // A run-time K is dynamic arg dN (.arg lines), at most a constant when
  // its expression has one (a loop's tail of K); c.k is then that bound,
  // else the first probe's K.
  std::string k = absl::StrCat(c.k);
  if (c.k_dynamic >= 0) {
    std::optional<int64_t> bound = c.k;
    if (static_cast<size_t>(c.k_dynamic) < fn.dynamic_args.size()) {
      bound = fn.dynamic_args[c.k_dynamic].value.ConstantUpperBound();
    }
    k = absl::StrCat("d", c.k_dynamic);
    absl::StrAppend(&k, bound ? absl::StrCat("<=", *bound) : "");
  }
  const std::string k_end = c.k_dynamic >= 0 ? absl::StrCat("d", c.k_dynamic)
                                             : absl::StrCat(c.k);
  std::string out;
  for (const PtoInstr& in : fn.body) {
    std::string line;
    auto tile = [&](const std::vector<int64_t>& shape) {
      return absl::StrCat("%t", in.dst, ":", CubeTileSpace(in.dst), ".",
                          DTypeShortName(in.dtype), FormatDims(shape));
    };
    const bool trans = in.dst == 2 ? c.a_trans : c.b_trans;  // TMOV
    std::vector<std::string> operands;
    switch (in.op) {
      case PtoOpcode::kTLoad: {
        if (in.dst == 0) {
          absl::StrAppend(&out, "  .kloop k = 0, ", k, ", ", c.k_l1,
                          "  ; L1 blocks (the last may be shorter)\n");
        }
        const bool a = in.dst == 0;
        const int64_t rows = a ? (c.a_trans ? c.k_l1 : m) : (c.b_trans ? n : c.k_l1);
        const int64_t cols = a ? (c.a_trans ? m : c.k_l1) : (c.b_trans ? c.k_l1 : n);
        operands.push_back(tile({rows, cols}));
        const std::vector<int64_t>& shape =
            in.buffer >= 0 && in.buffer < static_cast<int>(p.buffers.size())
                ? p.buffers[in.buffer].shape
                : std::vector<int64_t>{};
        operands.push_back(
            absl::StrCat("%", in.buffer, "[", FormatGmIndex(in.index, shape), "]"));
        break;
      }
      case PtoOpcode::kTImg2Col: {
        // B's L1 block: [kL1 x n] of the im2col matrix of the feature map.
        operands.push_back(tile({c.k_l1, n}));
        const std::vector<int64_t>& shape =
            !in.view_shape.empty() ? in.view_shape
            : in.buffer >= 0 && in.buffer < static_cast<int>(p.buffers.size())
                ? p.buffers[in.buffer].shape
                : std::vector<int64_t>{};
        operands.push_back(absl::StrCat("%", in.buffer, "[", FormatGmIndex(in.index, shape),
                                        "] ", Img2ColText(in.img2col)));
        break;
      }
      case PtoOpcode::kTMov:
        if (in.dst == 2) {
          absl::StrAppend(&out, "  .kloop kk = 0, min(", c.k_l1, ", ", k_end,
                          " - k), ", c.k_l0, "  ; L0 steps\n");
        }
        operands.push_back(in.dst == 2 ? tile({m, c.k_l0}) : tile({c.k_l0, n}));
        // The block read: L0A is rows x [kk, kk + kL0) of op(A), L0B
        // [kk, kk + kL0) x columns of op(B), from L1 as stored.
        operands.push_back(absl::StrCat(
            "%t", in.srcs[0], (in.dst == 2) != trans ? "[0, kk]" : "[kk, 0]",
            trans ? " trans" : ""));
        break;
      case PtoOpcode::kTMatmul:
      case PtoOpcode::kTMatmulAcc:
        operands.push_back(tile({m, n}));
        for (int s : in.srcs) operands.push_back(absl::StrCat("%t", s));
        break;
      case PtoOpcode::kTStore:
        absl::StrAppend(&out, "  .endloop\n  .endloop\n");
        operands.push_back(absl::StrCat("%", in.buffer, "[",
                                        FormatGmIndex(in.index, {}), "]"));
        operands.push_back(absl::StrCat("%t", in.srcs[0]));
        break;
      default:
        operands.push_back(absl::StrCat("%t", in.dst));
    }
    const char* when = in.op == PtoOpcode::kTMatmul      ? "  ; k + kk == 0"
                       : in.op == PtoOpcode::kTMatmulAcc ? "  ; k + kk > 0"
                                                         : "";
    absl::StrAppend(&out, "  ", absl::StrFormat("%-6s ", PtoOpcodeName(in.op)),
                    absl::StrJoin(operands, ", "), when, "\n");
  }
  return out;
}

}  // namespace

std::string PrintPto(const PtoProgram& p) {
  std::string out = absl::StrCat(".kernel ", p.kernel_name, "  target=",
                                 p.target, "\n");
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    const PtoBuffer& buf = p.buffers[b];
    std::string kind =
        buf.param >= 0 ? absl::StrFormat("param %-5s", ParamRoleName(buf.role))
                       : std::string("workspace");
    absl::StrAppend(&out, ".buffer %", b, " ", kind, " ",
                    DTypeShortName(buf.dtype),
                    buf.sym_shape.empty() ? FormatDims(buf.shape) : FormatSymShape(buf.sym_shape),
                    "\n");
  }
  for (size_t f = 0; f < p.functions.size(); ++f) {
    const PtoFunction& fn = p.functions[f];
    absl::StrAppend(&out, ".func @f", f, " ",
                    fn.core == pto::v1::CORE_TYPE_CUBE ? "cube" : "vector",
                    " args=", fn.num_args, " tile=", FormatDims(fn.tile),
                    fn.runtime_extents ? " extents=args" : "", "  ; ", fn.name, "\n");
    absl::StrAppend(&out, PrintDynamicArgs(fn.dynamic_args, "  .arg "));
    if (fn.core == pto::v1::CORE_TYPE_CUBE) {
      absl::StrAppend(&out, PrintCubeBody(fn, p));
    } else {
      for (const PtoInstr& in : fn.body) absl::StrAppend(&out, PrintInstr(in, fn, p), "\n");
    }
    absl::StrAppend(&out, ".end\n");
  }
  return out;
}

}  // namespace pto::compiler
