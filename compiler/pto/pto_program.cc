#include "compiler/pto/pto_program.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/tensor_graph.h"
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
  if (in.reduce_dim >= 0 && in.reduce_dim < static_cast<int>(dst_shape.size())) {
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
      operands.push_back(absl::StrCat(
          "%", in.buffer, "[",
          in.buffer < 0 || in.buffer >= static_cast<int>(p.buffers.size())
              ? OffsetArgs(rank)
          : in.index.empty() ? BufferIndex(p.buffers[in.buffer].shape, rank)
                             : FormatGmIndex(in.index, p.buffers[in.buffer].shape),
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
    default:
      operands.push_back(absl::StrCat("%t", in.dst, ub_type));
      for (int s : in.srcs) operands.push_back(absl::StrCat("%t", s));
      for (double s : in.scalars) {
        operands.push_back(absl::StrFormat("%.17g", s));
      }
      if (in.reduce_dim >= 0) operands.push_back(absl::StrCat("dim=", in.reduce_dim));
  }
  // Names longer than the column get one space.
  return absl::StrCat("  ", absl::StrFormat("%-6s ", PtoOpcodeName(in.op)),
                      absl::StrJoin(operands, ", "));
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
                    DTypeShortName(buf.dtype), FormatDims(buf.shape), "\n");
  }
  for (size_t f = 0; f < p.functions.size(); ++f) {
    const PtoFunction& fn = p.functions[f];
    absl::StrAppend(&out, ".func @f", f, " ",
                    fn.core == pto::v1::CORE_TYPE_CUBE ? "cube" : "vector",
                    " args=", fn.num_args, " tile=", FormatDims(fn.tile),
                    "  ; ", fn.name, "\n");
    for (const PtoInstr& in : fn.body) absl::StrAppend(&out, PrintInstr(in, fn, p), "\n");
    absl::StrAppend(&out, ".end\n");
  }
  return out;
}

}  // namespace pto::compiler
