#include "tests/ptod/test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpc_health_v1.grpc.pb.h"
#include "pto/v1/compile_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace pto::testing {

pto::v1::Graph AddGraph(const std::vector<int64_t>& shape,
                        const std::vector<int64_t>& tile) {
  pto::v1::Graph graph;
  graph.set_schema_version(pto::v1::SCHEMA_VERSION_1);
  graph.set_name("add");
  const char* names[] = {"x", "y", "out"};
  for (uint32_t id = 0; id < 3; ++id) {
    pto::v1::Value* value = graph.add_values();
    value->set_id(id);
    value->set_name(names[id]);
    value->set_dtype(pto::v1::DT_FP32);
    for (int64_t d : shape) value->mutable_shape()->add_dims()->set_size(d);
  }
  for (uint32_t id = 0; id < 3; ++id) {
    pto::v1::Parameter* param = graph.add_params();
    param->set_name(names[id]);
    param->set_role(id < 2 ? pto::v1::PARAM_ROLE_IN : pto::v1::PARAM_ROLE_OUT);
    param->set_value_id(id);
  }
  pto::v1::Op* op = graph.add_ops();
  op->set_kind("add");
  op->add_inputs(0);
  op->add_inputs(1);
  op->add_outputs(2);
  for (int64_t t : tile) op->mutable_vec_tile()->add_dims(t);
  return graph;
}

TempDir::TempDir() {
  const char* base = getenv("TEST_TMPDIR");
  std::string pattern =
      absl::StrCat(base != nullptr ? base : "/tmp", "/ptod_test_XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) abort();
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

absl::StatusOr<pto::server::CompiledKernel> CountingBackend::Compile(
    const pto::v1::CompileRequest& request) {
  if (compiles_.fetch_add(1) == 0) started_.Notify();
  {
    absl::MutexLock lock(&mu_);
    auto released = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !held_;
    };
    mu_.Await(absl::Condition(&released));
  }
  absl::SleepFor(delay_);
  if (fail_next_.fetch_sub(1) > 0) {
    return absl::InternalError("injected compiler failure");
  }
  return inner_->Compile(request);
}

void CountingBackend::Hold() {
  absl::MutexLock lock(&mu_);
  held_ = true;
}

void CountingBackend::Release() {
  absl::MutexLock lock(&mu_);
  held_ = false;
}

absl::StatusOr<std::string> HealthCheck(const std::string& address,
                                        const std::string& service) {
  auto stub = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = stub->Check(&context, request, &response);
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        status.error_message());
  }
  return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(
      response.status());
}

absl::StatusOr<pto::v1::CompileResponse> CompileAt(const std::string& address,
                                                   const pto::v1::Graph& graph,
                                                   const std::string& target,
                                                   absl::Duration deadline) {
  auto stub = pto::v1::CompileService::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  pto::v1::CompileRequest request;
  *request.mutable_graph() = graph;
  request.set_target(target);
  pto::v1::CompileResponse response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  grpc::Status status = stub->Compile(&context, request, &response);
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        status.error_message());
  }
  return response;
}

absl::StatusOr<std::string> HttpGet(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket() failed");
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return absl::UnavailableError(absl::StrCat("connect to port ", port));
  }
  const std::string request = absl::StrCat(
      "GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  if (send(fd, request.data(), request.size(), 0) !=
      static_cast<ssize_t>(request.size())) {
    return absl::UnavailableError("send failed");
  }
  std::string response;
  char buffer[4096];
  while (true) {
    ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0) return absl::DeadlineExceededError("recv timed out or failed");
    if (n == 0) break;
    response.append(buffer, n);
  }
  return response;
}

}  // namespace pto::testing
