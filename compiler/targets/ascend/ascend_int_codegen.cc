// FunctionEmitter's integer tiles (ascend_function_emitter.h).
#include "compiler/targets/ascend/ascend_function_emitter.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/dtype.h"
#include "compiler/targets/ascend/ascend_bf16.h"
#include "compiler/targets/ascend/ascend_codegen.h"
#include "compiler/targets/ascend/ascend_cube_codegen.h"
#include "compiler/targets/ascend/ascend_int64.h"
#include "compiler/targets/ascend/ascend_int_math.h"
#include "compiler/targets/ascend/ascend_math.h"
#include "compiler/targets/ascend/ascend_scan.h"
#include "compiler/targets/ascend/ascend_sort_codegen.h"
#include "compiler/targets/ascend/ascend_unmapped.h"
#include "compiler/targets/host/host_function_plan.h"
#include "compiler/targets/memory_model.h"
#include "runtime/kernel_abi.h"

namespace pto::compiler::ascend {

// Integer tiles. A tile the program stores as INT64 (UbStorageType) holds
// INT32 values in an int32 tile; INT64 values are moved between buffers in
// an int64 tile and not computed on (the vector unit has no 64-bit
// arithmetic), except an arg reduction's positions, which are computed in
// int32 tiles and widened to INT64 in GM (TCVT through an int64 tile).
absl::Status FunctionEmitter::PlanIntTiles() {
  elem_.assign(fn_.num_tiles, Elem::kF32);
  bool arg = false;
  for (const PtoInstr& in : fn_.body) {
    arg = arg || in.op == PtoOpcode::kTArgFirst || in.op == PtoOpcode::kTArgSel;
  }
  // A maximum or minimum of INT32 values across tiles keeps its partial
  // results in an INT64 workspace: int32 values all the same. Such a partial
  // (TREDMAX/TREDMIN of a tile loaded from an INT32 buffer), and a load of an
  // INT64 workspace read only by TREDMAX/TREDMIN into INT32, hold int32 values.
  auto loaded_from = [&](int tile, auto pred) {
    for (const PtoInstr& in : fn_.body) {
      if (in.dst == tile) return in.op == PtoOpcode::kTLoad && pred(p_.buffers[in.buffer]);
    }
    return false;
  };
  auto extremum = [](const PtoInstr& in) {
    return in.op == PtoOpcode::kTRedMax || in.op == PtoOpcode::kTRedMin;
  };
  auto int32_valued = [&](const PtoInstr& in) {
    if (in.dtype == pto::v1::DT_INT32) return true;
    if (extremum(in)) {
      return loaded_from(in.srcs[0], [](const PtoBuffer& b) { return b.dtype == pto::v1::DT_INT32; });
    }
    if (in.op != PtoOpcode::kTLoad || p_.buffers[in.buffer].param >= 0) return false;
    bool read = false;
    for (const PtoInstr& r : fn_.body) {
      if (std::find(r.srcs.begin(), r.srcs.end(), in.dst) == r.srcs.end()) continue;
      if (!extremum(r) || r.dtype != pto::v1::DT_INT32) return false;
      read = true;
    }
    return read;
  };
  // MGATHER's and MSCATTER's index tiles: INT64 indices loaded from GM are
  // narrowed to int32 (TCVT), each later checked against its dim's extent.
  std::set<int> index_tiles;
  for (const PtoInstr& in : fn_.body) {
    if (in.op == PtoOpcode::kMGather && !in.srcs.empty()) index_tiles.insert(in.srcs[0]);
    if (in.op == PtoOpcode::kMScatter && in.srcs.size() == 2) index_tiles.insert(in.srcs[1]);
  }
  // INT64 values computed on (ascend_int64.h): a tile of them is a words
  // tile where every instruction writing it is a TLOAD of INT64 values or
  // one the words code maps into INT64 (sums, products, arithmetic, casts,
  // TFILL, TMOV), every one reading it a TSTORE, one of
  // those, a comparison or a cast, and some instruction computes on it.
  // (In a function with an arg reduction, only sums and products: its INT64
  // positions are int32 tiles.)
  auto int64_reduction = [](const PtoInstr& in) {
    return (in.op == PtoOpcode::kTRedSum || in.op == PtoOpcode::kTRedProd) &&
           in.dtype == pto::v1::DT_INT64;
  };
  auto int64_op = [&](const PtoInstr& in) {
    if (in.dtype != pto::v1::DT_INT64) return false;
    if (int64_reduction(in)) return true;
    if (arg) return false;
    switch (in.op) {
      case PtoOpcode::kTAdd:
      case PtoOpcode::kTSub: case PtoOpcode::kTMul: case PtoOpcode::kTMax: case PtoOpcode::kTMin:
      case PtoOpcode::kTNeg: case PtoOpcode::kTAbs: case PtoOpcode::kTAddS:
      case PtoOpcode::kTSubS: case PtoOpcode::kTMulS: case PtoOpcode::kTMaxS:
      case PtoOpcode::kTMinS: case PtoOpcode::kTRSubS: case PtoOpcode::kTMov:
      case PtoOpcode::kTCvt: case PtoOpcode::kTFill:
        return true;
      default:
        return false;
    }
  };
  for (int t = 0; t < fn_.num_tiles && t < static_cast<int>(fn_.ub_types.size()); ++t) {
    if (fn_.ub_types[t] != pto::v1::DT_INT64) continue;
    bool int32 = true, moved_only = true, loaded = true, words = true, computed = false;
    const PtoInstr* user = nullptr;
    for (const PtoInstr& in : fn_.body) {
      const bool reads = std::find(in.srcs.begin(), in.srcs.end(), t) != in.srcs.end();
      if (in.dst == t) {
        computed = computed || int64_op(in);
        words = words && (int64_op(in) || (in.op == PtoOpcode::kTLoad &&
                                           p_.buffers[in.buffer].dtype == pto::v1::DT_INT64));
      }
      if (reads) {
        computed = computed || int64_op(in) || (!arg && (Compares(in.op) || in.op == PtoOpcode::kTCvt));
        words = words && (int64_op(in) || in.op == PtoOpcode::kTStore ||
                          (!arg && (Compares(in.op) || in.op == PtoOpcode::kTCvt)));
      }
      if (in.dst == t) {
        int32 = int32 && int32_valued(in);
        loaded = loaded && (in.op == PtoOpcode::kTLoad || in.dtype == pto::v1::DT_INT32);
        if (in.op != PtoOpcode::kTLoad && in.op != PtoOpcode::kMGather) {
          moved_only = false;
          if (user == nullptr) user = &in;
        }
      }
      if (reads && in.op != PtoOpcode::kTStore) {
        moved_only = false;
        if (user == nullptr) user = &in;
      }
    }
    if (int32) {
      elem_[t] = Elem::kI32;
    } else if (words && computed) {
      elem_[t] = Elem::kWords;
    } else if (arg || (index_tiles.count(t) && loaded)) {
      elem_[t] = Elem::kI32;
    } else if (moved_only) {
      elem_[t] = Elem::kI64;
    } else {
      return Unsupported(user->op, absl::StrCat("on tile %t", t, " of DT_INT64 values (not an "
                                                "instruction the target computes INT64 values by)"));
    }
  }
  return absl::OkStatus();
}

void FunctionEmitter::SplitMixedIntTiles() {
  // The type of the values an instruction writes: a load's buffer's, else
  // its dtype.
  auto written = [&](const PtoInstr& in) {
    return in.op == PtoOpcode::kTLoad && in.buffer >= 0 &&
                   in.buffer < static_cast<int>(p_.buffers.size())
               ? p_.buffers[in.buffer].dtype
               : in.dtype;
  };
  const int tiles = fn_.num_tiles;
  for (int t = 0; t < tiles && t < static_cast<int>(fn_.ub_types.size()); ++t) {
    if (fn_.ub_types[t] != pto::v1::DT_INT64) continue;
    bool int32 = false, int64 = false;
    for (const PtoInstr& in : fn_.body) {
      if (in.dst != t) continue;
      int32 = int32 || written(in) == pto::v1::DT_INT32;
      int64 = int64 || written(in) == pto::v1::DT_INT64;
    }
    if (!int32 || !int64) continue;
    // Each write of INT64 values starts a new tile, read until t's next write.
    int now = t;
    for (PtoInstr& in : fn_.body) {
      for (int& s : in.srcs) {
        if (s == t) s = now;
      }
      if (in.dst != t) continue;
      if (written(in) == pto::v1::DT_INT64) {
        now = fn_.num_tiles++;
        fn_.ub_types.push_back(pto::v1::DT_INT64);
        const bool row = t < static_cast<int>(fn_.ub_rows.size()) && fn_.ub_rows[t];
        fn_.ub_rows.resize(now, false);
        fn_.ub_rows.push_back(row);
        in.dst = now;
      } else {
        now = t;
      }
    }
  }
}

bool FunctionEmitter::IsIntInstr(const PtoInstr& in) const {
  if (elem_[in.dst] != Elem::kF32) return true;
  for (int s : in.srcs) {
    if (elem_[s] != Elem::kF32) return true;
  }
  return (in.op == PtoOpcode::kTCvt || in.op == PtoOpcode::kTFill ||
          in.op == PtoOpcode::kTArange) &&
         IntGm(in.dtype);
}

// TLOAD/TSTORE of an integer buffer: INT32 (INT64) straight into an int32
// (int64) tile; an arg reduction's INT64 positions through the int64
// staging tile and TCVT; INT8, INT16 and UINT8 through a staging tile of
// their type and TCVT into an f32 tile (exact both ways: the tile holds
// integers of the type).
absl::Status FunctionEmitter::EmitIntMove(const PtoInstr& in, const std::string& g, int tile,
                                          Kind kind, bool row_nd) {
  const pto::v1::DataType dtype = p_.buffers[in.buffer].dtype;
  const bool store = in.op == PtoOpcode::kTStore;
  const Elem e = elem_[tile];
  const bool wide = dtype == pto::v1::DT_INT32 || dtype == pto::v1::DT_INT64;
  if (row_nd) {
    // Positions stored to INT64 rows that lie unevenly in GM: widened by
    // TCVT into a RowMajor [rows, 1] int64 tile, whose store takes the
    // access's strides as they are (as TMOV into `rnd` does for f32).
    if (!store || dtype != pto::v1::DT_INT64 || e != Elem::kI32) {
      return Unsupported(in.op, "of an integer row tile whose rows are not evenly spaced in GM");
    }
    need_long_nd_ = true;
    Sync(Pipe::kV);
    Line(absl::StrCat("TCVT(lrnd, ", T(tile), ", RoundMode::CAST_NONE);"));
    Sync(Pipe::kMte3);
    Line(absl::StrCat("TSTORE(", g, ", lrnd);"));
    return absl::OkStatus();
  }
  if (kind == Kind::kCol && (!store || e != Elem::kI32)) {
    return Unsupported(in.op, "of an integer column tile other than a stored int32 one");
  }
  if (wide && e == Elem::kF32) {
    return Unsupported(in.op, absl::StrCat("of a ", pto::v1::DataType_Name(dtype), " buffer from an f32 tile"));
  }
  if (!wide && e != Elem::kF32) {
    return Unsupported(in.op, absl::StrCat("of a ", pto::v1::DataType_Name(dtype), " buffer from an integer tile"));
  }
  std::string stage = T(tile);  // the tile TLOAD writes or TSTORE reads
  if (dtype == pto::v1::DT_INT64 && e == Elem::kI32) {
    if (kind == Kind::kRow) {
      need_long_row_ = true;
      stage = "lrow";
    } else if (kind == Kind::kCol) {
      need_long_col_ = true;
      stage = "lcol";
    } else {
      need_long_ = true;
      stage = "ltmp";
    }
  } else if (dtype == pto::v1::DT_INT32 && e == Elem::kI64) {
    return Unsupported(in.op, "of an INT32 buffer from an INT64 tile");
  } else if (!wide) {
    if (kind != Kind::kFull) {
      return Unsupported(in.op, absl::StrCat("of a ", pto::v1::DataType_Name(dtype), " row tile"));
    }
    if (dtype == pto::v1::DT_UINT8) {
      stage = ByteTmp();
    } else if (dtype == pto::v1::DT_INT8) {
      need_i8_ = true;
      stage = "i8tmp";
    } else {
      need_i16_ = true;
      stage = "i16tmp";
    }
  }
  if (store) {
    Sync(Pipe::kV);
    if (stage != T(tile)) {
      Line(absl::StrCat("TCVT(", stage, ", ", T(tile), ", RoundMode::",
                        wide ? "CAST_NONE" : "CAST_RINT", ");"));
    }
    Sync(Pipe::kMte3);
    Line(absl::StrCat("TSTORE(", g, ", ", stage, ");"));
  } else {
    Sync(Pipe::kMte2);
    Line(absl::StrCat("TLOAD(", stage, ", ", g, ");"));
    if (stage != T(tile)) {
      Sync(Pipe::kV);
      Line(absl::StrCat("TCVT(", T(tile), ", ", stage, ", RoundMode::CAST_NONE);"));
    }
  }
  return absl::OkStatus();
}

void FunctionEmitter::IntCompareFlat(const std::string& fx, const char* mode,
                                     const std::string& c, const std::string& d) {
  Line(absl::StrCat("TCMPS(", Mask(), ", ", fx, ", ", c, ", CmpMode::", mode, ");"));
  const std::string fd = Flat(d);
  SelectOneZero(fd, false);
  Line(absl::StrCat("TRESHAPE(", d, ", ", fd, ");"));
}

void FunctionEmitter::WrapNarrow(const std::string& x, pto::v1::DataType to) {
  if (to == pto::v1::DT_UINT8) {
    Line(absl::StrCat("TANDS(", x, ", ", x, ", 255);"));
    return;
  }
  // Sign-extend the low 8 (16) bits: shift them to the top and back
  // (arithmetic), the counts in a tile (the CPU simulation has no TSHLS).
  const std::string n = IntTmpK(4);
  Line(absl::StrCat("TEXPANDS(", n, ", ", to == pto::v1::DT_INT8 ? 24 : 16, ");"));
  Line(absl::StrCat("TSHL(", x, ", ", x, ", ", n, ");"));
  Line(absl::StrCat("TSHR(", x, ", ", x, ", ", n, ");"));
}

// Float -> integer truncates toward zero (TCVT CAST_TRUNC; NaN and values
// outside int32 give INT32_MIN on the CPU simulation, as the host's x86
// conversion; the device saturates), then wraps to INT8/INT16/UINT8;
// integer -> float rounds to nearest even, FP16 then again (as the host);
// integer -> BOOL is x != 0.
absl::Status FunctionEmitter::EmitIntCast(const PtoInstr& in) {
  const std::string d = T(in.dst), x = T(in.srcs[0]);
  const Elem from = elem_[in.srcs[0]], to = elem_[in.dst];
  if (from == Elem::kI64 || to == Elem::kI64) {
    return Unsupported(in.op, "of DT_INT64 values (the target computes on INT32 only)");
  }
  if (kind_[in.dst] != Kind::kFull || kind_[in.srcs[0]] != Kind::kFull) {
    return Unsupported(in.op, absl::StrCat("to ", pto::v1::DataType_Name(in.dtype),
                                           " of a row or column tile"));
  }
  if (to == Elem::kI32) {  // to INT32
    if (from == Elem::kI32) {
      Line(absl::StrCat("TADDS(", d, ", ", x, ", 0);"));
    } else {
      Line(absl::StrCat("TCVT(", d, ", ", x, ", RoundMode::CAST_TRUNC);"));
    }
    return absl::OkStatus();
  }
  if (in.dtype == pto::v1::DT_BOOL) {  // int32 -> BOOL: x != 0
    IntCompareFlat(FlatI(x), "NE", "0", d);
    return absl::OkStatus();
  }
  if (NarrowInt(in.dtype)) {  // to INT8/INT16/UINT8 in an f32 tile
    const std::string i = IntTmpK(3);
    if (from == Elem::kI32) {
      Line(absl::StrCat("TADDS(", i, ", ", x, ", 0);"));
    } else {
      Line(absl::StrCat("TCVT(", i, ", ", x, ", RoundMode::CAST_TRUNC);"));
    }
    WrapNarrow(i, in.dtype);
    Line(absl::StrCat("TCVT(", d, ", ", i, ", RoundMode::CAST_NONE);"));
    return absl::OkStatus();
  }
  if (in.dtype != pto::v1::DT_FP32 && in.dtype != pto::v1::DT_FP16 &&
      in.dtype != pto::v1::DT_BF16) {
    return Unsupported(in.op, absl::StrCat("to ", pto::v1::DataType_Name(in.dtype)));
  }
  Line(absl::StrCat("TCVT(", d, ", ", x, ", RoundMode::CAST_RINT);"));
  if (in.dtype == pto::v1::DT_FP16) RoundToHalf(in.dst);
  if (in.dtype == pto::v1::DT_BF16) return RoundToBf16(in);
  return absl::OkStatus();
}

// A comparison with an int32 operand, as 1.0/0.0 in an f32 tile. With a
// scalar s: against an integer threshold (x < s is x < ceil(s), x <= s is
// x <= floor(s), ...; a threshold past int32 gives all or nothing; a NaN
// scalar compares false, NE true). Two tiles (the CPU simulation has no
// TCMP): a == b is (a ^ b) == 0, a < b is (min(a, b) ^ b) != 0, a <= b is
// (min(a, b) ^ a) == 0; nothing overflows.
absl::Status FunctionEmitter::EmitIntCompare(const PtoInstr& in) {
  if (kind_[in.dst] != Kind::kFull) return Unsupported(in.op, "into a row tile");
  for (int s : in.srcs) {
    if (kind_[s] != Kind::kFull || elem_[s] != Elem::kI32) {
      return Unsupported(in.op, "mixing int32 tiles with f32 or row tiles");
    }
  }
  const std::string d = T(in.dst), a = T(in.srcs[0]);
  std::string mode;
  switch (in.op) {
    case PtoOpcode::kTCmpEq: case PtoOpcode::kTCmpEqS: mode = "EQ"; break;
    case PtoOpcode::kTCmpNe: case PtoOpcode::kTCmpNeS: mode = "NE"; break;
    case PtoOpcode::kTCmpLt: case PtoOpcode::kTCmpLtS: mode = "LT"; break;
    case PtoOpcode::kTCmpLe: case PtoOpcode::kTCmpLeS: mode = "LE"; break;
    case PtoOpcode::kTCmpGt: case PtoOpcode::kTCmpGtS: mode = "GT"; break;
    default: mode = "GE"; break;
  }
  if (in.srcs.size() == 2) {
    const std::string b = T(in.srcs[1]), m = IntTmpK(2), e = IntTmpK(3), t = IntTmpK(4);
    if (mode == "EQ" || mode == "NE") {
      Line(absl::StrCat("TXOR(", e, ", ", a, ", ", b, ", ", t, ");"));
    } else {
      Line(absl::StrCat("TMIN(", m, ", ", a, ", ", b, ");"));
      const bool against_b = mode == "LT" || mode == "GE";
      Line(absl::StrCat("TXOR(", e, ", ", m, ", ", against_b ? b : a, ", ", t, ");"));
      mode = mode == "LT" || mode == "GT" ? "NE" : "EQ";
    }
    IntCompareFlat(FlatI(e), mode.c_str(), "0", d);
    return absl::OkStatus();
  }
  const int dynamic = in.scalar_dynamic.empty() ? -1 : in.scalar_dynamic[0];
  if (dynamic >= 0) {  // an integer at run time
    IntCompareFlat(FlatI(a), mode.c_str(),
                   absl::StrCat("static_cast<int32_t>(args[", rank_ + dynamic, "])"), d);
    return absl::OkStatus();
  }
  const double s = in.scalars[0];
  const double lo = -2147483648.0, hi = 2147483647.0;
  auto constant = [&](bool v) { Line(absl::StrCat("TEXPANDS(", d, ", ", v ? "1.0f" : "0.0f", ");")); };
  if (std::isnan(s)) {
    constant(mode == "NE");
    return absl::OkStatus();
  }
  if (mode == "EQ" || mode == "NE") {
    if (s != std::floor(s) || s < lo || s > hi) {
      constant(mode == "NE");
    } else {
      IntCompareFlat(FlatI(a), mode.c_str(), absl::StrCat(static_cast<int64_t>(s)), d);
    }
    return absl::OkStatus();
  }
  // x >= c (GE, GT) or x <= c (LE, LT) with an integer c.
  const bool ge = mode == "GE" || mode == "GT";
  const double c = mode == "LT"   ? std::ceil(s) - 1
                   : mode == "LE" ? std::floor(s)
                   : mode == "GT" ? std::floor(s) + 1
                                  : std::ceil(s);
  if (ge ? c > hi : c < lo) {
    constant(false);
  } else if (ge ? c <= lo : c >= hi) {
    constant(true);
  } else {
    IntCompareFlat(FlatI(a), ge ? "GE" : "LE", absl::StrCat(static_cast<int64_t>(c)), d);
  }
  return absl::OkStatus();
}

// An instruction with an int32 tile (or an integer dtype) as result or
// operand: integer arithmetic wraps (two's complement), as torch and the
// host do.
absl::Status FunctionEmitter::EmitIntCompute(const PtoInstr& in) {
  for (int s : in.srcs) {
    if (elem_[s] == Elem::kI64) {
      return Unsupported(in.op, "on DT_INT64 values (the target computes on INT32 only)");
    }
  }
  if (elem_[in.dst] == Elem::kI64) {
    return Unsupported(in.op, "into DT_INT64 values (the target computes on INT32 only)");
  }
  if (UsesWords(in) && in.op != PtoOpcode::kTRedSum && in.op != PtoOpcode::kTRedProd) {
    return EmitWordsCompute(in);
  }
  if (in.op == PtoOpcode::kTCvt) return EmitIntCast(in);
  if (Compares(in.op)) return EmitIntCompare(in);
  if (Reduces(in.op)) return EmitIntReduce(in);
  if (kind_[in.dst] != Kind::kFull) return Unsupported(in.op, "into an integer row tile");
  for (int s : in.srcs) {
    if (kind_[s] != Kind::kFull) return Unsupported(in.op, "on an integer row tile");
  }
  const std::string d = T(in.dst);
  auto src = [&](int k) { return T(in.srcs[k]); };
  // An immediate as an int32 literal: integral and within int32, else
  // UNIMPLEMENTED; a run-time one converted.
  auto int_scalar = [&](size_t j, std::string* out) -> absl::Status {
    const int dynamic = j < in.scalar_dynamic.size() ? in.scalar_dynamic[j] : -1;
    if (dynamic >= 0) {
      *out = absl::StrCat("static_cast<int32_t>(args[", rank_ + dynamic, "])");
      return absl::OkStatus();
    }
    const double v = in.scalars[j];
    if (v != std::floor(v) || v < -2147483648.0 || v > 2147483647.0) {
      return Unsupported(in.op, absl::StrCat("of DT_INT32 values with the scalar ", v,
                                             " (not an int32 value)"));
    }
    *out = absl::StrCat(static_cast<int64_t>(v));
    return absl::OkStatus();
  };
  if (in.op == PtoOpcode::kTFill) {
    // The value converted as the host does: truncated to 32 bits (NaN and
    // values beyond: INT32_MIN), wrapped to INT8/INT16/UINT8.
    const double v = in.scalars.empty() ? 0 : in.scalars[0];
    if (!in.scalar_dynamic.empty() && in.scalar_dynamic[0] >= 0) {
      return Unsupported(in.op, "of integers with a run-time value");
    }
    int64_t i = std::isnan(v) || v >= 0x1p31 || v < -0x1p31 ? INT32_MIN : static_cast<int64_t>(v);
    if (in.dtype == pto::v1::DT_INT8) i = static_cast<int8_t>(static_cast<uint64_t>(i));
    if (in.dtype == pto::v1::DT_INT16) i = static_cast<int16_t>(static_cast<uint64_t>(i));
    if (in.dtype == pto::v1::DT_UINT8) i = static_cast<uint8_t>(static_cast<uint64_t>(i));
    if (in.dtype == pto::v1::DT_INT64) {
      return Unsupported(in.op, "of DT_INT64 values (the target computes on INT32 only)");
    }
    Line(absl::StrCat("TEXPANDS(", d, ", ", elem_[in.dst] == Elem::kI32 ? absl::StrCat(i)
                                                : FloatLiteral(static_cast<double>(i)), ");"));
    return absl::OkStatus();
  }
  if (in.op == PtoOpcode::kTArange) {
    // start + step * (a0 + i) as TARANGE of FP32 computes it, truncated
    // toward zero to int32 (and wrapped to INT8/INT16/UINT8) as a cast.
    if (rank_ != 1 || in.scalars.size() < 2) return Unsupported(in.op, "other than rank 1");
    if (in.dtype == pto::v1::DT_INT64) {
      return Unsupported(in.op, "of DT_INT64 values (the target computes on INT32 only)");
    }
    need_index_ = true;
    Line("TCI<IndexInt, int32_t, 0>(iidx, static_cast<int32_t>(args[0]));");
    const bool dynamic = std::any_of(in.scalar_dynamic.begin(), in.scalar_dynamic.end(),
                                     [](int k) { return k >= 0; });
    auto int32_value = [](double v) {
      return v == std::floor(v) && v >= -2147483648.0 && v <= 2147483647.0;
    };
    if (elem_[in.dst] == Elem::kI32 && !dynamic && int32_value(in.scalars[0]) &&
        int32_value(in.scalars[1])) {  // integers: in int32, exact within int32
      Line(absl::StrCat("TMULS(iidx, iidx, ", static_cast<int64_t>(in.scalars[1]), ");"));
      Line(absl::StrCat("TADDS(iidx, iidx, ", static_cast<int64_t>(in.scalars[0]), ");"));
      Line(absl::StrCat("TMOV(", d, ", iidx);"));
      return absl::OkStatus();
    }
    const std::string f = Tmp();
    Line("TCVT(fidx, iidx, RoundMode::CAST_NONE);");
    Line(absl::StrCat("TMULS(fidx, fidx, ", Scalar(in, 1), ");"));
    Line(absl::StrCat("TADDS(fidx, fidx, ", Scalar(in, 0), ");"));
    Line(absl::StrCat("TMOV(", f, ", fidx);"));
    if (elem_[in.dst] == Elem::kI32) {
      Line(absl::StrCat("TCVT(", d, ", ", f, ", RoundMode::CAST_TRUNC);"));
      return absl::OkStatus();
    }
    const std::string i = IntTmpK(3);
    Line(absl::StrCat("TCVT(", i, ", ", f, ", RoundMode::CAST_TRUNC);"));
    WrapNarrow(i, in.dtype);
    Line(absl::StrCat("TCVT(", d, ", ", i, ", RoundMode::CAST_NONE);"));
    return absl::OkStatus();
  }
  for (int s : in.srcs) {
    if (elem_[s] != Elem::kI32 && !(in.op == PtoOpcode::kTSel && s == in.srcs[0])) {
      return Unsupported(in.op, absl::StrCat("mixing f32 and int32 tiles (a ",
                                             pto::v1::DataType_Name(in.dtype), " result)"));
    }
  }
  if (elem_[in.dst] != Elem::kI32) {
    return Unsupported(in.op, absl::StrCat("with a ", pto::v1::DataType_Name(in.dtype),
                                           " result from int32 tiles"));
  }
  std::string s0, s1;
  switch (in.op) {
    case PtoOpcode::kTAdd: case PtoOpcode::kTSub: case PtoOpcode::kTMul:
    case PtoOpcode::kTMax: case PtoOpcode::kTMin: case PtoOpcode::kTAnd: case PtoOpcode::kTOr:
      Line(absl::StrCat(PtoOpcodeName(in.op), "(", d, ", ", src(0), ", ", src(1), ");"));
      break;
    case PtoOpcode::kTXor:
      Line(absl::StrCat("TXOR(", d, ", ", src(0), ", ", src(1), ", ", IntTmpK(4), ");"));
      break;
    case PtoOpcode::kTNot: case PtoOpcode::kTNeg:
      Line(absl::StrCat(PtoOpcodeName(in.op), "(", d, ", ", src(0), ");"));
      break;
    case PtoOpcode::kTAbs: {  // max(x, -x): |INT32_MIN| wraps to INT32_MIN
      const std::string n = IntTmpK(2);
      Line(absl::StrCat("TNEG(", n, ", ", src(0), ");"));
      Line(absl::StrCat("TMAX(", d, ", ", src(0), ", ", n, ");"));
      break;
    }
    case PtoOpcode::kTShl: case PtoOpcode::kTShr: {
      // The count modulo 32, as torch on x86; >> is arithmetic.
      const std::string c = IntTmpK(2);
      Line(absl::StrCat("TANDS(", c, ", ", src(1), ", 31);"));
      Line(absl::StrCat(PtoOpcodeName(in.op), "(", d, ", ", src(0), ", ", c, ");"));
      break;
    }
    case PtoOpcode::kTSign:  // clamp to [-1, 1]: exact for integers
      Line(absl::StrCat("TMINS(", d, ", ", src(0), ", 1);"));
      Line(absl::StrCat("TMAXS(", d, ", ", d, ", -1);"));
      break;
    case PtoOpcode::kTClip: {
      // The smallest integer >= lo and the largest <= hi, held within int32
      // (a bound past the range clips nothing), as the host's.
      if (in.scalars.size() < 2 || (!in.scalar_dynamic.empty() && (in.scalar_dynamic[0] >= 0 ||
                                    (in.scalar_dynamic.size() > 1 && in.scalar_dynamic[1] >= 0)))) {
        return Unsupported(in.op, "of DT_INT32 values with run-time bounds");
      }
      auto bound = [](double v) {
        const double c = std::min(std::max(v, -2147483648.0), 2147483647.0);
        return absl::StrCat(static_cast<int64_t>(c));
      };
      Line(absl::StrCat("TMAXS(", d, ", ", src(0), ", ", bound(std::ceil(in.scalars[0])), ");"));
      Line(absl::StrCat("TMINS(", d, ", ", d, ", ", bound(std::floor(in.scalars[1])), ");"));
      break;
    }
    case PtoOpcode::kTAddS: case PtoOpcode::kTSubS: case PtoOpcode::kTMulS:
    case PtoOpcode::kTMaxS: case PtoOpcode::kTMinS:
      if (absl::Status st = int_scalar(0, &s0); !st.ok()) return st;
      Line(absl::StrCat(PtoOpcodeName(in.op), "(", d, ", ", src(0), ", ", s0, ");"));
      break;
    case PtoOpcode::kTRSubS:
      if (absl::Status st = int_scalar(0, &s0); !st.ok()) return st;
      Line(absl::StrCat("TNEG(", d, ", ", src(0), ");"));
      Line(absl::StrCat("TADDS(", d, ", ", d, ", ", s0, ");"));
      break;
    case PtoOpcode::kTMov:
      Line(absl::StrCat("TADDS(", d, ", ", src(0), ", 0);"));
      break;
    case PtoOpcode::kTSel: {  // the f32 condition's mask selects int32 values
      if (elem_[in.srcs[0]] != Elem::kF32 || kind_[in.srcs[0]] != Kind::kFull) {
        return Unsupported(in.op, "with an int32 or row condition");
      }
      Line(absl::StrCat("TCMPS(", Mask(), ", ", Flat(src(0)), ", 0.0f, CmpMode::GT);"));
      const std::string fa = FlatI(src(1)), fb = FlatI(src(2)), fd = FlatI(d);
      Line(absl::StrCat("TSEL(", fd, ", ", Mask(), ", ", fa, ", ", fb, ");"));
      Line(absl::StrCat("TRESHAPE(", d, ", ", fd, ");"));
      break;
    }
    default:
      if (ascend::IsAscendIntComposition(in.op)) {
        ascend::EmitAscendIntComposition(*this, in.op, d, src(0), src(1));
        break;
      }
      return Unsupported(in.op, "of DT_INT32 values has no PTO-ISA mapping in this target yet");
  }
  return absl::OkStatus();
}

// Extrema of int32 values: the signed top halves x >> 16 reduced in f32
// (TROWMAX / TCOLMAX, ...), then the low halves x & 65535 of the elements
// whose top half is the extremum (the others -1 for max, 65536 for min),
// reduced the same way; hi * 65536 + lo. Exact for every int32. (A sum or
// product of INT32 values is INT64, torch's, which PlanIntTiles refuses.)
absl::Status FunctionEmitter::EmitIntReduce(const PtoInstr& in) {
  if (elem_[in.dst] == Elem::kWords) return EmitInt64Reduce(in);
  const int x = in.srcs[0];
  if (kind_[x] != Kind::kFull || elem_[x] != Elem::kI32) {
    return Unsupported(in.op, "of an integer row tile, or of f32 values into an int32 tile");
  }
  if (in.op != PtoOpcode::kTRedMax && in.op != PtoOpcode::kTRedMin) {
    return Unsupported(in.op, "of DT_INT32 values into an int32 tile");
  }
  const bool row = in.reduce_dim == rank_ - 1;
  const std::string d = T(in.dst), src = T(x);
  if (kind_[in.dst] == Kind::kFull) {  // one column: each row's one value
    if (!row || cols_ != 1) return Unsupported(in.op, "of DT_INT32 values into a full tile");
    Line(absl::StrCat("TADDS(", d, ", ", src, ", 0);"));
    return absl::OkStatus();
  }
  auto reduce = [&](const char* what, const std::string& to, const std::string& from) {
    Line(row ? absl::StrCat("TROW", what, "(", to, ", ", from, ", ", Tmp(), ");")
             : absl::StrCat("TCOL", what, "(", to, ", ", from, ");"));
  };
  const std::string part = IntTmpK(2), count = IntTmpK(3), fpart = Scratch(2);
  const std::string rf = row ? RowTmpK(2) : ColTmpK(2), rf2 = row ? RowTmpK(3) : ColTmpK(3);
  const std::string ri = row ? "irow" : "icol";
  (row ? need_int_row_ : need_int_col_) = true;
  const bool max = in.op == PtoOpcode::kTRedMax;
  const char* what = max ? "MAX" : "MIN";
  const std::string e = Scratch(3), fill = Scratch(4);
  Line(absl::StrCat("TEXPANDS(", count, ", 16);"));
  Line(absl::StrCat("TSHR(", part, ", ", src, ", ", count, ");"));
  Line(absl::StrCat("TCVT(", fpart, ", ", part, ", RoundMode::CAST_RINT);"));
  reduce(what, rf, fpart);
  Line(absl::StrCat(row ? "TROWEXPAND(" : "TCOLEXPAND(", e, ", ", rf, ");"));
  Line(absl::StrCat("TSUB(", e, ", ", fpart, ", ", e, ");"));  // 0 where the top half is it
  Line(absl::StrCat("TANDS(", part, ", ", src, ", 65535);"));
  Line(absl::StrCat("TCVT(", fpart, ", ", part, ", RoundMode::CAST_RINT);"));
  Line(absl::StrCat("TEXPANDS(", fill, ", ", max ? "-1.0f" : "65536.0f", ");"));
  Select(fpart, e, max ? "GE" : "LE", "0.0f", fpart, fill);
  reduce(what, rf2, fpart);
  Line(absl::StrCat("TCVT(", d, ", ", rf, ", RoundMode::CAST_RINT);"));
  Line(absl::StrCat("TMULS(", d, ", ", d, ", 65536);"));
  Line(absl::StrCat("TCVT(", ri, ", ", rf2, ", RoundMode::CAST_RINT);"));
  Line(absl::StrCat("TADD(", d, ", ", d, ", ", ri, ");"));
  return absl::OkStatus();
}

// A sum or product into INT64 (ascend_int64.h) of a full tile of INT32
// values or of INT64 words (partial results), into a words tile.
absl::Status FunctionEmitter::EmitInt64Reduce(const PtoInstr& in) {
  const int x = in.srcs[0];
  if (kind_[x] != Kind::kFull || (elem_[x] != Elem::kI32 && elem_[x] != Elem::kWords)) {
    return Unsupported(in.op, "into DT_INT64 of other than a full tile of INT32 values or of "
                              "INT64 partial results");
  }
  ascend::Int64Reduction r;
  r.op = in.op;
  r.along_row = in.reduce_dim == rank_ - 1;
  r.result = kind_[in.dst] == Kind::kRow   ? ascend::Int64Shape::kRow
             : kind_[in.dst] == Kind::kCol ? ascend::Int64Shape::kCol
                                           : ascend::Int64Shape::kFull;
  r.src = T(x);
  r.words = elem_[x] == Elem::kWords;
  r.dst = T(in.dst);
  r.n_max = r.along_row ? cols_ : rows_;
  r.n = !fn_.runtime_extents ? absl::StrCat(r.n_max)
                             : absl::StrCat("static_cast<int32_t>(",
                                            r.along_row ? ValidCols() : ValidRows(), ")");
  r.cols_pad = RoundUp(cols_, kUbAlign / 4);
  r.flat = RoundUp(rows_, kUbAlign / 4) * r.cols_pad;
  if (absl::Status s = ascend::EmitInt64Reduction(*this, r); !s.ok()) {
    return Unsupported(in.op, s.message());
  }
  return absl::OkStatus();
}

}  // namespace pto::compiler::ascend
