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

namespace {

// " + i0 * s0 + ..": a row's place in access `a` (rows i0, i1, i2), its
// strides as text (run-time strides included).
std::string RuntimeRowOffset(const Access& a) {
  std::string at;
  for (int k = 0; k < 3; ++k) {
    if (a.strides4_text[k] != "0") absl::StrAppend(&at, " + i", k, " * ", a.strides4_text[k]);
  }
  return at;
}

// Emits the generic function `index` of `p`, a fused row group over a
// run-time row length (RuntimeRows): first the plan (softmax middles, loads
// read in place, the elementwise result written into GM), then the row loop
// and one statement per instruction.
class RuntimeRowEmitter {
 public:
  RuntimeRowEmitter(const PtoProgram& p, int index)
      : p_(p),
        index_(index),
        fn_(p.functions[index]),
        rank_(static_cast<int>(fn_.tile.size())),
        n_(static_cast<int>(fn_.body.size())),
        chunks_((fn_.tile.back() + kRowChunkElements - 1) / kRowChunkElements) {}

  absl::StatusOr<std::string> Emit() {
    if (absl::Status s = CheckBuffers(); !s.ok()) return s;
    PlanSoftmaxMiddles();
    PlanInPlaceLoads();
    PlanGmWrite();
    EmitRowLoop();
    for (int i = 0; i < n_; ++i) {
      const PtoInstr& in = fn_.body[i];
      absl::Status s;
      if (in.op == PtoOpcode::kTLoad || in.op == PtoOpcode::kTStore) {
        s = EmitLoadOrStore(i);
      } else if (static_cast<int>(in.srcs.size()) != PtoNumTileSources(in.op) ||
                 static_cast<int>(in.scalars.size()) != PtoNumScalars(in.op)) {
        s = absl::InternalError(absl::StrCat(
            PtoOpcodeName(in.op), ": wrong number of sources or scalars"));
      } else if (triple_[i]) {
        EmitSoftmaxMiddle(i);
        i += 2;
      } else if (in.reduce_dim >= 0) {
        s = EmitReduction(i);
      } else {
        s = EmitElementwise(i);
      }
      if (!s.ok()) return s;
    }
    CloseChunks();
    absl::StrAppend(&out_, "  }\n}\n\n");
    return std::move(out_);
  }

 private:
  bool IsRow(int t) const {
    return t >= 0 && t < static_cast<int>(fn_.ub_rows.size()) && fn_.ub_rows[t];
  }
  pto::v1::DataType Storage(int t) const {
    return t >= 0 && t < static_cast<int>(fn_.ub_types.size()) ? fn_.ub_types[t]
                                                                : pto::v1::DT_FP32;
  }
  absl::Status Unsupported(const PtoInstr& in, const std::string& why) const {
    return absl::InternalError(absl::StrCat("function ", fn_.name, ": ", PtoOpcodeName(in.op),
                                            " in a row group over a symbolic row: ", why));
  }
  // The access of a load or store, addressed per row (row tiles: one value).
  Access AccessOf(const PtoInstr& in) const {
    const int t = in.op == PtoOpcode::kTLoad ? in.dst : in.srcs[0];
    return MakeAccess(Viewed(p_.buffers[in.buffer], in), fn_.tile, in.index,
                      IsRow(t) ? rank_ - 1 : in.reduce_dim, in.stride_dynamic);
  }
  bool ContiguousF32(const PtoInstr& in) const {
    const Access a = AccessOf(in);
    return p_.buffers[in.buffer].dtype == pto::v1::DT_FP32 && in.view_shape.empty() &&
           !a.bcast3 && a.strides4_text[3] == "1";
  }
  bool Loaded(int b) const {
    return std::find(loaded_.begin(), loaded_.end(), b) != loaded_.end();
  }
  bool Stored(int b) const {
    return std::find(stored_.begin(), stored_.end(), b) != stored_.end();
  }

  // Every load and store names a buffer of the program; fills loaded_ and
  // stored_.
  absl::Status CheckBuffers() {
    for (const PtoInstr& in : fn_.body) {
      if ((in.op == PtoOpcode::kTLoad || in.op == PtoOpcode::kTStore) &&
          (in.buffer < 0 || in.buffer >= static_cast<int>(p_.buffers.size()))) {
        return absl::InternalError("PTO instruction names a missing buffer");
      }
    }
    for (const PtoInstr& in : fn_.body) {
      if (in.op == PtoOpcode::kTLoad) loaded_.push_back(in.buffer);
      if (in.op == PtoOpcode::kTStore) stored_.push_back(in.buffer);
    }
    return absl::OkStatus();
  }

  // Softmax's middles (FusesSubExpSum, with no GM-direct operands planned).
  void PlanSoftmaxMiddles() {
    const DirectPlan none = NoDirectOperands(n_);
    const std::vector<bool> no_columns(fn_.num_tiles, false);
    const auto is_row = [this](int t) { return IsRow(t); };
    triple_.assign(n_, false);
    for (int i = 0; i < n_; ++i) {
      if (FusesSubExpSum(fn_, i, is_row, no_columns, none)) {
        triple_[i] = true;
        i += 2;
      }
    }
  }

  // Loads read in place: every reader (until the tile is written again)
  // takes exactly c values: a row reduction, or x of a fused softmax middle.
  void PlanInPlaceLoads() {
    in_place_.assign(n_, false);
    for (int i = 0; i < n_; ++i) {
      const PtoInstr& in = fn_.body[i];
      if (in.op != PtoOpcode::kTLoad || IsRow(in.dst) || in.reduce_dim >= 0 ||
          Storage(in.dst) != pto::v1::DT_FP32 || !ContiguousF32(in) ||
          (Loaded(in.buffer) && Stored(in.buffer))) {
        continue;
      }
      bool exact = true;
      for (int j = i + 1; exact && j < n_; ++j) {
        const PtoInstr& r = fn_.body[j];
        if (std::find(r.srcs.begin(), r.srcs.end(), in.dst) != r.srcs.end()) {
          exact = r.op != PtoOpcode::kTStore &&
                  (r.reduce_dim >= 0 ||
                   (triple_[j] && r.srcs[0] == in.dst && r.srcs[1] != in.dst));
        }
        if (r.op != PtoOpcode::kTStore && r.dst == in.dst) break;
      }
      in_place_[i] = exact;
    }
  }

  // The last elementwise instruction, written into GM when a contiguous f32
  // store alone reads its result (writes_store_[i]: that store).
  void PlanGmWrite() {
    writes_store_.assign(n_, -1);
    int last = -1;
    for (int i = 0; i < n_; ++i) {
      if (fn_.body[i].op != PtoOpcode::kTLoad && fn_.body[i].op != PtoOpcode::kTStore) last = i;
    }
    const bool in_triple = last >= 2 && (triple_[last - 1] || triple_[last - 2]);
    if (last < 0 || fn_.body[last].reduce_dim >= 0 || IsRow(fn_.body[last].dst) || in_triple ||
        fn_.body[last].dtype != pto::v1::DT_FP32 ||
        Storage(fn_.body[last].dst) != pto::v1::DT_FP32 ||
        fn_.body[last].op == PtoOpcode::kTCvt || fn_.body[last].op == PtoOpcode::kTFill ||
        fn_.body[last].op == PtoOpcode::kTReshape) {
      return;
    }
    int store = -1, readers = 0;
    for (int j = last + 1; j < n_; ++j) {
      const std::vector<int>& srcs = fn_.body[j].srcs;
      if (std::find(srcs.begin(), srcs.end(), fn_.body[last].dst) == srcs.end()) continue;
      ++readers;
      store = j;
    }
    if (readers == 1 && fn_.body[store].op == PtoOpcode::kTStore &&
        fn_.body[store].reduce_dim < 0 && ContiguousF32(fn_.body[store]) &&
        !Loaded(fn_.body[store].buffer)) {
      writes_store_[last] = store;
    }
  }

  // The function's header, the row length c, the loop over rows and the
  // tiles' arrays.
  void EmitRowLoop() {
    out_ = FunctionHeader(index_);
    // Extents of the padded dims 0..2 (the rows) and the row length c.
    std::vector<std::string> extent(4, "1");
    for (int d = 0; d < rank_; ++d) {
      extent[4 - rank_ + d] = absl::StrCat("args[", fn_.num_args - rank_ + d, "]");
    }
    absl::StrAppend(&out_, "  const int64_t c = ", extent[3], ";\n",
                    "  const int64_t chunked = (c + pto_tile::kRowChunk - 1) / "
                    "pto_tile::kRowChunk * pto_tile::kRowChunk;\n",
                    "  for (int64_t i0 = 0; i0 < ", extent[0], "; ++i0)",
                    " for (int64_t i1 = 0; i1 < ", extent[1], "; ++i1)",
                    " for (int64_t i2 = 0; i2 < ", extent[2], "; ++i2) {\n");
    for (int t = 0; t < fn_.num_tiles; ++t) {
      absl::StrAppend(&out_, "    alignas(64) ", UbType(Storage(t)), " t", t, "[",
                      IsRow(t) ? int64_t{1} : chunks_ * kRowChunkElements, "];\n");
    }
    name_.resize(fn_.num_tiles);
    for (int t = 0; t < fn_.num_tiles; ++t) name_[t] = absl::StrCat("t", t);
  }

  void CloseChunks() {
    if (in_chunks_) absl::StrAppend(&out_, "    }\n");
    in_chunks_ = false;
  }

  // Load or store i: a row tile's one value, a row read in place, c values
  // copied, or the last partial chunk of a row written into GM.
  absl::Status EmitLoadOrStore(int i) {
    const PtoInstr& in = fn_.body[i];
    CloseChunks();
    const bool load = in.op == PtoOpcode::kTLoad;
    const int t = load ? in.dst : in.srcs[0];
    if (in.reduce_dim >= 0 && !(in.reduce_dim == rank_ - 1 && IsRow(t))) {
      return Unsupported(in, "an accumulator slot");
    }
    const PtoBuffer& buf = p_.buffers[in.buffer];
    const Access a = AccessOf(in);
    const std::string type = GmType(buf.dtype);
    const std::string at = absl::StrCat(a.offset, RuntimeRowOffset(a));
    if (load) name_[t] = absl::StrCat("t", t);
    if (IsRow(t)) {
      absl::StrAppend(&out_, "    ",
                      load ? absl::StrCat("t", t, "[0] = pto_tile::Elem<", type,
                                          ">::Load(static_cast<const ", type, "*>(buffers[",
                                          in.buffer, "])[", at, "]);\n")
                           : absl::StrCat("static_cast<", type, "*>(buffers[", in.buffer,
                                          "])[", at, "] = pto_tile::Elem<", type,
                                          ">::Store(t", t, "[0]);\n"));
      return absl::OkStatus();
    }
    if (in_place_[i]) {
      absl::StrAppend(&out_, "    const float* const g", i, " = static_cast<const float*>(buffers[",
                      in.buffer, "]) + (", at, ");\n");
      name_[t] = absl::StrCat("g", i);
      return absl::OkStatus();
    }
    const std::string s3 = a.bcast3 ? "0" : a.strides4_text[3];
    if (load) {
      absl::StrAppend(&out_, "    pto_tile::TLoadRowN<", type, ">(t", t,
                      ", static_cast<const ", type, "*>(buffers[", in.buffer, "]) + (", at,
                      "), ", s3, ", c);\n");
      return absl::OkStatus();
    }
    if (s3 != "1") return Unsupported(in, "a store whose row is not contiguous");
    const auto producer = std::find(writes_store_.begin(), writes_store_.end(), i);
    if (producer != writes_store_.end()) {
      // Full chunks went straight to GM; the last partial one is in t.
      absl::StrAppend(&out_, "    for (int64_t j = c / pto_tile::kRowChunk * pto_tile::kRowChunk; "
                      "j < c; ++j) o", producer - writes_store_.begin(), "[j] = t", t,
                      "[j];\n");
      return absl::OkStatus();
    }
    absl::StrAppend(&out_, "    pto_tile::TStoreRowN<", type, ">(static_cast<", type,
                    "*>(buffers[", in.buffer, "]) + (", at, "), t", t, ", c);\n");
    return absl::OkStatus();
  }

  // x - m, exp, sum (instructions i..i+2): one pass over c values.
  void EmitSoftmaxMiddle(int i) {
    const PtoInstr& in = fn_.body[i];
    CloseChunks();
    const PtoInstr& exp = fn_.body[i + 1];
    const PtoInstr& sum = fn_.body[i + 2];
    absl::StrAppend(&out_, "    pto_tile::TSubExpSumRowN", SoftmaxExpAt(fn_, i) ? "<true>" : "",
                    "(t", exp.dst, ", t", sum.dst, ", ", name_[in.srcs[0]], ", ",
                    name_[in.srcs[1]], ", c);\n");
    name_[exp.dst] = absl::StrCat("t", exp.dst);
    name_[sum.dst] = absl::StrCat("t", sum.dst);
  }

  static bool Narrow(const PtoInstr& in) {
    return in.dtype == pto::v1::DT_FP16 || in.dtype == pto::v1::DT_BF16;
  }

  // A last-dim reduction of a row into a row tile, over exactly c values.
  absl::Status EmitReduction(int i) {
    const PtoInstr& in = fn_.body[i];
    const bool reduction = in.op == PtoOpcode::kTRedSum || in.op == PtoOpcode::kTRedMax ||
                           in.op == PtoOpcode::kTRedMin || in.op == PtoOpcode::kTRedProd;
    if (!reduction || in.reduce_dim != rank_ - 1 || !IsRow(in.dst) || IsRow(in.srcs[0]) ||
        Storage(in.dst) != pto::v1::DT_FP32) {
      return Unsupported(in, "not a last-dim reduction of a row into a row tile");
    }
    CloseChunks();
    absl::StrAppend(&out_, "    pto_tile::", PtoHostFunction(in.op), "RowN<",
                    Narrow(in) ? GmType(in.dtype) : "float", ">(t", in.dst, ", ",
                    name_[in.srcs[0]], ", c);\n");
    name_[in.dst] = absl::StrCat("t", in.dst);
    return absl::OkStatus();
  }

  // An elementwise instruction: on row values once per row, else over the
  // row's chunks (in the open chunk loop), its result into GM where planned.
  absl::Status EmitElementwise(int i) {
    const PtoInstr& in = fn_.body[i];
    if (PtoReadsTileOffset(in.op)) return Unsupported(in, "it reads the tile's offset");
    for (int src : in.srcs) {
      if (name_[src] != absl::StrCat("t", src)) {
        return absl::InternalError(absl::StrCat("function ", fn_.name, ": a row read in place "
                                                "by an elementwise instruction"));
      }
    }
    const bool typed = in.op == PtoOpcode::kTCvt || in.op == PtoOpcode::kTFill ||
                       in.op == PtoOpcode::kTReshape;
    const bool wrap = in.dtype == pto::v1::DT_INT32 && WrapsInt32(in.op);
    std::string round_to =
        typed || Narrow(in) || wrap ? absl::StrCat(", ", GmType(in.dtype)) : std::string();
    if (in.op == PtoOpcode::kTReshape) {  // and the source's element type
      absl::StrAppend(&round_to, ", ", GmType(ValueType(fn_, i, in.srcs[0], in.dtype)));
    }
    const int scalar_tile = in.srcs.empty() ? in.dst : in.srcs[0];
    const pto::v1::DataType scalar_values =
        in.srcs.empty() ? in.dtype : ValueType(fn_, i, in.srcs[0], in.dtype);
    std::vector<std::string> scalars;
    for (size_t j = 0; j < in.scalars.size(); ++j) {
      scalars.push_back(ScalarOperand(in, j, Storage(scalar_tile), scalar_values, rank_));
    }
    const std::string tail = scalars.empty() ? "" : absl::StrCat(", ", absl::StrJoin(scalars, ", "));
    name_[in.dst] = absl::StrCat("t", in.dst);
    if (IsRow(in.dst)) {  // one value per row
      for (int src : in.srcs) {
        if (!IsRow(src)) return Unsupported(in, "a row value computed from a full tile");
      }
      CloseChunks();
      std::vector<std::string> args = {absl::StrCat("t", in.dst)};
      for (int src : in.srcs) args.push_back(absl::StrCat("t", src));
      absl::StrAppend(&out_, "    pto_tile::", PtoHostFunction(in.op), "<1", round_to, ">(",
                      absl::StrJoin(args, ", "), tail, ");\n");
      return absl::OkStatus();
    }
    std::string dst = absl::StrCat("t", in.dst, " + k");
    if (writes_store_[i] >= 0) {
      const PtoInstr& st = fn_.body[writes_store_[i]];
      const Access a = AccessOf(st);
      CloseChunks();
      absl::StrAppend(&out_, "    float* const o", i, " = static_cast<float*>(buffers[", st.buffer,
                      "]) + (", a.offset, RuntimeRowOffset(a), ");\n");
      dst = absl::StrCat("(k + pto_tile::kRowChunk <= c ? o", i, " : t", in.dst, ") + k");
    }
    if (!in_chunks_) {
      absl::StrAppend(&out_, "    for (int64_t k = 0; k < chunked; k += pto_tile::kRowChunk) {\n");
      in_chunks_ = true;
    }
    std::vector<std::string> args = {dst};
    bool rows_form = false;
    std::vector<const char*> layout;
    for (int src : in.srcs) {
      args.push_back(IsRow(src) ? absl::StrCat("t", src) : absl::StrCat("t", src, " + k"));
      layout.push_back(IsRow(src) ? "pto_tile::kRow" : "pto_tile::kFull");
      rows_form = rows_form || IsRow(src);
    }
    if (rows_form) {
      if (in.srcs.size() != 2 || !PtoHasRowsForm(in.op)) {
        return Unsupported(in, "no form that reads a row tile");
      }
      absl::StrAppend(&out_, "      pto_tile::", PtoHostFunction(in.op), "Rows<1, pto_tile::kRowChunk, ",
                      layout[0], ", ", layout[1], round_to, ">(", absl::StrJoin(args, ", "),
                      tail, ");\n");
      return absl::OkStatus();
    }
    absl::StrAppend(&out_, "      pto_tile::", PtoHostFunction(in.op), "<pto_tile::kRowChunk",
                    round_to, ">(", absl::StrJoin(args, ", "), tail, ");\n");
    return absl::OkStatus();
  }

  const PtoProgram& p_;
  const int index_;
  const PtoFunction& fn_;
  const int rank_;
  const int n_;
  const int64_t chunks_;  // a full tile's chunks (pto_tile.h kRowChunk)
  std::vector<int> loaded_, stored_;  // the buffers loads and stores name
  std::vector<bool> triple_;          // starts a fused softmax middle
  std::vector<bool> in_place_;        // a load read in place
  std::vector<int> writes_store_;     // per instruction: the store it writes for, or -1
  std::string out_;
  std::vector<std::string> name_;  // each tile's current value: its array, or a row in GM
  bool in_chunks_ = false;         // inside a loop over the row's chunks (k)
};

}  // namespace

absl::StatusOr<std::string> EmitRuntimeRowFunction(const PtoProgram& p, int index) {
  return RuntimeRowEmitter(p, index).Emit();
}

}  // namespace pto::compiler::host_emit
