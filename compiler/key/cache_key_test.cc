#include "compiler/key/cache_key.h"

#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/compile.h"
#include "compiler/ir/import.h"
#include "compiler/key/fingerprint.h"
#include "compiler/options.h"
#include "compiler/testing/graph_builder.h"
#include "compiler/util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/host_target.h"

namespace pto::compiler {
namespace {

using testing::GraphBuilder;

// a*2.5 + exp(b) -> out, with configurable ids, names and knobs.
struct Knobs {
  uint32_t first_id = 1;
  uint32_t stride = 1;
  std::string prefix = "";
  pto::v1::DataType dtype = pto::v1::DT_FP32;
  std::vector<int64_t> shape = {8, 16};
  std::vector<int64_t> tile = {4, 8};
  std::string unary = "exp";
  double scalar = 2.5;
};

pto::v1::Graph Make(const Knobs& k) {
  GraphBuilder b(k.prefix + "kernel", k.first_id, k.stride);
  uint32_t a = b.Input(k.prefix + "a", k.dtype, k.shape);
  uint32_t bb = b.Input(k.prefix + "b", k.dtype, k.shape);
  uint32_t s = b.Op("muls", {a}, k.tile, k.scalar, k.prefix + "scale");
  uint32_t e = b.Op(k.unary, {bb}, k.tile, std::nullopt, k.prefix + "e");
  b.Output(k.prefix + "out", b.Op("add", {s, e}, k.tile));
  return b.Build();
}

std::string Key(const pto::v1::Graph& g, const std::string& target = "host",
                const CompileOptions& options = {}) {
  absl::StatusOr<std::string> key = CacheKey(g, target, options);
  EXPECT_TRUE(key.ok()) << key.status();
  return key.ok() ? *key : "";
}

TEST(CacheKeyTest, IsLowercaseHexSha256) {
  std::string key = Key(Make({}));
  ASSERT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
}

// Op attributes and dtypes: cast's target dtype, clip's bounds and
// the BOOL/integer types all reach the key.
TEST(CacheKeyTest, CoversCastDTypeClipBoundsAndNewDTypes) {
  auto cast_graph = [](pto::v1::DataType to, pto::v1::DataType in) {
    testing::GraphBuilder b("k");
    uint32_t x = b.Input("x", in, {4, 8});
    b.Output("out", b.Cast(x, to, {4, 8}));
    return b.Build();
  };
  const std::string f16 = Key(cast_graph(pto::v1::DT_FP16, pto::v1::DT_FP32));
  EXPECT_NE(Key(cast_graph(pto::v1::DT_BF16, pto::v1::DT_FP32)), f16);
  EXPECT_NE(Key(cast_graph(pto::v1::DT_FP16, pto::v1::DT_INT32)), f16);
  EXPECT_NE(Key(cast_graph(pto::v1::DT_FP16, pto::v1::DT_BOOL)), f16);

  auto clip_graph = [](double lo, double hi) {
    testing::GraphBuilder b("k");
    uint32_t x = b.Input("x", pto::v1::DT_FP32, {4, 8});
    uint32_t c = b.Op("clip", {x}, {4, 8});
    auto* attrs = b.graph().mutable_ops(0)->mutable_attrs();
    (*attrs)["min"].set_f(lo);
    (*attrs)["max"].set_f(hi);
    b.Output("out", c);
    return b.Build();
  };
  const std::string clip = Key(clip_graph(-1, 1));
  EXPECT_NE(Key(clip_graph(-1, 2)), clip);
  EXPECT_NE(Key(clip_graph(-2, 1)), clip);
  EXPECT_EQ(Key(clip_graph(-1, 1)), clip);
}

TEST(CacheKeyTest, IgnoresValueNumberingAndNames) {
  const std::string base = Key(Make({}));
  Knobs renumbered;
  renumbered.first_id = 1000;
  renumbered.stride = 7;
  EXPECT_EQ(Key(Make(renumbered)), base);
  Knobs renamed;
  renamed.prefix = "other\"\n*/";
  EXPECT_EQ(Key(Make(renamed)), base);
}

TEST(CacheKeyTest, IgnoresOrderOfTheValuesList) {
  pto::v1::Graph g = Make({});
  const std::string base = Key(g);
  auto* values = g.mutable_values();
  std::reverse(values->begin(), values->end());
  EXPECT_EQ(Key(g), base);
}

TEST(CacheKeyTest, DefaultOptionsHashLikeExplicitDefaults) {
  EXPECT_EQ(Key(Make({}), "host", {{"opt_level", "2"}}), Key(Make({})));
}

TEST(CacheKeyTest, ChangesWithEverySemanticField) {
  const std::string base = Key(Make({}));
  std::vector<std::pair<std::string, std::function<void(Knobs*)>>> changes = {
      {"dtype", [](Knobs* k) { k->dtype = pto::v1::DT_FP16; }},
      {"shape", [](Knobs* k) { k->shape = {8, 17}; }},
      {"tile", [](Knobs* k) { k->tile = {4, 16}; }},
      {"op kind", [](Knobs* k) { k->unary = "neg"; }},
      {"attribute", [](Knobs* k) { k->scalar = 2.5000001; }},
  };
  for (const auto& [what, change] : changes) {
    Knobs k;
    change(&k);
    EXPECT_NE(Key(Make(k)), base) << what;
  }
  EXPECT_NE(Key(Make({}), "host", {{"opt_level", "3"}}), base) << "option";
  EXPECT_NE(Key(Make({}), "host", {{"frontend_key", "0a1b"}}), base) << "frontend_key";
  EXPECT_NE(Key(Make({}), "host", {{"frontend_key", "0a1b"}}),
            Key(Make({}), "host", {{"frontend_key", "0a1c"}}));
}

TEST(CacheKeyTest, FrontendKeyMustBeShortLowercaseHex) {
  for (const std::string& bad :
       std::vector<std::string>{"", "0A1B", "xyz", std::string(65, 'a')}) {
    EXPECT_EQ(CacheKey(Make({}), "host", {{"frontend_key", bad}}).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(CacheKeyTest, ChangesWithTarget) {
  const std::vector<std::string>& targets = runtime::KnownHostTargets();
  ASSERT_GE(targets.size(), 2u);
  EXPECT_NE(Key(Make({}), targets[0]), Key(Make({}), targets[1]));
  // Every known target has its own key (a v4 binary never serves a v3 client).
  std::set<std::string> keys;
  for (const std::string& t : targets) keys.insert(Key(Make({}), t));
  EXPECT_EQ(keys.size(), targets.size());
  EXPECT_NE(Key(Make({}), "host-x86_64-v3"), Key(Make({}), runtime::kHostV4Target));
  EXPECT_NE(Key(Make({}), runtime::kHostAmxTarget), Key(Make({}), runtime::kHostV4AmxTarget));
  // "host" is resolved before hashing.
  EXPECT_EQ(Key(Make({}), "host"), Key(Make({}), runtime::NativeHostTarget()));
}

TEST(CacheKeyTest, ChangesWithOperandOrder) {
  pto::v1::Graph g = Make({});
  const std::string base = Key(g);
  auto* add = g.mutable_ops(2);
  uint32_t first = add->inputs(0);
  add->set_inputs(0, add->inputs(1));
  add->set_inputs(1, first);
  EXPECT_NE(Key(g), base);
}

TEST(CacheKeyTest, ChangesWithParamRoleAndOrder) {
  pto::v1::Graph g = Make({});
  const std::string base = Key(g);
  auto* params = g.mutable_params();
  params->SwapElements(0, 1);
  EXPECT_NE(Key(g), base);
}

TEST(CacheKeyTest, RejectsInvalidGraphsTargetsAndOptions) {
  pto::v1::Graph bad = Make({});
  bad.mutable_ops(0)->set_kind("nope");
  EXPECT_EQ(CacheKey(bad, "host", {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CacheKey(Make({}), "host", {{"fast", "1"}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(CacheKey(Make({}), "host", {{"fast", "1"}}).status().message(),
              ::testing::HasSubstr("\"fast\""));
  EXPECT_EQ(CacheKey(Make({}), "host", {{"opt_level", "9"}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CacheKey(Make({}), "cuda-sm90", {}).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(CacheKey(Make({}), "ascend910b", {}).status().code(),
            absl::StatusCode::kUnimplemented);
  absl::Status unknown = CacheKey(Make({}), "vax", {}).status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.message(), ::testing::HasSubstr("host-x86_64"));
}

TEST(CacheKeyTest, CanonicalBytesDropNames) {
  absl::StatusOr<TensorGraph> a = testing::VerifyAndImport(Make({}));
  Knobs renamed;
  renamed.prefix = "zzz";
  absl::StatusOr<TensorGraph> b = testing::VerifyAndImport(Make(renamed));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(CanonicalGraphBytes(*a), CanonicalGraphBytes(*b));
}

// exp(x) + y over [d0, 16] and [d1, 16] (with the same symbol unless
// `second` differs).
pto::v1::Graph SymGraph(const std::string& first, const std::string& second) {
  GraphBuilder b("k");
  uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {SymExpr::Symbol(first), 16});
  uint32_t y = b.SymInput("y", pto::v1::DT_FP32, {SymExpr::Symbol(second), 16});
  uint32_t e = b.Op("exp", {x}, {4, 8});
  // Different symbols do not broadcast: give the second its own output.
  b.Output("out", b.Op("add", {e, e}, {4, 8}));
  b.Output("out2", b.Op("exp", {y}, {4, 8}));
  return b.Build();
}

TEST(CacheKeyTest, SymbolNamesDoNotReachTheKeyButTheirIdentityDoes) {
  const std::string same = Key(SymGraph("bs", "bs"));
  EXPECT_EQ(Key(SymGraph("batch", "batch")), same);  // renamed: one binary
  const std::string two = Key(SymGraph("a", "b"));
  EXPECT_NE(two, same);                              // two symbols != one
  EXPECT_EQ(Key(SymGraph("p", "q")), two);
  EXPECT_EQ(Key(SymGraph("q", "p")), two);           // name order irrelevant
}

TEST(CacheKeyTest, SymbolicDimsDifferFromEveryStaticSize) {
  const std::string sym = Key(SymGraph("bs", "bs"));
  GraphBuilder b("k");
  uint32_t x = b.Input("x", pto::v1::DT_FP32, {8, 16});
  uint32_t y = b.Input("y", pto::v1::DT_FP32, {8, 16});
  uint32_t e = b.Op("exp", {x}, {4, 8});
  b.Output("out", b.Op("add", {e, e}, {4, 8}));
  b.Output("out2", b.Op("exp", {y}, {4, 8}));
  EXPECT_NE(Key(b.Build()), sym);
}

// CacheKey hashes the real compiler fingerprint in the key's fingerprint field.
TEST(CacheKeyTest, CacheKeyUsesTheCompilerFingerprint) {
  absl::StatusOr<TensorGraph> g = testing::VerifyAndImport(Make({}));
  ASSERT_TRUE(g.ok()) << g.status();
  const std::string target = runtime::KnownHostTargets()[0];
  const CompileOptions options = CanonicalOptions(ParsedOptions{});
  EXPECT_EQ(Key(Make({}), target),
            ComputeCacheKey(*g, target, options, CompilerFingerprint()));
  EXPECT_NE(Key(Make({}), target),
            ComputeCacheKey(*g, target, options, std::string(64, '0')));
}

// The key is that of the compiler a compile would run, identified by its
// executable's bytes and never run for it (a stand-in that would leave a mark
// leaves none): another compiler, or the same path with other contents, gives
// another fingerprint and key; a wrapper (cxx) is keyed by what it wraps
// (cxx_name).
TEST(CacheKeyTest, KeyChangesWithTheCompilerSettingsName) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-cache-key-test");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string mark = dir->path() + "/ran";
  auto stand_in = [&](const std::string& name, const std::string& version) {
    const std::string path = dir->path() + "/" + name;
    EXPECT_TRUE(WriteFile(path, absl::StrCat("#!/bin/sh\ntouch '", mark, "'\necho '",
                                             version, "'\n"))
                    .ok());
    chmod(path.c_str(), 0700);
    return path;
  };
  const std::string cxx = stand_in("other-cxx", "other-cxx 99.1");
  const std::string newer = stand_in("newer-cxx", "other-cxx 99.2");
  const FingerprintInputs in = CurrentFingerprintInputs(cxx);
  EXPECT_EQ(in.compiler, CompilerIdentity(cxx));
  EXPECT_TRUE(absl::StartsWith(in.compiler, cxx + ": ")) << in.compiler;
  EXPECT_EQ(in.toolchain, CurrentFingerprintInputs().toolchain);
  EXPECT_NE(CompilerFingerprint(cxx), CompilerFingerprint());
  EXPECT_NE(CompilerIdentity(cxx), CompilerIdentity(newer));
  EXPECT_EQ(&CompilerFingerprint(cxx), &CompilerFingerprint(cxx));
  EXPECT_TRUE(absl::StartsWith(CompilerIdentity("no-such-compiler-here"),
                               "unresolved: "));

  CompileSettings settings;
  settings.cxx = cxx;
  const std::string target = runtime::KnownHostTargets()[0];
  absl::StatusOr<std::string> other = CacheKey(Make({}), target, {}, settings);
  ASSERT_TRUE(other.ok()) << other.status();
  absl::StatusOr<TensorGraph> g = testing::VerifyAndImport(Make({}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(*other, ComputeCacheKey(*g, target, CanonicalOptions(ParsedOptions{}),
                                    CompilerFingerprint(cxx)));
  EXPECT_NE(*other, Key(Make({}), target));
  CompileSettings wrapped;
  wrapped.cxx = newer;  // a wrapper around cxx
  wrapped.cxx_name = cxx;
  absl::StatusOr<std::string> same = CacheKey(Make({}), target, {}, wrapped);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(*same, *other);
  EXPECT_FALSE(std::filesystem::exists(mark)) << "a stand-in compiler was run";
}

// Each input of the fingerprint (fingerprint.h) reaches the key through it.
TEST(CacheKeyTest, ChangesWithEachFingerprintInput) {
  absl::StatusOr<TensorGraph> g = testing::VerifyAndImport(Make({}));
  ASSERT_TRUE(g.ok()) << g.status();
  const CompileOptions options = CanonicalOptions(ParsedOptions{});
  auto key = [&](const FingerprintInputs& in) {
    return ComputeCacheKey(*g, "host-x86_64-v3", options, FingerprintOf(in));
  };
  const FingerprintInputs real = CurrentFingerprintInputs();
  ASSERT_FALSE(real.headers.empty());
  ASSERT_FALSE(real.flags.empty());
  const std::string base = key(real);
  std::vector<std::pair<std::string, std::function<void(FingerprintInputs*)>>>
      changes = {
          {"build id", [](FingerprintInputs* in) { in->build_id += "+1"; }},
          {"pto_tile.h's contents",
           [](FingerprintInputs* in) {
             for (auto& [name, contents] : in->headers) {
               if (name == "pto_tile.h") contents += "\n// changed\n";
             }
           }},
          {"an added header",
           [](FingerprintInputs* in) { in->headers.emplace_back("extra.h", ""); }},
          {"a compiler flag",
           [](FingerprintInputs* in) { in->flags.back() += " -ffast-math"; }},
          {"the toolchain", [](FingerprintInputs* in) { in->toolchain += " "; }},
          {"the compiler", [](FingerprintInputs* in) { in->compiler += "0"; }},
      };
  for (const auto& [what, change] : changes) {
    FingerprintInputs in = real;
    change(&in);
    EXPECT_NE(key(in), base) << what;
  }
}

TEST(CacheKeyTest, FingerprintIsStableHex) {
  const std::string& f = CompilerFingerprint();
  EXPECT_EQ(f.size(), 64u);
  EXPECT_EQ(&f, &CompilerFingerprint());
}

}  // namespace
}  // namespace pto::compiler
