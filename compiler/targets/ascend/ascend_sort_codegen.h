// The Ascend target's sort functions: MSORT (the stable sort of whole GM
// rows into INT64 positions, docs/pto-isa.md) as a composition of PTO-ISA's
// sort instructions, one row of the task's tile at a time:
//
//   TLOAD the row (FP16, INT8, INT16, UINT8 through a staging tile and TCVT)
//   keys: NaN -> the largest key, -0.0 -> 0.0, negated when ascending
//         (TCMPS + TSEL, TMULS, TADDS); FP16's infinities first become
//         +-2^17, so NaN stays above +inf
//   TFILLPAD the keys to NP = 32 * 4^m values with -inf (sorting last)
//   TCI the indices 0 .. NP-1 (uint32)
//   TSORT32 into 32-element blocks of (key, index) pairs, descending
//   TMRGSORT four sorted lists at a time until one list holds the row
//   TGATHER (P1010) the first k pairs' indices into int32, TCVT to int64
//   TSTORE the k positions to the result's row
//
// TSORT32 orders equal keys by index and TMRGSORT takes equal keys from the
// earlier list, so ties keep their input order (a stable sort). An FP32
// row's NaN and +inf both take the key +inf (ascending: -inf) and tie;
// such a row sorts a second time by class (descending: NaN 2, +inf 1, the
// rest 0; ascending: 0, 1, 2), each class in input order, and the ranks
// whose class key says NaN or +inf take the second sort's positions
// (TGATHER P0101 of its keys, TCMPS, TSEL): torch's order, NaN above +inf.
// An INT32 row sorts twice with f32 keys exact in both: by its low 16 bits
// (all NP positions kept), then, stably, by its high 16 bits taken in that
// order (TGATHER by the first positions), whose ranks index the first
// positions (TGATHER): the int32 order, ties in input order.
// The result is the host's. The pairs' index word is uint32 bits on the
// device and the index's value in the CPU simulation; TGATHER into int32
// reads either as the index.
//
// UB: two pair lists of 8 NP bytes; the row's keys, indices, mask and the
// positions live in them when their contents are dead (NP <= 8192: rows of
// up to 8192 values); an FP32 row's first positions after them, an INT32
// row and its first sort's positions (8 NP bytes) likewise.
// set_flag/wait_flag order MTE2 -> V -> MTE3 within a row, V -> MTE2
// before an FP32 row's reload and MTE3 -> MTE2 before the next row's load.
//
// Along a dim before the last, the task's columns go in groups of 8
// through TTRANS: the [n, w] block loaded (its rows stepping by the sorted
// dim's GM stride) and transposed into w rows, each row gathered (TGATHER)
// and sorted as above, its positions selected into a row of a [w, k] tile
// (TCOLEXPAND, TCMPS of the flat index, TSEL), which is transposed back and
// stored; the other dims but the last run over the task's rows. The CPU
// simulation gives every tile its own storage, so tiles meet only through
// instructions; the UB addresses are the device's.
//
// Over a run-time row length (a symbolic sorted last dim) the row's tiles
// are sized for a capacity (AscendSortCapacity: the largest NP whose tiles
// fit the UB) and take the row's length as their valid one, so TFILLPAD
// pads as for a shorter static row. Such a task, and one whose row's
// positions are cut into tiles, writes the positions ranked from its offset
// along the dim: all NP index words gathered from the pairs, those at the
// ranks gathered by index (TCI), ranks past the row's end 0. The kernel
// checks the length against the capacity at launch (AscendSortLaunchChecks).
//
// UNIMPLEMENTED naming MSORT: a sort along a dim before the last with
// run-time tile extents, a run-time length or strides, or more UB than
// there is (the message names the bytes); of a static row longer than
// 8192; of INT64 or BF16 values; or with a column's positions cut into
// chunks.
#ifndef PTO_COMPILER_TARGETS_ASCEND_ASCEND_SORT_CODEGEN_H_
#define PTO_COMPILER_TARGETS_ASCEND_ASCEND_SORT_CODEGEN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/pto/pto_program.h"
#include "pto/v1/kernel.pb.h"

namespace pto::compiler {

// The longest run-time row a last-dim sort with tiles of k positions sorts
// (NP = 32 * 4^m values whose tiles fit the UB beside the positions'),
// for values of `dtype`; 0 when none fits.
int64_t AscendSortCapacity(pto::v1::DataType dtype, int64_t k);

// Per run-time row length of the program's sorts (and capacity), the check
// the runtime makes at launch: the row inside [0, capacity), so that a
// longer row is an error naming its length and the bound.
std::vector<pto::v1::RegionCheck> AscendSortLaunchChecks(const PtoProgram& p);

// Whether vector function `index` is a sort function (its body has MSORT).
bool IsAscendSortFunction(const PtoProgram& p, int index);

// The `__global__ AICORE void pto_f<index>(...)` entry of sort function
// `index` (its parameters as ascend_codegen.h describes).
absl::StatusOr<std::string> EmitAscendSortFunction(const PtoProgram& p, int index);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_TARGETS_ASCEND_ASCEND_SORT_CODEGEN_H_
