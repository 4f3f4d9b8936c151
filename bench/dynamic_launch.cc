// The cost of compiling once for every size. Softmax over the last
// dim of x[bs, 32, 1, 256] (tile [1, 4, 1, 256], one fused group), compiled
// static at each size and once with bs symbolic; prints per size the median
// Kernel::Run time of the static kernel, of the dynamic kernel once its plan
// for that size is cached, and the dynamic kernel's first run at a new size
// (binding + template expansion + run), with the dynamic/static ratios.
// bs = 1 is one task: its run time is the launch overhead (call to first
// task and back). The two kernels alternate so machine load hits both alike.
//
//   bazel run //bench:dynamic_launch [-- bs...]    (default 1 64 4096)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "compiler/compile.h"
#include "runtime/kernel.h"

namespace {

using pto::runtime::Kernel;
using pto::runtime::TensorArg;

pto::v1::Graph Softmax(int64_t bs, bool symbolic) {
  pto::v1::Graph g;
  g.set_schema_version(pto::v1::SCHEMA_VERSION_1);
  g.set_name(symbolic ? "softmax_dyn" : "softmax");
  auto value = [&](uint32_t id, int64_t last) {
    pto::v1::Value* v = g.add_values();
    v->set_id(id);
    v->set_dtype(pto::v1::DT_FP32);
    pto::v1::Dim* d0 = v->mutable_shape()->add_dims();
    if (symbolic) {
      d0->set_symbol("bs");
    } else {
      d0->set_size(bs);
    }
    for (int64_t d : {int64_t{32}, int64_t{1}, last}) v->mutable_shape()->add_dims()->set_size(d);
  };
  auto op = [&](const char* kind, std::vector<uint32_t> in, uint32_t out, bool reduce) {
    pto::v1::Op* o = g.add_ops();
    o->set_kind(kind);
    for (uint32_t i : in) o->add_inputs(i);
    o->add_outputs(out);
    for (int64_t t : {1, 4, 1, 256}) o->mutable_vec_tile()->add_dims(t);
    if (reduce) {
      (*o->mutable_attrs())["dim"].set_i(-1);
      (*o->mutable_attrs())["keepdim"].set_b(true);
    }
  };
  value(1, 256);  // x
  value(2, 1);    // amax
  value(3, 256);  // x - m
  value(4, 256);  // exp
  value(5, 1);    // sum
  value(6, 256);  // out
  op("amax", {1}, 2, true);
  op("sub", {1, 2}, 3, false);
  op("exp", {3}, 4, false);
  op("sum", {4}, 5, true);
  op("div", {4, 5}, 6, false);
  pto::v1::Parameter* p = g.add_params();
  p->set_name("x");
  p->set_role(pto::v1::PARAM_ROLE_IN);
  p->set_value_id(1);
  p = g.add_params();
  p->set_name("out");
  p->set_role(pto::v1::PARAM_ROLE_OUT);
  p->set_value_id(6);
  return g;
}

std::unique_ptr<Kernel> Load(const pto::v1::Graph& g) {
  auto compiled = pto::compiler::Compile(g, "host", {});
  if (!compiled.ok()) {
    std::fprintf(stderr, "compile failed: %s\n", compiled.status().ToString().c_str());
    std::exit(1);
  }
  auto kernel = Kernel::Load(compiled->binary);
  if (!kernel.ok()) {
    std::fprintf(stderr, "load failed: %s\n", kernel.status().ToString().c_str());
    std::exit(1);
  }
  return *std::move(kernel);
}

double Seconds(const Kernel& k, const std::vector<TensorArg>& args) {
  auto start = std::chrono::steady_clock::now();
  absl::Status s = k.Run(args);
  if (!s.ok()) {
    std::fprintf(stderr, "run failed: %s\n", s.ToString().c_str());
    std::exit(1);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty()) sizes = {1, 64, 4096};
  std::unique_ptr<Kernel> dynamic = Load(Softmax(0, true));
  std::printf("%8s %12s %12s %8s %14s %8s\n", "bs", "static_us", "dynamic_us",
              "ratio", "first_dyn_us", "ratio");
  for (int64_t bs : sizes) {
    std::unique_ptr<Kernel> fixed = Load(Softmax(bs, false));
    std::vector<float> x(bs * 32 * 256), out(x.size());
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97) / 50.0f;
    std::vector<TensorArg> args = {{x.data(), pto::v1::DT_FP32, {bs, 32, 1, 256}},
                                   {out.data(), pto::v1::DT_FP32, {bs, 32, 1, 256}}};
    const double first = Seconds(*dynamic, args);  // expands this size's plan
    const int reps = bs >= 4096 ? 15 : 301;
    std::vector<double> s, d;
    for (int r = 0; r < reps; ++r) {
      s.push_back(Seconds(*fixed, args));
      d.push_back(Seconds(*dynamic, args));
    }
    const double ms = Median(s), md = Median(d);
    std::printf("%8lld %12.1f %12.1f %8.2f %14.1f %8.2f\n", static_cast<long long>(bs),
                ms * 1e6, md * 1e6, md / ms, first * 1e6, first / ms);
  }
  std::printf("plans expanded: %lld\n", static_cast<long long>(dynamic->plans_expanded()));
  return 0;
}
