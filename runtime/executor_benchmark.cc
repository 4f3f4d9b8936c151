// Per-task scheduling overhead of the Executor: graphs of empty tasks, so
// the time per task is the scheduler's alone.
//
//   bazel build //runtime:executor_benchmark &&
//     bazel-bin/runtime/executor_benchmark --benchmark_repetitions=5
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/executor.h"

namespace pto::runtime {
namespace {

void Empty(void* const*, const int64_t*) {}

// `width` independent chains of `depth` tasks (width 1: a chain; depth 1:
// all independent).
std::unique_ptr<TaskPlan> Chains(int width, int depth) {
  pto::v1::ExecuteGraph g;
  g.add_buffers();
  g.add_functions()->set_core_type(pto::v1::CORE_TYPE_VECTOR);
  for (int d = 0; d < depth; ++d) {
    for (int w = 0; w < width; ++w) {
      pto::v1::Task* t = g.add_tasks();
      if (d > 0) t->add_deps((d - 1) * width + w);
    }
  }
  std::vector<pto_block_fn> fns = {Empty};
  return *TaskPlan::Create(g, fns);
}

void BM_Run(benchmark::State& state) {
  auto plan = Chains(state.range(0), state.range(1));
  void* buffers[] = {nullptr};
  Executor& ex = Executor::Default();
  for (auto _ : state) {
    absl::Status s = ex.Run(*plan, buffers);
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations() * plan->num_tasks());
}
BENCHMARK(BM_Run)
    ->Args({10000, 1})   // wide
    ->Args({512, 1})     // (a+b)*2 1024x1024 in 2x1024 tiles
    ->Args({32, 1})      // softmax 32x32x1x256 in 4x8x1x256 tiles
    ->Args({1, 10000})   // chain
    ->Args({64, 100})    // tiles x ops
    ->Args({1, 1});      // one task: per-run overhead

}  // namespace
}  // namespace pto::runtime

BENCHMARK_MAIN();
