// Requests that once crashed the compiler, and other extreme ones, sent as
// Compile RPCs to the real ptod binary: each is answered INVALID_ARGUMENT
// naming the op and the field, and ptod stays alive and still compiles a
// valid graph afterwards.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/testing/graph_builder.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "gmock/gmock.h"
#include "pto/v1/compile_service.grpc.pb.h"
#include "tests/ptod/ptod_process.h"
#include "tests/ptod/test_util.h"

namespace pto::testing {
namespace {

using ::testing::HasSubstr;
using compiler::testing::GraphBuilder;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr pto::v1::DataType kF32 = pto::v1::DT_FP32;

struct BadRequest {
  std::string name;
  pto::v1::Graph graph;
  std::vector<std::string> message_parts;  // what the error must name
};

// exp(a) on f32[6,10] with vec_tile `tile`.
pto::v1::Graph ExpWithTile(const std::vector<int64_t>& tile) {
  GraphBuilder b("exp_tile");
  uint32_t a = b.Input("a", kF32, {6, 10});
  b.Output("out", b.Op("exp", {a}, tile));
  return b.Build();
}


// exp(a) with a's dims `shape` (the result's too) and vec_tile [1, 1].
pto::v1::Graph ExpOfShape(const std::vector<int64_t>& shape) {
  GraphBuilder b("exp_shape");
  uint32_t a = b.Input("a", kF32, {6, 10});
  uint32_t y = b.Op("exp", {a}, {1, 1});
  b.Output("out", y);
  pto::v1::Graph g = b.Build();
  for (pto::v1::Value& v : *g.mutable_values()) {
    for (int d = 0; d < 2; ++d) v.mutable_shape()->mutable_dims(d)->set_size(shape[d]);
  }
  return g;
}

// A view of x f32[6,8] at `offsets`.
pto::v1::Graph ViewAt(const std::vector<int64_t>& offsets) {
  GraphBuilder b("view");
  uint32_t x = b.Input("x", kF32, {6, 8});
  b.Output("out", b.Layout("view", {x}, {2, 4}, {2, 4},
                           {{"shape", {2, 4}}, {"offsets", offsets}}));
  return b.Build();
}

// A matmul f32[8,8] @ f32[8,8] with cube tile m = [mL0, mL1].
pto::v1::Graph MatmulWithM(int64_t m_l0, int64_t m_l1) {
  GraphBuilder b("matmul");
  uint32_t x = b.Input("x", kF32, {8, 8});
  uint32_t w = b.Input("w", kF32, {8, 8});
  b.Output("out", b.Matmul(x, w, {8, 8}, kF32, false, false, {m_l0, m_l1}, {8, 8}, {8, 8}));
  return b.Build();
}

std::vector<BadRequest> BadRequests() {
  return {
      {"vec_tile INT64_MAX", ExpWithTile({4, kInt64Max}),
       {"op #0 \"exp\"", "vec_tile dim 1 is 9223372036854775807"}},
      {"vec_tile INT64_MIN", ExpWithTile({kInt64Min, 4}),
       {"op #0 \"exp\"", "vec_tile dim 0 is -9223372036854775808"}},
      {"vec_tile 2^62", ExpWithTile({int64_t{1} << 62, int64_t{1} << 62}),
       {"op #0 \"exp\"", "vec_tile dim 0 is 4611686018427387904"}},
      {"dim (n+1)*...*(n+7)", compiler::testing::SymbolicProductGraph("sym_product"),
       {"param #1 \"x\"", "shape dim 0 expression multiplies out to"}},
      {"shape INT64_MAX", ExpOfShape({kInt64Max, kInt64Max}),
       {"param #0 \"a\"", "more than 1099511627776 elements"}},
      {"shape 2^31 x 2^31", ExpOfShape({int64_t{1} << 31, int64_t{1} << 31}),
       {"param #0 \"a\"", "more than 1099511627776 elements"}},
      {"view offset INT64_MAX", ViewAt({kInt64Max, 0}), {"op #0 \"view\"", "offsets"}},
      {"view offset INT64_MIN", ViewAt({0, kInt64Min}), {"op #0 \"view\"", "offsets"}},
      {"cube_tile INT64_MAX", MatmulWithM(kInt64Max, kInt64Max),
       {"op #0 \"matmul\"", "cube_tile m dim 1 is 9223372036854775807"}},
  };
}

class FaultCrashTest : public ::testing::Test {
 protected:
  std::vector<std::string> Flags() {
    return {"--address=127.0.0.1:0", "--metrics_address=", "--cache_dir=" + cache_.path(),
            "--workers=2"};
  }
  std::string LogPath() { return logs_.path() + "/ptod.log"; }

  TempDir cache_;
  TempDir logs_;
};

grpc::Status CallCompile(pto::v1::CompileService::Stub& stub, const pto::v1::Graph& graph,
                         pto::v1::CompileResponse* response) {
  pto::v1::CompileRequest request;
  *request.mutable_graph() = graph;
  request.set_target("host");
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  return stub.Compile(&context, request, response);
}

TEST_F(FaultCrashTest, ExtremeRequestsAreRejectedAndPtodLivesOn) {
  PtodProcess ptod(Flags(), LogPath());
  ASSERT_TRUE(ptod.spawned()) << PtodPath();
  const std::string address = ptod.WaitUntilListening();
  ASSERT_FALSE(address.empty()) << ReadWholeFile(LogPath());
  auto stub = pto::v1::CompileService::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));

  for (const BadRequest& bad : BadRequests()) {
    SCOPED_TRACE(bad.name);
    pto::v1::CompileResponse response;
    const grpc::Status s = CallCompile(*stub, bad.graph, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << s.error_message() << "\n" << ReadWholeFile(LogPath());
    for (const std::string& part : bad.message_parts) {
      EXPECT_THAT(s.error_message(), HasSubstr(part));
    }
    ASSERT_EQ(ptod.Wait(absl::ZeroDuration()), -1)
        << "ptod exited after " << bad.name << ":\n" << ReadWholeFile(LogPath());
  }

  // Still serving: a valid graph compiles.
  pto::v1::CompileResponse response;
  const grpc::Status ok = CallCompile(*stub, AddGraph({40, 24}, {16, 16}), &response);
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_FALSE(response.key().empty());
  EXPECT_EQ(ptod.Wait(absl::ZeroDuration()), -1) << ReadWholeFile(LogPath());
}

}  // namespace
}  // namespace pto::testing
