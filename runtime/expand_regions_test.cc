// The program tree of a templated Execute Graph, built by
// hand: loops expand their body per iteration with the index bound, dynamic
// args reach the tasks and their accesses, independent iterations get no
// dependencies and iterations on one region a chain, ifs pick a branch,
// region checks fail with the op and the values, and VerifyProgram refuses
// malformed trees.
#include "runtime/expand_regions.h"

#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::runtime {
namespace {

using ::testing::HasSubstr;

pto::v1::DimExpr Sym(const std::string& s) {
  pto::v1::DimExpr e;
  e.set_symbol(s);
  return e;
}

pto::v1::DimExpr Const(int64_t c) {
  pto::v1::DimExpr e;
  e.set_constant(c);
  return e;
}

pto::v1::DimExpr Bin(pto::v1::DimOp op, pto::v1::DimExpr a, pto::v1::DimExpr b) {
  pto::v1::DimExpr e;
  e.mutable_binary()->set_op(op);
  *e.mutable_binary()->mutable_lhs() = a;
  *e.mutable_binary()->mutable_rhs() = b;
  return e;
}

// Buffers: 0 = x [n,4] (read), 1 = y [n,4] (written at row i, or at row 0
// when `carried`). One template over [1,4]: y[row] = f(x[i], y[row]).
pto::v1::ExecuteGraph Graph(bool carried) {
  pto::v1::ExecuteGraph g;
  g.add_functions()->set_num_args(3);
  pto::v1::TaskTemplate* t = g.add_templates();
  t->set_label("op #0 body op #1");
  t->add_space()->set_size(1);
  t->add_space()->set_size(4);
  t->add_tile(1);
  t->add_tile(4);
  pto::v1::ExtentFunction* f = t->add_functions();
  f->add_extent(1);
  f->add_extent(4);
  t->add_dynamic_args(0);
  *g.add_dynamic_offsets() = Sym("i");
  auto access = [&](uint32_t buffer, bool write, bool dynamic) {
    pto::v1::TemplateAccess* a = t->add_accesses();
    a->set_buffer(buffer);
    a->set_write(write);
    pto::v1::AccessIndex* row = a->add_index();
    row->set_space_dim(-1);
    row->set_div(1);
    if (dynamic) row->set_dynamic(1);
    pto::v1::AccessIndex* col = a->add_index();
    col->set_space_dim(1);
    col->set_div(1);
  };
  access(0, false, true);
  access(1, false, !carried);
  access(1, true, !carried);
  pto::v1::LoopNode* loop = g.add_program()->mutable_loop();
  loop->set_index("i");
  *loop->mutable_start() = Const(0);
  *loop->mutable_stop() = Sym("n");
  loop->set_step(1);
  loop->add_body()->set_template_index(0);
  return g;
}

absl::StatusOr<pto::v1::ExecuteGraph> Expand(const pto::v1::ExecuteGraph& g,
                                             int64_t n) {
  std::vector<ExpandGroup> groups;
  if (absl::Status s = ExpandProgram(g, {{"n", n}}, &groups); !s.ok()) return s;
  ExpandLimits limits;
  limits.prune_covered = true;
  pto::v1::ExecuteGraph out;
  if (absl::Status s = ExpandTasks({{n, 4}, {n, 4}}, groups, {}, limits, &out);
      !s.ok()) {
    return s;
  }
  return out;
}

TEST(ExpandRegionsTest, IndependentIterationsRunConcurrently) {
  auto out = Expand(Graph(false), 5);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->tasks_size(), 5);
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(out->tasks(k).deps_size(), 0) << k;
    EXPECT_THAT(out->tasks(k).args(), ::testing::ElementsAre(0, 0, k));
  }
}

TEST(ExpandRegionsTest, IterationsOnOneRegionFormAChain) {
  auto out = Expand(Graph(true), 6);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->tasks_size(), 6);
  EXPECT_EQ(out->tasks(0).deps_size(), 0);
  for (int k = 1; k < 6; ++k) {
    EXPECT_THAT(out->tasks(k).deps(), ::testing::ElementsAre(k - 1)) << k;
  }
}

TEST(ExpandRegionsTest, ZeroTripsAndBranches) {
  pto::v1::ExecuteGraph g = Graph(false);
  *g.mutable_program(0)->mutable_loop()->mutable_start() = Sym("n");
  auto out = Expand(g, 3);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->tasks_size(), 0);

  // if n > 2: the loop; else nothing.
  pto::v1::ExecuteGraph h = Graph(false);
  pto::v1::ExecNode loop = h.program(0);
  h.clear_program();
  pto::v1::IfNode* branch = h.add_program()->mutable_if_node();
  *branch->mutable_cond() = Bin(pto::v1::DIM_OP_GT, Sym("n"), Const(2));
  *branch->add_then_body() = loop;
  EXPECT_EQ(Expand(h, 3)->tasks_size(), 3);
  EXPECT_EQ(Expand(h, 2)->tasks_size(), 0);
}

TEST(ExpandRegionsTest, FailedRegionCheckNamesTheOpAndTheValues) {
  pto::v1::ExecuteGraph g = Graph(false);
  pto::v1::RegionCheck* c =
      g.mutable_program(0)->mutable_loop()->mutable_body()->Add()->mutable_check();
  c->set_label("op #0 body op #0 \"view\"");
  *c->add_offsets() = Bin(pto::v1::DIM_OP_ADD, Sym("i"), Const(1));
  c->add_extent()->set_size(1);
  c->add_bound()->set_symbol("n");
  auto out = Expand(g, 4);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              ::testing::AllOf(HasSubstr("op #0 body op #0 \"view\""),
                               HasSubstr("offsets [4]"), HasSubstr("shape [4]"),
                               HasSubstr("i=3, n=4")));
}

TEST(ExpandRegionsTest, VerifyProgramRefusesMalformedTrees) {
  pto::v1::ExecuteGraph g = Graph(false);
  EXPECT_TRUE(VerifyProgram(g).ok()) << VerifyProgram(g);
  g.mutable_program(0)->mutable_loop()->mutable_body(0)->set_template_index(7);
  EXPECT_THAT(VerifyProgram(g).message(), HasSubstr("template index 7 out of range"));
  g = Graph(false);
  g.mutable_program(0)->mutable_loop()->set_step(0);
  EXPECT_THAT(VerifyProgram(g).message(), HasSubstr("step 0"));
  g = Graph(false);
  g.mutable_templates(0)->set_dynamic_args(0, 5);
  EXPECT_THAT(VerifyProgram(g).message(), HasSubstr("dynamic arg 5 out of range"));
  g = Graph(false);
  g.mutable_templates(0)->mutable_accesses(0)->mutable_index(0)->set_dynamic(2);
  EXPECT_THAT(VerifyProgram(g).message(), HasSubstr("names dynamic arg 2 of 1"));
  g = Graph(false);
  pto::v1::ExecNode* node = g.mutable_program(0);
  for (int k = 0; k < 20; ++k) {
    pto::v1::LoopNode* inner = node->mutable_loop()->add_body()->mutable_loop();
    inner->set_index("j");
    inner->set_step(1);
    node = node->mutable_loop()->mutable_body(node->loop().body_size() - 1);
  }
  EXPECT_THAT(VerifyProgram(g).message(), HasSubstr("nested deeper than"));
}

TEST(ExpandRegionsTest, AccessesOutsideTheirBufferAreRefused) {
  ExpandGroup g;
  g.label = "op #1";
  g.space = {1, 4};
  g.tile = {1, 4};
  g.accesses.push_back({0, {{-1, 1, 2}, {1, 1, 0}}, false});
  EXPECT_TRUE(CheckAccessBounds(g, {{3, 4}}).ok());
  g.accesses[0].index[0].offset = 3;  // row 3 of a [3,4] buffer
  EXPECT_THAT(CheckAccessBounds(g, {{3, 4}}).message(),
              ::testing::AllOf(HasSubstr("template op #1"), HasSubstr("[3, 4) in dim 0"),
                               HasSubstr("outside the buffer")));
  g.accesses[0].index[0].offset = 0;
  g.accesses[0].index[1].offset = 1;  // columns 1..4 of 4
  EXPECT_FALSE(CheckAccessBounds(g, {{3, 4}}).ok());
}

// A GM stride the block code takes from a dynamic arg must be the buffer's
// row-major stride at the binding; the group is checked, not each task.
TEST(ExpandRegionsTest, StrideArgsMustMatchTheBufferShape) {
  ExpandGroup g;
  g.label = "op #2";
  g.space = {3, 5};
  g.tile = {1, 4};
  g.accesses.push_back({0, {{0, 1, 0}, {1, 1, 0}}, false});
  g.accesses[0].stride_arg = {2, 0};  // dim 0's stride: extra_args[1]
  g.extra_args = {7, 5};
  EXPECT_TRUE(CheckAccessBounds(g, {{3, 5}}).ok());
  g.extra_args[1] = 6;
  EXPECT_THAT(CheckAccessBounds(g, {{3, 5}}).message(),
              ::testing::AllOf(HasSubstr("template op #2: access #0 (a load of buffer 0 of "
                                         "shape [3,5]) addresses dim 0 with stride 6 "
                                         "(dynamic arg 1)"),
                               HasSubstr("row-major stride there is 5")));
  g.accesses[0].stride_arg = {3, 0};  // past the args
  EXPECT_THAT(CheckAccessBounds(g, {{3, 5}}).message(), HasSubstr("dynamic arg 2 of 2"));
  g.accesses[0].stride_arg = {2};  // one per dim
  EXPECT_THAT(CheckAccessBounds(g, {{3, 5}}).message(), HasSubstr("stride args for 1 dims"));
}

// Untrusted binaries: random byte mutations of a program must be refused by
// VerifyProgram or expand to a clean status, never crash.
TEST(ExpandRegionsTest, MutatedProgramsNeverCrash) {
  pto::v1::ExecuteGraph seed = Graph(true);
  pto::v1::RegionCheck* c =
      seed.mutable_program(0)->mutable_loop()->mutable_body()->Add()->mutable_check();
  c->set_label("view");
  *c->add_offsets() = Sym("i");
  *c->add_offsets() = Const(0);
  c->add_extent()->set_size(1);
  c->add_extent()->set_size(4);
  c->add_bound()->set_symbol("n");
  c->add_bound()->set_size(4);
  const std::string bytes = seed.SerializeAsString();
  std::mt19937 rng(7);
  int parsed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string b = bytes;
    for (int f = 1 + rng() % 3; f > 0; --f) b[rng() % b.size()] = static_cast<char>(rng());
    pto::v1::ExecuteGraph g;
    if (!g.ParseFromString(b)) continue;
    ++parsed;
    if (!VerifyProgram(g).ok()) continue;
    // The buffers the expansion assumes: two of rank 2 (VerifyTemplates
    // checks access ranks against them in a whole binary).
    bool ranks_ok = g.templates_size() > 0;
    for (const pto::v1::TaskTemplate& t : g.templates()) {
      for (const pto::v1::TemplateAccess& a : t.accesses()) {
        ranks_ok = ranks_ok && a.buffer() < 2 && a.index_size() == 2;
      }
      ranks_ok = ranks_ok && t.space_size() == t.tile_size() && t.tile_size() >= 1 &&
                 t.tile_size() <= 4;
      for (int64_t x : t.tile()) ranks_ok = ranks_ok && x > 0;
      for (const auto& a : t.accesses()) {
        for (const auto& x : a.index()) {
          ranks_ok = ranks_ok && x.space_dim() >= -2 && x.space_dim() < t.tile_size() &&
                     x.div() >= 1;
        }
      }
    }
    if (!ranks_ok) continue;
    std::vector<ExpandGroup> groups;
    absl::Status s = ExpandProgram(g, {{"n", 3}}, &groups);
    if (s.ok()) {
      ExpandLimits limits;
      limits.max_tasks = 1 << 16;
      limits.prune_covered = true;
      pto::v1::ExecuteGraph out;
      s = ExpandTasks({{3, 4}, {3, 4}}, groups, {}, limits, &out);
    }
    if (!s.ok()) {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    }
  }
  EXPECT_GT(parsed, 100);
}

}  // namespace
}  // namespace pto::runtime
