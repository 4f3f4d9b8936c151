// A client process for ptod_cluster_test: requests kernels of the fake
// backend (tests/cluster/fake_backend.h) through ptod replicas and checks
// what comes back.
//
//   cluster_client_process REPLICAS KERNELS CLIENT ROUNDS
//
// REPLICAS and KERNELS are comma-separated; CLIENT (0, 1, ...) sets the order
// in which this client walks the kernels and replicas, so that clients
// arrive at different replicas with the same kernel at once. Each of ROUNDS
// rounds requests every kernel once. Prints "ok N errors N wrong N" (wrong:
// a kernel whose payload is not its key's, or another kernel's name), then
// the first error's message if any; exits 0 when it could run at all.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "grpcpp/grpcpp.h"
#include "pto/v1/compile_service.grpc.pb.h"
#include "tests/cluster/fake_backend.h"

int main(int argc, char** argv) {
  int client = 0, rounds = 0;
  if (argc != 5 || !absl::SimpleAtoi(argv[3], &client) ||
      !absl::SimpleAtoi(argv[4], &rounds)) {
    std::fprintf(stderr, "usage: %s REPLICAS KERNELS CLIENT ROUNDS\n", argv[0]);
    return 2;
  }
  const std::vector<std::string> replicas = absl::StrSplit(argv[1], ',');
  const std::vector<std::string> kernels = absl::StrSplit(argv[2], ',');
  std::vector<std::unique_ptr<pto::v1::CompileService::Stub>> stubs;
  for (const std::string& address : replicas) {
    stubs.push_back(pto::v1::CompileService::NewStub(
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials())));
  }
  int ok = 0, errors = 0, wrong = 0;
  std::string first_error;
  for (int round = 0; round < rounds; ++round) {
    for (size_t i = 0; i < kernels.size(); ++i) {
      const size_t k = (i + client * 3 + round) % kernels.size();
      auto& stub = stubs[(k + client + round) % stubs.size()];
      pto::v1::CompileRequest request;
      request.set_target(kernels[k]);
      pto::v1::CompileResponse response;
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() +
                           std::chrono::seconds(60));
      grpc::Status status = stub->Compile(&context, request, &response);
      if (!status.ok()) {
        ++errors;
        if (first_error.empty()) first_error = status.error_message();
      } else if (response.binary().native_payload() !=
                     pto::testing::FakePayload(response.key()) ||
                 response.binary().kernel_name() != kernels[k]) {
        ++wrong;
      } else {
        ++ok;
      }
    }
  }
  std::printf("ok %d errors %d wrong %d\n%s\n", ok, errors, wrong,
              first_error.c_str());
  return 0;
}
