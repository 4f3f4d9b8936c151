// Layout ops in lowering: which Tensor Graph values are other values' GM
// data seen through an index, and how a load addresses them.
//
// Most layout ops move no data of their own:
//   view, transpose, permute, unsqueeze and reshape make an *alias*: a value
//   whose elements are those of its root (the first value up the chain that
//   has a GM tensor) at an index with offsets (view) and buffer dims mapped
//   to other dims (transpose). A reshape that merges or splits dims reads the
//   root's buffer as another shape (same elements, row-major); of a view or
//   transpose (not contiguous), it reads a copy: that alias is materialized.
//   A
//   reader loads the root with that index (a transpose feeding an add is a
//   strided TLOAD in the add's group). An alias bound to an out parameter is
//   *materialized*: its op becomes a TLOAD (then TSTORE) in a group.
//   assemble(src, dst) writes src into a region of dst's buffer: its result
//   shares dst's buffer (dst must not be read after it), and its op is the
//   TSTORE of src's tile at an offset, fused after src's producer.
//   concat(x0, x1, ...) stores each input into its region of the result:
//   from the group computing it (a TSTORE at an offset, like assemble), or
//   from a copy group of its own for parameters, aliases and the like
//   (fuse_groups.h, tile_groups.h). A matmul's result read
//   only by an assemble or a concat is stored there by the cube group.
// Readers of an alias's root, or of an assemble's or concat's result, load
// it from GM, so they never share a group with the op that computes it.
#ifndef PTO_COMPILER_LOWER_LAYOUT_H_
#define PTO_COMPILER_LOWER_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/tile_graph.h"

namespace pto::compiler {

bool IsAssemble(const TensorOp& op);
bool IsConcat(const TensorOp& op);

class LayoutPlan {
 public:
  // Errors (UNIMPLEMENTED, naming the op): an assemble into an alias, a read
  // of an assemble's dst after it.
  static absl::StatusOr<LayoutPlan> Make(const TensorGraph& g);

  // Op `i` makes an alias: no group computes it.
  bool IsAliasOp(int i) const { return op_kind_[i] == kAlias; }
  // Op `i` makes an alias bound to a parameter: a TLOAD of its root.
  bool IsLoadOp(int i) const { return op_kind_[i] == kLoad; }
  // A load op's source (a value with a GM tensor) and the index of its TLOAD
  // in the op's own space.
  int LoadOpRoot(int i) const { return load_root_[i]; }
  const std::vector<int64_t>& LoadOpViewShape(int i) const {
    return load_view_shape_[i];
  }
  // The shape a load of v reads Root(v)'s buffer as (TileInstr::view_shape;
  // empty: the buffer's own).
  const std::vector<int64_t>& ViewShape(int v) const { return view_shape_[v]; }
  std::vector<GmIndex> LoadOpIndex(const TensorGraph& g, int i) const;
  bool IsAlias(int v) const { return root_[v] != v; }
  // The value whose GM tensor holds v's elements (v when not an alias).
  int Root(int v) const { return root_[v]; }
  // The values sharing one GM buffer (an assemble's result and its dst)
  // have the same owner.
  int Owner(int v) const;
  // Whether v's readers must load it from GM (assemble and concat results).
  bool GmOnly(int v) const { return gm_only_[v]; }
  // The values op `i` reads from GM whatever its group: alias roots, and
  // assemble/concat results (a group with their definer cannot hold op i).
  std::vector<int> GmReads(const TensorGraph& g, int i) const;
  // The index of a load of v in a group whose space has rank `space_rank`:
  // one entry per dim of Root(v)'s buffer (numpy broadcasting of v's dims
  // to the space's last dims).
  std::vector<GmIndex> LoadIndex(const TensorGraph& g, int v,
                                 int space_rank) const;

  // Per root buffer dim: the dim of the alias it follows (-1: fixed) and
  // the offset added.
  struct DimMap {
    int dim = -1;
    int64_t offset = 0;
  };
  // Per dim of what a load of v reads (Root(v)'s buffer, as ViewShape(v)
  // when that is set): the dim of v it follows and the offset. The
  // identity when v is not an alias. (Matmul maps v's dims to its space
  // itself: LoadIndex's broadcasting does not apply there.)
  std::vector<DimMap> RootDims(const TensorGraph& g, int v) const;

 private:
  enum OpKind { kOther, kAlias, kLoad };
  // Whether alias v has its root's elements in row-major order (no offsets,
  // no transposes, full extents): a reshape may read them as another shape.
  bool Contiguous(const TensorGraph& g, int v) const;
  static std::vector<GmIndex> Compose(const std::vector<DimMap>& map,
                                      const std::vector<int64_t>& shape,
                                      int space_rank);

  std::vector<OpKind> op_kind_;
  std::vector<int> load_root_;                // per op (load ops)
  std::vector<std::vector<DimMap>> load_map_;  // per op (load ops)
  std::vector<std::vector<int64_t>> load_view_shape_;  // per op (load ops)
  std::vector<std::vector<int64_t>> view_shape_;       // per value (aliases)
  std::vector<int> root_;                     // per value
  std::vector<std::vector<DimMap>> map_;      // per value (aliases)
  std::vector<int> owner_;                    // per value
  std::vector<bool> gm_only_;                 // per value
};

// A group that stores into a buffer region it also loads at another index
// (out[:, 1:65] = out[:, 0:64] * 2) would race between its tasks:
// UNIMPLEMENTED naming the group's first op. Loads at the store's own index
// (each task reads what it then overwrites, acc = acc * 2) are fine.
absl::Status CheckGroupRegions(const TileGraph& tiles, const TileGroup& group,
                               const TensorGraph& g);

// The index of an assemble's (or a concat input's) store: aligned, plus
// `offsets` per dim.
std::vector<GmIndex> OffsetIndex(const std::vector<int64_t>& offsets);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_LAYOUT_H_
