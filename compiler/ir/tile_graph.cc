#include "compiler/ir/tile_graph.h"

#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ops/img2col.h"
#include "compiler/util/checked_math.h"
#include "compiler/util/strings.h"
#include "runtime/expand_tasks.h"

namespace pto::compiler {

int64_t GmBuffer::Bytes() const {
  // The verifier bounds every tensor to kMaxElements (2^40), so this fits;
  // checked all the same, saturating rather than wrapping.
  int64_t n = DTypeBytes(dtype);
  for (int64_t d : shape) {
    std::optional<int64_t> next = CheckedMul(n, d);
    if (!next) return std::numeric_limits<int64_t>::max();
    n = *next;
  }
  return n;
}

std::vector<GmIndex> AlignedIndex(int buffer_rank, int space_rank) {
  std::vector<GmIndex> index(buffer_rank);
  for (int j = 0; j < buffer_rank; ++j) index[j].space_dim = space_rank - buffer_rank + j;
  return index;
}

std::vector<std::string> FormatScalars(const std::vector<double>& scalars,
                                       const std::vector<int>& dynamic) {
  std::vector<std::string> out;
  for (size_t j = 0; j < scalars.size(); ++j) {
    out.push_back(j < dynamic.size() && dynamic[j] >= 0
                      ? absl::StrCat("d", dynamic[j])
                      : absl::StrFormat("%.17g", scalars[j]));
  }
  return out;
}

std::string FormatGmIndex(const std::vector<GmIndex>& index,
                          const std::vector<int64_t>& shape) {
  std::vector<std::string> parts;
  for (size_t j = 0; j < index.size(); ++j) {
    const GmIndex& x = index[j];
    if (x.dynamic >= 0) {  // "a0+d0+3": plus dynamic arg 0 and 3
      std::string part = x.space_dim >= 0 ? absl::StrCat("a", x.space_dim, "+") : "";
      absl::StrAppend(&part, "d", x.dynamic);
      if (x.offset != 0) absl::StrAppend(&part, "+", x.offset);
      parts.push_back(part);
      continue;
    }
    if (x.space_dim == kGmIndexK) {
      parts.push_back(x.offset != 0 ? absl::StrCat("k+", x.offset) : "k");
    } else if (x.space_dim < 0 || (j < shape.size() && shape[j] == 1)) {
      parts.push_back(absl::StrCat(x.offset));
    } else if (x.div > 1) {
      parts.push_back(absl::StrCat("a", x.space_dim, "/", x.div));
    } else if (x.offset != 0) {
      parts.push_back(absl::StrCat("a", x.space_dim, "+", x.offset));
    } else {
      parts.push_back(absl::StrCat("a", x.space_dim));
    }
  }
  return absl::StrJoin(parts, ", ");
}

const char* CubeTileSpace(int t) {
  static const char* const kSpaces[] = {"l1", "l1", "l0a", "l0b", "l0c"};
  return t >= 0 && t < 5 ? kSpaces[t] : "?";
}

const char* ScatterReduceName(ScatterReduce reduce) {
  switch (reduce) {
    case ScatterReduce::kNone: return "none";
    case ScatterReduce::kAdd: return "add";
    case ScatterReduce::kMultiply: return "multiply";
  }
  return "?";
}

TileInstr MakeInstr(PtoOpcode opcode, int dst, std::vector<int> srcs,
                    pto::v1::DataType dtype, int reduce_dim) {
  TileInstr t;
  t.op = opcode;
  t.dst = dst;
  t.srcs = std::move(srcs);
  t.dtype = dtype;
  t.reduce_dim = reduce_dim;
  return t;
}

TileInstr MakeGmAccess(PtoOpcode opcode, int tile, int gm, pto::v1::DataType dtype,
                       std::vector<GmIndex> index, int reduce_dim) {
  TileInstr t = opcode == PtoOpcode::kTLoad ? MakeInstr(opcode, tile, {}, dtype, reduce_dim)
                                            : MakeInstr(opcode, -1, {tile}, dtype, reduce_dim);
  t.gm = gm;
  t.index = std::move(index);
  return t;
}

std::vector<int64_t> TileGrid(const std::vector<int64_t>& space,
                              const std::vector<int64_t>& tile) {
  return runtime::ExpandGrid(space, tile);  // the runtime expands by the same grid
}

TileBox TileAt(const std::vector<int64_t>& space,
               const std::vector<int64_t>& tile, int64_t linear) {
  const std::vector<int64_t> grid = TileGrid(space, tile);
  TileBox box;
  box.offset.resize(space.size());
  box.extent.resize(space.size());
  for (int d = static_cast<int>(space.size()) - 1; d >= 0; --d) {
    int64_t index = linear % grid[d];
    linear /= grid[d];
    box.offset[d] = index * tile[d];
    box.extent[d] = std::min(tile[d], space[d] - box.offset[d]);
  }
  return box;
}

namespace {

// "%5:gm" for a Tensor Graph value, "ws#3:gm" for a reduction's partial
// results; with "[a0, a1/4]" when the index is not the aligned default.
std::string GmOperand(const TileGraph& g, const TileInstr& in,
                      const TileGroup& grp) {
  const GmTensor& t = g.gm[in.gm];
  std::string s = t.value >= 0 ? absl::StrCat("%", t.value, ":gm")
                               : absl::StrCat("ws#", t.buffer, ":gm");
  const std::vector<int64_t>& shape =
      in.view_shape.empty() ? g.buffers[t.buffer].shape : in.view_shape;
  if (!in.view_shape.empty()) absl::StrAppend(&s, " as ", FormatDims(shape));
  const std::vector<GmIndex> aligned = AlignedIndex(
      static_cast<int>(shape.size()), static_cast<int>(grp.space.size()));
  bool same = in.index.size() == aligned.size();
  for (size_t j = 0; same && j < aligned.size(); ++j) {
    same = in.index[j].space_dim == aligned[j].space_dim && in.index[j].div == 1 &&
           in.index[j].offset == 0;
  }
  if (!same) absl::StrAppend(&s, "[", FormatGmIndex(in.index, shape), "]");
  return s;
}

}  // namespace

std::string PrintDynamicArgs(const std::vector<DynamicArgNote>& args,
                             const std::string& prefix) {
  std::string out;
  for (size_t k = 0; k < args.size(); ++k) {
    absl::StrAppend(&out, prefix, "d", k, " = ", args[k].value.ToString(),
                    args[k].uses.empty() ? "" : "  ; ", absl::StrJoin(args[k].uses, ", "),
                    "\n");
  }
  return out;
}

std::string PrintTileGraph(const TileGraph& g) {
  std::string out = absl::StrCat("tile_graph ", Quote(g.name), "\n");
  for (size_t b = 0; b < g.buffers.size(); ++b) {
    const GmBuffer& buf = g.buffers[b];
    std::string kind = buf.param >= 0
                           ? absl::StrCat("param #", buf.param, " ",
                                          ParamRoleName(buf.role))
                           : "workspace";
    absl::StrAppend(&out, "  buffer #", b, " ", kind, " ", DTypeShortName(buf.dtype),
                    buf.sym_shape.empty() ? FormatDims(buf.shape) : FormatSymShape(buf.sym_shape),
                    "\n");
  }
  for (size_t t = 0; t < g.gm.size(); ++t) {
    absl::StrAppend(&out, "  gm ",
                    g.gm[t].value >= 0 ? absl::StrCat("%", g.gm[t].value)
                                       : std::string("(partial results)"),
                    " -> buffer #", g.gm[t].buffer, "\n");
  }
  for (const RowCap& c : g.row_caps) {
    absl::StrAppend(&out, "  rows fit: last dim of %", c.value, " <= ", c.cap, "\n");
  }
  for (size_t i = 0; i < g.groups.size(); ++i) {
    const TileGroup& grp = g.groups[i];
    const std::vector<int64_t> grid = TileGrid(grp.space, grp.tile);
    int64_t tiles = 1;
    for (int64_t n : grid) tiles *= n;
    // A symbolic space's grid and tiles exist per binding, at launch.
    const bool symbolic = !grp.sym_space.empty();
    // A run-time K by its expression (grp.cube.k is then a bound or a
    // probe's K).
    const std::string k =
        grp.cube.k_dynamic >= 0 &&
                static_cast<size_t>(grp.cube.k_dynamic) < grp.dynamic_args.size()
            ? grp.dynamic_args[grp.cube.k_dynamic].value.ToString()
            : absl::StrCat(grp.cube.k);
    absl::StrAppend(&out, "  group #", i, " ops=[", absl::StrJoin(grp.ops, ","),
                    "] space=", symbolic ? FormatSymShape(grp.sym_space) : FormatDims(grp.space),
                    " tile=", FormatDims(grp.tile),
                    symbolic ? "" : absl::StrCat(" grid=", FormatDims(grid)),
                    grp.serial_dim >= 0 ? absl::StrCat(" serial_dim=", grp.serial_dim) : "",
                    grp.serial_all ? " serial" : "",
                    grp.branch == 1   ? " when rows fit"
                    : grp.branch == 2 ? " when rows do not fit"
                                      : "",
                    grp.is_cube ? "" : absl::StrCat(" ub_tiles=", grp.num_ub_tiles),
                    grp.is_cube ? absl::StrCat(" cube K=", k, " kL1=",
                                               grp.cube.k_l1, " kL0=", grp.cube.k_l0)
                                : "",
                    "\n");
    // Row tiles (one value per row of a fused last-dim reduction) print
    // as ub.row; a cube group's tiles by their buffer (l1, l0a, ...).
    auto ub = [&](int t) {
      if (grp.is_cube) return absl::StrCat("%t", t, ":", CubeTileSpace(t));
      const bool row = t >= 0 && t < static_cast<int>(grp.ub_rows.size()) &&
                       grp.ub_rows[t];
      return absl::StrCat("%t", t, row ? ":ub.row" : ":ub");
    };
    // A cube group's K loops: TLOADs per L1 block, TMOV/TMATMUL per L0 step.
    std::string indent = "    ";
    for (const TileInstr& in : grp.body) {
      if (grp.is_cube && (in.op == PtoOpcode::kTLoad || in.op == PtoOpcode::kTImg2Col) &&
          indent.size() == 4) {
        absl::StrAppend(&out, indent, "for k in [0, ", k, ") step ",
                        grp.cube.k_l1, ":\n");
        indent = "      ";
      } else if (grp.is_cube && in.op == PtoOpcode::kTMov && indent.size() == 6) {
        absl::StrAppend(&out, indent, "for each ", grp.cube.k_l0,
                        " of the block:\n");
        indent = "        ";
      } else if (grp.is_cube && in.op == PtoOpcode::kTStore) {
        indent = "    ";
      }
      std::vector<std::string> operands;
      if (in.op == PtoOpcode::kTStore) {
        operands.push_back(GmOperand(g, in, grp));
      } else if (in.op == PtoOpcode::kMScatter) {
        operands.push_back(absl::StrCat("%", g.gm[in.gm].value, ":gm[dim=", in.index_dim,
                                        " ", ScatterReduceName(in.scatter), "]"));
      } else {
        operands.push_back(absl::StrCat(ub(in.dst), ".", DTypeShortName(in.dtype)));
      }
      if (in.op == PtoOpcode::kTLoad) {
        operands.push_back(GmOperand(g, in, grp));
      }
      if (in.op == PtoOpcode::kTImg2Col) {
        operands.push_back(absl::StrCat(GmOperand(g, in, grp), " ", Img2ColText(in.img2col)));
      }
      if (in.op == PtoOpcode::kMGather) {
        operands.push_back(
            absl::StrCat("%", g.gm[in.gm].value, ":gm[dim=", in.index_dim, "]"));
      }
      if (in.op == PtoOpcode::kMSort) {
        operands.push_back(absl::StrCat("%", g.gm[in.gm].value, ":gm[dim=", in.index_dim, " ",
                                        in.descending ? "desc" : "asc", "]"));
      }
      for (int s : in.srcs) operands.push_back(ub(s));
      for (std::string& s : FormatScalars(in.scalars, in.scalar_dynamic)) {
        operands.push_back(std::move(s));
      }
      if (in.reduce_dim >= 0 && in.op != PtoOpcode::kTStore) {
        operands.push_back(absl::StrCat("dim=", in.reduce_dim));
      }
      const char* when = in.op == PtoOpcode::kTMatmul      ? "  ; first step"
                         : in.op == PtoOpcode::kTMatmulAcc ? "  ; later steps"
                                                           : "";
      absl::StrAppend(&out, indent, absl::StrFormat("%-6s ", PtoOpcodeName(in.op)),
                      absl::StrJoin(operands, ", "), when, "\n");
    }
    if (symbolic) {
      absl::StrAppend(&out, "    tiles: expanded at launch\n");
      continue;
    }
    std::vector<std::string> shown;
    for (int64_t t = 0; t < tiles && t < 8; ++t) {
      TileBox box = TileAt(grp.space, grp.tile, t);
      shown.push_back(absl::StrCat("@", FormatDims(box.offset), "+",
                                   FormatDims(box.extent)));
    }
    absl::StrAppend(&out, "    tiles(", tiles, "): ", absl::StrJoin(shown, " "),
                    tiles > 8 ? " ..." : "", "\n");
  }
  return out;
}

}  // namespace pto::compiler
