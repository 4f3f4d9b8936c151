// Writes the fuzzer's seed corpus: one serialized pto.v1.CompileRequest per
// file, from valid graphs covering each kind of op and lowering path, plus
// regression inputs that once crashed the compiler.
//
//   bazel run //compiler/fuzz:make_corpus -- $PWD/compiler/fuzz/corpus
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "compiler/testing/graph_builder.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "pto/v1/compile_service.pb.h"

namespace pto::compiler {
namespace {

using testing::GraphBuilder;
constexpr pto::v1::DataType kF32 = pto::v1::DT_FP32;

pto::v1::Graph Elementwise() { return testing::ExpAddGraph(); }

pto::v1::Graph Fused() {
  GraphBuilder b("fused");
  uint32_t a = b.Input("a", kF32, {6, 10});
  uint32_t c = b.Input("c", kF32, {6, 10});
  uint32_t x = b.Op("muls", {a}, {4, 4}, 2.0);
  uint32_t y = b.Op("exp", {x}, {4, 4});
  b.Output("o", b.Op("sub", {y, c}, {3, 8}));
  b.InOut("c2", b.Value(kF32, {6, 10}), b.Op("abs", {a}, {6, 10}));
  return b.Build();
}

pto::v1::Graph BroadcastWhereCast() {
  GraphBuilder b("bcast_where_cast");
  uint32_t x = b.Input("x", kF32, {3, 5});
  uint32_t r = b.Input("r", kF32, {5});
  uint32_t c = b.Input("c", kF32, {3, 1});
  uint32_t m = b.Op("lt", {x, r}, {2, 4});
  uint32_t w = b.Op("where", {m, x, c}, {2, 4});
  b.Output("out", b.Cast(w, pto::v1::DT_FP16, {2, 4}));
  b.Output("mask", m);
  return b.Build();
}

pto::v1::Graph Matmul() {
  GraphBuilder b("matmul_relu");
  uint32_t a = b.Input("a", kF32, {5, 7});
  uint32_t w = b.Input("w", kF32, {7, 6});
  uint32_t y = b.Matmul(a, w, {5, 6}, kF32, false, false, {4, 4}, {2, 4}, {4, 4});
  b.Output("out", b.Op("relu", {y}, {2, 6}));
  return b.Build();
}

pto::v1::Graph Reduction() {
  GraphBuilder b("reductions");
  uint32_t x = b.Input("x", kF32, {6, 40});
  b.Output("rows", b.Op("sum", {x}, {2, 16}, -1, true));
  b.Output("cols", b.Op("amax", {x}, {4, 8}, 0, false));
  return b.Build();
}

pto::v1::Graph Softmax() {
  GraphBuilder b("softmax");
  uint32_t x = b.Input("x", kF32, {8, 64});
  uint32_t m = b.Op("amax", {x}, {4, 64}, -1, true);
  uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, {4, 64})}, {4, 64});
  uint32_t s = b.Op("sum", {e}, {4, 64}, -1, true);
  b.Output("out", b.Op("div", {e, s}, {4, 64}));
  return b.Build();
}

pto::v1::Graph SoftmaxLoop() { return testing::SoftmaxLoopGraph(); }

pto::v1::Graph Layout() {
  GraphBuilder b("layout");
  uint32_t x = b.Input("x", kF32, {6, 8});
  uint32_t bias = b.Input("b", kF32, {6});
  uint32_t out_in = b.Value(kF32, {6, 12}, "out");
  uint32_t v = b.Layout("view", {x}, {6, 4}, {4, 4}, {{"shape", {6, 4}}, {"offsets", {0, 2}}});
  uint32_t m = b.Op("muls", {v}, {4, 4}, 2.0);
  uint32_t a = b.Layout("assemble", {m, out_in}, {6, 12}, {4, 4}, {{"offsets", {0, 8}}});
  uint32_t t = b.Layout("transpose", {x}, {8, 6}, {4, 4}, {}, {{"dim0", 0}, {"dim1", 1}});
  b.InOut("out", out_in, a);
  b.Output("y", b.Op("add", {t, bias}, {4, 4}));
  return b.Build();
}

pto::v1::Graph ConcatReshape() {
  GraphBuilder b("concat_reshape");
  uint32_t x = b.Input("x", kF32, {3, 4});
  uint32_t y = b.Input("y", kF32, {3, 4});
  uint32_t c = b.Layout("concat", {b.Op("muls", {x}, {2, 4}, 2.0), b.Op("adds", {y}, {2, 4}, 1.0)},
                        {3, 8}, {2, 4}, {}, {{"dim", 1}});
  uint32_t p = b.Layout("permute", {c}, {8, 3}, {2, 2}, {{"dims", {1, 0}}});
  uint32_t u = b.Layout("unsqueeze", {p}, {8, 1, 3}, {2, 1, 2}, {}, {{"dim", 1}});
  b.Output("out", b.Layout("reshape", {u}, {24}, {8}, {{"shape", {24}}}));
  return b.Build();
}

pto::v1::Graph Creation() {
  GraphBuilder b("creation");
  uint32_t x = b.Input("x", kF32, {128});
  uint32_t f = b.Create("full", kF32, {128}, {{"value", 3.0}});
  b.Output("out", b.Op("mul", {x, f}, {32}));
  b.Output("r", b.Create("arange", kF32, {32}, {{"start", 0.0}, {"step", 1.0}}));
  return b.Build();
}

pto::v1::Graph Symbolic() {
  GraphBuilder b("sym_exp_add");
  const SymExpr n = SymExpr::Symbol("n");
  uint32_t x = b.SymInput("x", kF32, {n, 16});
  uint32_t y = b.SymInput("y", kF32, {n, 16});
  b.Output("out", b.Op("add", {b.Op("exp", {x}, {4, 16}), y}, {4, 16}));
  return b.Build();
}

// A loop over a dynamic batch with a tail view and an if on the index.
pto::v1::Graph LoopIf() {
  GraphBuilder b("loop_if");
  const SymExpr n = SymExpr::Symbol("n"), i = SymExpr::Symbol("i");
  uint32_t x = b.SymInput("x", kF32, {n, 8});
  uint32_t out = b.SymValue(kF32, {n, 8}, "out");
  auto outs = b.Loop("i", 0, n, 2, {out}, [&](const std::vector<uint32_t>& args) {
    const uint32_t v = b.View(x, {i, 0}, {SymExpr::Min(2, n - i), 8}, {2, 8});
    return b.If(testing::CompareExpr(pto::v1::DIM_OP_EQ, SymExpr::Mod(i, 4), 0), args,
                [&](const std::vector<uint32_t>& a) {
                  return std::vector<uint32_t>{
                      b.Assemble(b.Op("exp", {v}, {2, 8}), a[0], {i, 0}, {2, 8})};
                },
                [&](const std::vector<uint32_t>& a) { return a; });
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

// Matmul in a loop body: row blocks with an M tail, a K tail from an inner
// loop, the product accumulated into the carried output.
pto::v1::Graph LoopMatmul() {
  GraphBuilder b("loop_matmul");
  const SymExpr n = SymExpr::Symbol("n"), i = SymExpr::Symbol("i"), k = SymExpr::Symbol("k");
  uint32_t x = b.SymInput("x", kF32, {n, 40});
  uint32_t w = b.Input("w", kF32, {40, 12});
  uint32_t out = b.SymValue(kF32, {n, 12}, "out");
  auto outs = b.Loop("i", 0, n, 4, {out}, [&](const std::vector<uint32_t>& outer) {
    const SymExpr rows = SymExpr::Min(4, n - i);
    return b.Loop("k", 0, 40, 16, {outer[0]}, [&](const std::vector<uint32_t>& inner) {
      const SymExpr depth = SymExpr::Min(16, 40 - k);
      const uint32_t xk = b.View(x, {i, k}, {rows, depth}, {4, 16});
      const uint32_t wk = b.View(w, {k, 0}, {depth, 12}, {16, 12});
      const uint32_t p =
          b.Matmul(xk, wk, {4, 12}, kF32, false, false, {16, 32}, {16, 64}, {32, 64});
      b.SetShape(p, {rows, 12});
      const uint32_t acc = b.View(inner[0], {i, 0}, {rows, 12}, {4, 12});
      return std::vector<uint32_t>{
          b.Assemble(b.Op("add", {acc, p}, {4, 12}), inner[0], {i, 0}, {4, 12})};
    });
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

// Scalar operands over symbols, outside and inside a loop.
pto::v1::Graph Scalars() {
  GraphBuilder b("scalars");
  const SymExpr n = SymExpr::Symbol("n"), i = SymExpr::Symbol("i");
  uint32_t x = b.SymInput("x", kF32, {n, 8});
  uint32_t y = b.ScalarOp("muls", {x}, {4, 8}, {{"scalar", n}});
  uint32_t out = b.ScalarOp("clip", {y}, {4, 8}, {{"min", -n}, {"max", n + 1}});
  auto outs = b.Loop("i", 0, n, 1, {out}, [&](const std::vector<uint32_t>& args) {
    const uint32_t v = b.View(x, {i, 0}, {1, 8}, {1, 8});
    const uint32_t s = b.ScalarOp("muls", {v}, {1, 8}, {{"scalar", i}});
    const uint32_t d = b.ScalarOp("divs", {s}, {1, 8}, {{"scalar", n - i}});
    return std::vector<uint32_t>{b.Assemble(d, args[0], {i, 0}, {1, 8})};
  });
  b.Output("out", outs[0]);
  return b.Build();
}

// Regression: a vec_tile dim of INT64_MAX (the verifier's tile count
// overflowed, then divided by zero).
pto::v1::Graph CrashVecTileInt64Max() {
  GraphBuilder b("crash_vec_tile");
  uint32_t a = b.Input("a", kF32, {6, 10});
  b.Output("out", b.Op("exp", {a}, {4, std::numeric_limits<int64_t>::max()}));
  return b.Build();
}

// Regression: a dim (n+1)*(n+2)*...*(n+7), whose multiplied-out form the
// region lowering failed to read back (an unchecked StatusOr).
pto::v1::Graph CrashSymbolicProduct() {
  return testing::SymbolicProductGraph("crash_sym_product");
}

bool Write(const std::string& dir, const std::string& name, const pto::v1::Graph& g) {
  pto::v1::CompileRequest request;
  *request.mutable_graph() = g;
  request.set_target("host-x86_64");
  std::string bytes;
  {
    // Deterministic: map fields (attrs) in key order, so the files only
    // change when the graphs do.
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!request.SerializeToCodedStream(&coded)) return false;
  }
  std::ofstream out(dir + "/" + name + ".pb", std::ios::binary);
  out << bytes;
  return out.good();
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_corpus DIR\n");
    return 2;
  }
  const std::vector<std::pair<std::string, std::function<pto::v1::Graph()>>> seeds = {
      {"elementwise", Elementwise},
      {"fused", Fused},
      {"bcast_where_cast", BroadcastWhereCast},
      {"matmul", Matmul},
      {"reduction", Reduction},
      {"softmax", Softmax},
      {"softmax_loop", SoftmaxLoop},
      {"layout", Layout},
      {"concat_reshape", ConcatReshape},
      {"creation", Creation},
      {"symbolic", Symbolic},
      {"loop_if", LoopIf},
      {"loop_matmul", LoopMatmul},
      {"scalars", Scalars},
      {"crash_vec_tile_int64_max", CrashVecTileInt64Max},
      {"crash_symbolic_product", CrashSymbolicProduct},
  };
  for (const auto& [name, make] : seeds) {
    if (!Write(argv[1], name, make())) {
      std::fprintf(stderr, "cannot write %s/%s.pb\n", argv[1], name.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace pto::compiler

int main(int argc, char** argv) { return pto::compiler::Main(argc, argv); }
