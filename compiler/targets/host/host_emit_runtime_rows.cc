// Row code with a run-time length (a fused row group over a symbolic last
// dim, expand_to_tiles.h ExpandOptions::symbolic_rows). The
// group's generic function (extents from its args) runs rows of c <= the
// tile's row length (the cap), c its last extent. As the static per-row
// form, it runs one row at a time: a full tile is an array of the cap
// rounded up to whole chunks (pto_tile.h kRowChunk) holding one row, a row
// tile one value. Loads copy the row's c values (zeros to the chunk's end);
// elementwise instructions run over the row's whole chunks through their
// static kRowChunk forms (consecutive ones in one loop over the chunks);
// reductions take exactly c values in the static row code's order
// (pto_tile's ReduceRowN), softmax's x - m, exp and sum are one pass
// (TSubExpSumRowN, where FusesSubExpSum applies); stores write c values. So
// a row gives the bits the static row code gives at c, and a short row costs
// its length, not the cap's. As GM-direct operands do for static code
// (PlanDirect), an f32 row read only by those exact-length instructions is
// read in place, and the last elementwise result that only a store of a
// contiguous f32 row reads is written into GM, its last partial chunk
// through its tile.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/targets/host/host_emit.h"

namespace pto::compiler::host_emit {

using host_plan::Access;
using host_plan::DirectPlan;
using host_plan::FusesSubExpSum;
using host_plan::kRowChunkElements;
using host_plan::MakeAccess;
using host_plan::NoDirectOperands;
using host_plan::SoftmaxExpAt;
using host_plan::ValueType;
using host_plan::Viewed;

bool RuntimeRows(const PtoFunction& fn) {
  if (!fn.runtime_extents || fn.core != pto::v1::CORE_TYPE_VECTOR || fn.tile.empty()) {
    return false;
  }
  for (bool row : fn.ub_rows) {
    if (row) return true;
  }
  return false;
}

absl::StatusOr<std::string> EmitRuntimeRowFunction(const PtoProgram& p, int index) {
  const PtoFunction& fn = p.functions[index];
  const int rank = static_cast<int>(fn.tile.size());
  const int n = static_cast<int>(fn.body.size());
  const int64_t chunks = (fn.tile.back() + kRowChunkElements - 1) / kRowChunkElements;
  auto is_row = [&](int t) {
    return t >= 0 && t < static_cast<int>(fn.ub_rows.size()) && fn.ub_rows[t];
  };
  auto storage = [&](int t) {
    return t >= 0 && t < static_cast<int>(fn.ub_types.size()) ? fn.ub_types[t]
                                                                : pto::v1::DT_FP32;
  };
  auto unsupported = [&](const PtoInstr& in, const std::string& why) {
    return absl::InternalError(absl::StrCat("function ", fn.name, ": ", PtoOpcodeName(in.op),
                                            " in a row group over a symbolic row: ", why));
  };
  for (const PtoInstr& in : fn.body) {
    if ((in.op == PtoOpcode::kTLoad || in.op == PtoOpcode::kTStore) &&
        (in.buffer < 0 || in.buffer >= static_cast<int>(p.buffers.size()))) {
      return absl::InternalError("PTO instruction names a missing buffer");
    }
  }
  // The access of load/store i, addressed per row (row tiles: one value).
  auto access = [&](const PtoInstr& in) {
    const int t = in.op == PtoOpcode::kTLoad ? in.dst : in.srcs[0];
    return MakeAccess(Viewed(p.buffers[in.buffer], in), fn.tile, in.index,
                      is_row(t) ? rank - 1 : in.reduce_dim, in.stride_dynamic);
  };
  // " + i0 * s0 + ..": this row's place in an access.
  auto row_offset = [](const Access& a) {
    std::string at;
    for (int k = 0; k < 3; ++k) {
      if (a.strides4_text[k] != "0") absl::StrAppend(&at, " + i", k, " * ", a.strides4_text[k]);
    }
    return at;
  };
  auto contiguous_f32 = [&](const PtoInstr& in) {
    const Access a = access(in);
    return p.buffers[in.buffer].dtype == pto::v1::DT_FP32 && in.view_shape.empty() &&
           !a.bcast3 && a.strides4_text[3] == "1";
  };
  // Softmax's middles (FusesSubExpSum, with no GM-direct operands planned).
  const DirectPlan none = NoDirectOperands(n);
  const std::vector<bool> no_columns(fn.num_tiles, false);
  std::vector<bool> triple(n, false);
  for (int i = 0; i < n; ++i) {
    if (FusesSubExpSum(fn, i, is_row, no_columns, none)) {
      triple[i] = true;
      i += 2;
    }
  }
  std::vector<int> loaded, stored;
  for (const PtoInstr& in : fn.body) {
    if (in.op == PtoOpcode::kTLoad) loaded.push_back(in.buffer);
    if (in.op == PtoOpcode::kTStore) stored.push_back(in.buffer);
  }
  auto both = [&](int b) {
    return std::find(loaded.begin(), loaded.end(), b) != loaded.end() &&
           std::find(stored.begin(), stored.end(), b) != stored.end();
  };
  // Loads read in place: every reader (until the tile is written again)
  // takes exactly c values: a row reduction, or x of a fused softmax middle.
  std::vector<bool> in_place(n, false);
  for (int i = 0; i < n; ++i) {
    const PtoInstr& in = fn.body[i];
    if (in.op != PtoOpcode::kTLoad || is_row(in.dst) || in.reduce_dim >= 0 ||
        storage(in.dst) != pto::v1::DT_FP32 || !contiguous_f32(in) || both(in.buffer)) {
      continue;
    }
    bool exact = true;
    for (int j = i + 1; exact && j < n; ++j) {
      const PtoInstr& r = fn.body[j];
      if (std::find(r.srcs.begin(), r.srcs.end(), in.dst) != r.srcs.end()) {
        exact = r.op != PtoOpcode::kTStore &&
                (r.reduce_dim >= 0 ||
                 (triple[j] && r.srcs[0] == in.dst && r.srcs[1] != in.dst));
      }
      if (r.op != PtoOpcode::kTStore && r.dst == in.dst) break;
    }
    in_place[i] = exact;
  }
  // The last elementwise instruction, written into GM when a contiguous f32
  // store alone reads its result (writes_store[i]: that store).
  std::vector<int> writes_store(n, -1);
  int last = -1;
  for (int i = 0; i < n; ++i) {
    if (fn.body[i].op != PtoOpcode::kTLoad && fn.body[i].op != PtoOpcode::kTStore) last = i;
  }
  const bool in_triple = last >= 2 && (triple[last - 1] || triple[last - 2]);
  if (last >= 0 && fn.body[last].reduce_dim < 0 && !is_row(fn.body[last].dst) && !in_triple &&
      fn.body[last].dtype == pto::v1::DT_FP32 && storage(fn.body[last].dst) == pto::v1::DT_FP32 &&
      fn.body[last].op != PtoOpcode::kTCvt && fn.body[last].op != PtoOpcode::kTFill &&
      fn.body[last].op != PtoOpcode::kTReshape) {
    int store = -1, readers = 0;
    for (int j = last + 1; j < n; ++j) {
      const std::vector<int>& srcs = fn.body[j].srcs;
      if (std::find(srcs.begin(), srcs.end(), fn.body[last].dst) == srcs.end()) continue;
      ++readers;
      store = j;
    }
    if (readers == 1 && fn.body[store].op == PtoOpcode::kTStore &&
        fn.body[store].reduce_dim < 0 && contiguous_f32(fn.body[store]) &&
        std::find(loaded.begin(), loaded.end(), fn.body[store].buffer) == loaded.end()) {
      writes_store[last] = store;
    }
  }

  std::string out = FunctionHeader(index);
  // Extents of the padded dims 0..2 (the rows) and the row length c.
  std::vector<std::string> extent(4, "1");
  for (int d = 0; d < rank; ++d) {
    extent[4 - rank + d] = absl::StrCat("args[", fn.num_args - rank + d, "]");
  }
  absl::StrAppend(&out, "  const int64_t c = ", extent[3], ";\n",
                  "  const int64_t chunked = (c + pto_tile::kRowChunk - 1) / "
                  "pto_tile::kRowChunk * pto_tile::kRowChunk;\n",
                  "  for (int64_t i0 = 0; i0 < ", extent[0], "; ++i0)",
                  " for (int64_t i1 = 0; i1 < ", extent[1], "; ++i1)",
                  " for (int64_t i2 = 0; i2 < ", extent[2], "; ++i2) {\n");
  for (int t = 0; t < fn.num_tiles; ++t) {
    absl::StrAppend(&out, "    alignas(64) ", UbType(storage(t)), " t", t, "[",
                    is_row(t) ? int64_t{1} : chunks * kRowChunkElements, "];\n");
  }
  // The C++ name of each tile's current value: its array, or a row in GM.
  std::vector<std::string> name(fn.num_tiles);
  for (int t = 0; t < fn.num_tiles; ++t) name[t] = absl::StrCat("t", t);
  bool in_chunks = false;  // inside a loop over the row's chunks (k)
  auto close_chunks = [&] {
    if (in_chunks) absl::StrAppend(&out, "    }\n");
    in_chunks = false;
  };
  for (int i = 0; i < n; ++i) {
    const PtoInstr& in = fn.body[i];
    if (in.op == PtoOpcode::kTLoad || in.op == PtoOpcode::kTStore) {
      close_chunks();
      const bool load = in.op == PtoOpcode::kTLoad;
      const int t = load ? in.dst : in.srcs[0];
      if (in.reduce_dim >= 0 && !(in.reduce_dim == rank - 1 && is_row(t))) {
        return unsupported(in, "an accumulator slot");
      }
      const PtoBuffer& buf = p.buffers[in.buffer];
      const Access a = access(in);
      const std::string type = GmType(buf.dtype);
      const std::string at = absl::StrCat(a.offset, row_offset(a));
      if (load) name[t] = absl::StrCat("t", t);
      if (is_row(t)) {
        absl::StrAppend(&out, "    ",
                        load ? absl::StrCat("t", t, "[0] = pto_tile::Elem<", type,
                                            ">::Load(static_cast<const ", type, "*>(buffers[",
                                            in.buffer, "])[", at, "]);\n")
                             : absl::StrCat("static_cast<", type, "*>(buffers[", in.buffer,
                                            "])[", at, "] = pto_tile::Elem<", type,
                                            ">::Store(t", t, "[0]);\n"));
        continue;
      }
      if (in_place[i]) {
        absl::StrAppend(&out, "    const float* const g", i, " = static_cast<const float*>(buffers[",
                        in.buffer, "]) + (", at, ");\n");
        name[t] = absl::StrCat("g", i);
        continue;
      }
      const std::string s3 = a.bcast3 ? "0" : a.strides4_text[3];
      if (load) {
        absl::StrAppend(&out, "    pto_tile::TLoadRowN<", type, ">(t", t,
                        ", static_cast<const ", type, "*>(buffers[", in.buffer, "]) + (", at,
                        "), ", s3, ", c);\n");
        continue;
      }
      if (s3 != "1") return unsupported(in, "a store whose row is not contiguous");
      if (std::find(writes_store.begin(), writes_store.end(), i) != writes_store.end()) {
        // Full chunks went straight to GM; the last partial one is in t.
        const int producer = static_cast<int>(
            std::find(writes_store.begin(), writes_store.end(), i) - writes_store.begin());
        absl::StrAppend(&out, "    for (int64_t j = c / pto_tile::kRowChunk * pto_tile::kRowChunk; "
                        "j < c; ++j) o", producer, "[j] = t", t, "[j];\n");
        continue;
      }
      absl::StrAppend(&out, "    pto_tile::TStoreRowN<", type, ">(static_cast<", type,
                      "*>(buffers[", in.buffer, "]) + (", at, "), t", t, ", c);\n");
      continue;
    }
    if (static_cast<int>(in.srcs.size()) != PtoNumTileSources(in.op) ||
        static_cast<int>(in.scalars.size()) != PtoNumScalars(in.op)) {
      return absl::InternalError(absl::StrCat(
          PtoOpcodeName(in.op), ": wrong number of sources or scalars"));
    }
    if (triple[i]) {  // x - m, exp, sum: one pass over c values
      close_chunks();
      const PtoInstr& exp = fn.body[i + 1];
      const PtoInstr& sum = fn.body[i + 2];
      absl::StrAppend(&out, "    pto_tile::TSubExpSumRowN", SoftmaxExpAt(fn, i) ? "<true>" : "",
                      "(t", exp.dst, ", t", sum.dst, ", ", name[in.srcs[0]], ", ",
                      name[in.srcs[1]], ", c);\n");
      name[exp.dst] = absl::StrCat("t", exp.dst);
      name[sum.dst] = absl::StrCat("t", sum.dst);
      i += 2;
      continue;
    }
    const bool narrow = in.dtype == pto::v1::DT_FP16 || in.dtype == pto::v1::DT_BF16;
    if (in.reduce_dim >= 0) {
      const bool reduction = in.op == PtoOpcode::kTRedSum || in.op == PtoOpcode::kTRedMax ||
                             in.op == PtoOpcode::kTRedMin || in.op == PtoOpcode::kTRedProd;
      if (!reduction || in.reduce_dim != rank - 1 || !is_row(in.dst) || is_row(in.srcs[0]) ||
          storage(in.dst) != pto::v1::DT_FP32) {
        return unsupported(in, "not a last-dim reduction of a row into a row tile");
      }
      close_chunks();
      absl::StrAppend(&out, "    pto_tile::", PtoHostFunction(in.op), "RowN<",
                      narrow ? GmType(in.dtype) : "float", ">(t", in.dst, ", ",
                      name[in.srcs[0]], ", c);\n");
      name[in.dst] = absl::StrCat("t", in.dst);
      continue;
    }
    if (in.op == PtoOpcode::kTArange) return unsupported(in, "it reads the tile's offset");
    for (int src : in.srcs) {
      if (name[src] != absl::StrCat("t", src)) {
        return absl::InternalError(absl::StrCat("function ", fn.name, ": a row read in place "
                                                "by an elementwise instruction"));
      }
    }
    const bool typed = in.op == PtoOpcode::kTCvt || in.op == PtoOpcode::kTFill ||
                       in.op == PtoOpcode::kTReshape;
    const bool wrap = in.dtype == pto::v1::DT_INT32 && WrapsInt32(in.op);
    std::string round_to =
        typed || narrow || wrap ? absl::StrCat(", ", GmType(in.dtype)) : std::string();
    if (in.op == PtoOpcode::kTReshape) {  // and the source's element type
      absl::StrAppend(&round_to, ", ", GmType(ValueType(fn, i, in.srcs[0], in.dtype)));
    }
    const int scalar_tile = in.srcs.empty() ? in.dst : in.srcs[0];
    const pto::v1::DataType scalar_values =
        in.srcs.empty() ? in.dtype : ValueType(fn, i, in.srcs[0], in.dtype);
    std::vector<std::string> scalars;
    for (size_t j = 0; j < in.scalars.size(); ++j) {
      scalars.push_back(ScalarOperand(in, j, storage(scalar_tile), scalar_values, rank));
    }
    const std::string tail = scalars.empty() ? "" : absl::StrCat(", ", absl::StrJoin(scalars, ", "));
    name[in.dst] = absl::StrCat("t", in.dst);
    if (is_row(in.dst)) {  // one value per row
      for (int src : in.srcs) {
        if (!is_row(src)) return unsupported(in, "a row value computed from a full tile");
      }
      close_chunks();
      std::vector<std::string> args = {absl::StrCat("t", in.dst)};
      for (int src : in.srcs) args.push_back(absl::StrCat("t", src));
      absl::StrAppend(&out, "    pto_tile::", PtoHostFunction(in.op), "<1", round_to, ">(",
                      absl::StrJoin(args, ", "), tail, ");\n");
      continue;
    }
    std::string dst = absl::StrCat("t", in.dst, " + k");
    if (writes_store[i] >= 0) {
      const PtoInstr& st = fn.body[writes_store[i]];
      const Access a = access(st);
      close_chunks();
      absl::StrAppend(&out, "    float* const o", i, " = static_cast<float*>(buffers[", st.buffer,
                      "]) + (", a.offset, row_offset(a), ");\n");
      dst = absl::StrCat("(k + pto_tile::kRowChunk <= c ? o", i, " : t", in.dst, ") + k");
    }
    if (!in_chunks) {
      absl::StrAppend(&out, "    for (int64_t k = 0; k < chunked; k += pto_tile::kRowChunk) {\n");
      in_chunks = true;
    }
    std::vector<std::string> args = {dst};
    bool rows_form = false;
    std::vector<const char*> layout;
    for (int src : in.srcs) {
      args.push_back(is_row(src) ? absl::StrCat("t", src) : absl::StrCat("t", src, " + k"));
      layout.push_back(is_row(src) ? "pto_tile::kRow" : "pto_tile::kFull");
      rows_form = rows_form || is_row(src);
    }
    if (rows_form) {
      if (in.srcs.size() != 2 || !PtoHasRowsForm(in.op)) {
        return unsupported(in, "no form that reads a row tile");
      }
      absl::StrAppend(&out, "      pto_tile::", PtoHostFunction(in.op), "Rows<1, pto_tile::kRowChunk, ",
                      layout[0], ", ", layout[1], round_to, ">(", absl::StrJoin(args, ", "),
                      tail, ");\n");
      continue;
    }
    absl::StrAppend(&out, "      pto_tile::", PtoHostFunction(in.op), "<pto_tile::kRowChunk",
                    round_to, ">(", absl::StrJoin(args, ", "), tail, ");\n");
  }
  close_chunks();
  absl::StrAppend(&out, "  }\n}\n\n");
  return out;
}

}  // namespace pto::compiler::host_emit
