// Per-iteration instances of loop-body workspaces, on hand-made groups: a
// body temporary gets a ring of K instances (iteration n uses n % K), so the
// tasks of different iterations depend on each other only through the ring's
// reuse; a workspace a value flows through from one iteration to the next
// (read before written, partly written), one touched outside the loop, and
// parameters stay shared; nested loops use the flattened iteration; the byte
// budget bounds the copies.
#include "runtime/workspace_instances.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::runtime {
namespace {

const int kLoop = 0, kInner = 0;  // addresses as loop ids
const void* const kOuterId = &kLoop;
const void* const kInnerId = &kInner;

ExpandAccess Access(int buffer, bool write, int64_t offset = 0) {
  return {buffer, {{0, 1, offset}}, write};
}

// Buffers: 0 = x [n*4] (param, read at row i), 1 = out [n*4] (param,
// written), 2 = w [4] (workspace). Per iteration: w = f(x[i]); out[i] = g(w).
struct Body {
  std::vector<ExpandGroup> groups;
  std::vector<std::vector<LoopVisit>> loops;
};

Body SoftmaxLike(int n, bool w_read_first = false) {
  Body b;
  for (int i = 0; i < n; ++i) {
    ExpandGroup produce{"partial", {4}, {4}, {0}, {Access(0, false, i * 4), Access(2, true)}};
    if (w_read_first) produce.accesses.push_back(Access(2, false));
    ExpandGroup consume{"combine", {4}, {4}, {0}, {Access(2, false), Access(1, true, i * 4)}};
    b.groups.push_back(produce);
    b.groups.push_back(consume);
    b.loops.push_back({{kOuterId, i}});
    b.loops.push_back({{kOuterId, i}});
  }
  return b;
}

const std::vector<int64_t> kBytes = {0, 0, 16};

std::vector<std::vector<int64_t>> Shapes(int n, int extra = 0) {
  std::vector<std::vector<int64_t>> s = {{n * 4}, {n * 4}, {4}};
  for (int i = 0; i < extra; ++i) s.push_back({4});
  return s;
}

// Task t's dependencies; groups have one task each.
pto::v1::ExecuteGraph Tasks(const Body& b, int n, int extra) {
  pto::v1::ExecuteGraph g;
  EXPECT_TRUE(ExpandTasks(Shapes(n, extra), b.groups, {}, ExpandLimits{}, &g).ok());
  return g;
}

TEST(WorkspaceInstancesTest, BodyTemporaryGetsARingOfInstances) {
  const int n = 10, k = 4;
  Body b = SoftmaxLike(n);
  WorkspaceInstances w = PrivatizeWorkspaces(b.loops, 2, kBytes, Shapes(n), k, &b.groups);
  ASSERT_EQ(w.copy_of, (std::vector<int>{2, 2, 2}));
  ASSERT_EQ(w.buffer_sets.size(), 4u);
  EXPECT_EQ(w.buffer_sets[0], (std::vector<int>{0, 1, 2}));
  for (int i = 0; i < n; ++i) {
    const int instance = i % k == 0 ? 2 : 2 + i % k;  // 2, then 3, 4, 5
    EXPECT_EQ(b.groups[2 * i].accesses[1].buffer, instance) << "iteration " << i;
    EXPECT_EQ(b.groups[2 * i + 1].accesses[0].buffer, instance);
    EXPECT_EQ(w.buffer_sets[w.group_set[2 * i]][2], instance);
    EXPECT_EQ(b.groups[2 * i].accesses[0].buffer, 0);  // parameters stay
  }
  pto::v1::ExecuteGraph g = Tasks(b, n, 3);
  for (int t = 0; t < g.tasks_size(); ++t) {
    for (uint32_t d : g.tasks(t).deps()) {
      const int it = t / 2, id = static_cast<int>(d) / 2;
      EXPECT_TRUE(it == id || (it - id) % k == 0)
          << "task " << t << " (iteration " << it << ") waits for task " << d
          << " (iteration " << id << ")";
    }
  }
  // Iteration 4 reuses iteration 0's instance: its write waits for 0's read.
  EXPECT_THAT(g.tasks(8).deps(), ::testing::Contains(1));
}

TEST(WorkspaceInstancesTest, WithoutInstancesIterationsChain) {
  const int n = 3;
  Body b = SoftmaxLike(n);
  WorkspaceInstances w = PrivatizeWorkspaces(b.loops, 2, kBytes, Shapes(n), 1, &b.groups);
  EXPECT_TRUE(w.buffer_sets.empty());
  pto::v1::ExecuteGraph g = Tasks(b, n, 0);
  EXPECT_THAT(g.tasks(2).deps(), ::testing::Contains(1));  // WAR on w
}

TEST(WorkspaceInstancesTest, TripCountBoundsTheInstances) {
  Body b = SoftmaxLike(2);
  WorkspaceInstances w = PrivatizeWorkspaces(b.loops, 2, kBytes, Shapes(2), 8, &b.groups);
  EXPECT_EQ(w.copy_of.size(), 1u);
}

TEST(WorkspaceInstancesTest, ByteBudgetBoundsTheCopies) {
  Body b = SoftmaxLike(10);
  const std::vector<int64_t> bytes = {0, 0, kMaxExtraWorkspaceBytes / 2};
  WorkspaceInstances w = PrivatizeWorkspaces(b.loops, 2, bytes, Shapes(10), 8, &b.groups);
  EXPECT_EQ(w.copy_of.size(), 2u);  // 2 copies fill the budget
}

TEST(WorkspaceInstancesTest, ValueFlowingBetweenIterationsStaysShared) {
  Body read_first = SoftmaxLike(5, /*w_read_first=*/true);
  EXPECT_TRUE(PrivatizeWorkspaces(read_first.loops, 2, kBytes, Shapes(5), 4,
                                  &read_first.groups).copy_of.empty());
  // Written only in part (one element of four) before being read.
  Body partial = SoftmaxLike(5);
  for (ExpandGroup& g : partial.groups) {
    if (g.label == "partial") g.space = {1};
  }
  EXPECT_TRUE(PrivatizeWorkspaces(partial.loops, 2, kBytes, Shapes(5), 4,
                                  &partial.groups).copy_of.empty());
  // Read after the loop.
  Body after = SoftmaxLike(5);
  after.groups.push_back({"after", {4}, {4}, {0}, {Access(2, false), Access(1, true)}});
  after.loops.push_back({});
  EXPECT_TRUE(PrivatizeWorkspaces(after.loops, 2, kBytes, Shapes(5), 4,
                                  &after.groups).copy_of.empty());
}

TEST(WorkspaceInstancesTest, NestedLoopsUseTheFlattenedIteration) {
  // for i in 0..3: for j in 0..2: w = f(x[..]); out[..] = g(w)
  Body b;
  int flat = 0;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j, ++flat) {
      b.groups.push_back({"partial", {4}, {4}, {0}, {Access(0, false, flat * 4), Access(2, true)}});
      b.groups.push_back({"combine", {4}, {4}, {0}, {Access(2, false), Access(1, true, flat * 4)}});
      for (int r = 0; r < 2; ++r) b.loops.push_back({{kOuterId, i}, {kInnerId, flat}});
    }
  }
  WorkspaceInstances w = PrivatizeWorkspaces(b.loops, 2, kBytes, Shapes(6), 6, &b.groups);
  ASSERT_EQ(w.copy_of.size(), 5u);
  std::vector<int> used;
  for (int f = 0; f < 6; ++f) used.push_back(b.groups[2 * f].accesses[1].buffer);
  EXPECT_EQ(used, (std::vector<int>{2, 3, 4, 5, 6, 7}));
  pto::v1::ExecuteGraph g = Tasks(b, 6, 5);
  for (int t = 0; t < g.tasks_size(); ++t) {
    for (uint32_t d : g.tasks(t).deps()) EXPECT_EQ(t / 2, static_cast<int>(d) / 2);
  }
}

}  // namespace
}  // namespace pto::runtime
