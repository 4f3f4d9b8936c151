#include "client/python/native/client_binding.h"

#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/cpp/compile_client.h"
#include "pto/v1/compile_service.pb.h"

namespace py = pybind11;

namespace pto::python {
namespace {

// The compile() call running on this thread: its `local` callable, the
// fallback's reason and result. The client calls local_compile and
// on_fallback synchronously on the caller's thread.
struct LocalCall {
  py::object local;
  std::optional<std::string> reason;
  py::object result;
  bool ran = false;
  bool raised = false;  // `local` raised: the error is set on this thread
};
thread_local LocalCall* current_call = nullptr;

py::object& RemoteErrorType() {
  static py::object* type = nullptr;  // leaked: lives as long as the module
  if (type == nullptr) type = new py::object();
  return *type;
}

[[noreturn]] void RaiseRemote(const absl::Status& status) {
  const std::string address =
      pto::client::ReplicaAddress(status).value_or("");
  std::string details(status.message());
  for (const char* rpc : {"Compile", "GetKernel", "Stats", "Admin"}) {
    const std::string prefix = absl::StrCat("ptod at ", address, ": ", rpc, ": ");
    if (!address.empty() && absl::StartsWith(details, prefix)) {
      details = details.substr(prefix.size());
      break;
    }
  }
  std::string code = absl::StatusCodeToString(status.code());
  for (char& c : code) c = c == ' ' ? '_' : static_cast<char>(std::toupper(c));
  PyErr_SetObject(RemoteErrorType().ptr(),
                  py::make_tuple(code, address, details).ptr());
  throw py::error_already_set();
}

class PyCompileClient {
 public:
  PyCompileClient(const std::string& address, const std::string& token,
                  bool tls, const py::bytes& tls_root_ca_pem,
                  const py::bytes& tls_cert_pem, const py::bytes& tls_key_pem,
                  double connect_timeout_s, bool fallback) {
    if (connect_timeout_s <= 0) {
      throw py::value_error("connect_timeout_s must be positive");
    }
    pto::client::ClientOptions options;
    options.token = token;
    options.tls = tls;
    options.tls_root_ca_pem = tls_root_ca_pem;
    options.tls_cert_pem = tls_cert_pem;
    options.tls_key_pem = tls_key_pem;
    options.connect_timeout = absl::Seconds(connect_timeout_s);
    if (fallback) {
      options.on_fallback = [](const absl::Status& why) {
        if (current_call != nullptr) current_call->reason = std::string(why.message());
      };
      options.local_compile = [](const pto::v1::CompileRequest&)
          -> absl::StatusOr<pto::v1::CompileResponse> {
        LocalCall* call = current_call;
        if (call == nullptr) {
          return absl::InternalError("local compile outside compile()");
        }
        py::gil_scoped_acquire gil;
        call->ran = true;
        try {
          call->result = call->local(call->reason ? py::cast(*call->reason)
                                                  : py::none());
        } catch (py::error_already_set& e) {
          e.restore();
          call->raised = true;
          return absl::InternalError("the local compile raised");
        }
        return pto::v1::CompileResponse();
      };
    }
    // (gRPC's start-up, its threads, takes milliseconds: other Python
    // threads run meanwhile, so that backend.prepare() can make a client in
    // the background.)
    py::gil_scoped_release release;
    client_ = std::make_unique<pto::client::CompileClient>(address, options);
  }

  void StartConnecting() {
    py::gil_scoped_release release;
    client_->StartConnecting();
  }

  py::object Compile(const py::bytes& graph_bytes, const std::string& target,
                     const std::map<std::string, std::string>& options,
                     double timeout_s, py::object local) {
    if (timeout_s <= 0) throw py::value_error("timeout_s must be positive");
    pto::v1::CompileRequest request;
    if (!request.mutable_graph()->ParseFromString(std::string(graph_bytes))) {
      throw py::value_error("graph bytes do not parse as a pto.v1.Graph");
    }
    request.set_target(target);
    request.mutable_options()->insert(options.begin(), options.end());
    LocalCall call;
    call.local = std::move(local);
    absl::StatusOr<pto::v1::CompileResponse> response;
    {
      py::gil_scoped_release release;
      current_call = &call;
      response = client_->Compile(request,
                                  absl::Now() + absl::Seconds(timeout_s));
      current_call = nullptr;
    }
    if (call.raised) throw py::error_already_set();
    if (call.ran) return call.result;
    if (!response.ok()) RaiseRemote(response.status());
    py::list stages;
    for (const auto& stage : response->stages()) {
      stages.append(py::make_tuple(stage.stage(), stage.seconds()));
    }
    return py::make_tuple(response->key(),
                          static_cast<int>(response->cache_status()),
                          py::bytes(response->binary().SerializeAsString()),
                          stages, response->compile_seconds());
  }

  std::vector<std::string> Replicas() { return client_->ReplicaAddresses(); }

 private:
  std::unique_ptr<pto::client::CompileClient> client_;
};

}  // namespace

void BindCompileClient(py::module_& m) {
  RemoteErrorType() = py::reinterpret_borrow<py::object>(
      PyErr_NewException("_native.RemoteError", PyExc_Exception, nullptr));
  m.attr("RemoteError") = RemoteErrorType();
  py::class_<PyCompileClient>(m, "CompileClient")
      .def(py::init<const std::string&, const std::string&, bool,
                    const py::bytes&, const py::bytes&, const py::bytes&,
                    double, bool>(),
           py::arg("address"), py::arg("token") = "", py::arg("tls") = false,
           py::arg("tls_root_ca_pem") = py::bytes(),
           py::arg("tls_cert_pem") = py::bytes(),
           py::arg("tls_key_pem") = py::bytes(),
           py::arg("connect_timeout_s") = 2.0, py::arg("fallback") = false,
           "ptod's C++ client over the replicas `address` names "
           "(client/cpp/replicas.h).")
      .def("compile", &PyCompileClient::Compile, py::arg("graph"),
           py::arg("target"), py::arg("options"), py::arg("timeout_s"),
           py::arg("local") = py::none(),
           "(key, cache_status, binary bytes, [(stage, s)], compile_seconds), "
           "or local(reason)'s result when falling back; RemoteError(code, "
           "address, details) otherwise.")
      .def("start_connecting", &PyCompileClient::StartConnecting,
           "Starts connecting to the replicas without waiting (errors show "
           "at the next compile()).")
      .def("replicas", &PyCompileClient::Replicas,
           "The replicas' addresses, as resolved.");
}

}  // namespace pto::python
