// pypto._native.CompileClient: ptod's C++ client (client/cpp/compile_client.h)
// for Python, so that routing over replicas, retries, back-off, TLS, tokens
// and the fallback decision are written once.
//
//   client = CompileClient("a:7070,b:7070", token="...", tls=True,
//                          tls_root_ca_pem=b"...", connect_timeout_s=2.0,
//                          fallback=True)
//   key, cache_status, binary_bytes, stages, compile_seconds = client.compile(
//       graph_bytes, target, options, timeout_s, local)
//
// `local(reason)` is called, with the GIL, when the client falls back: ptod
// proved unreachable (`reason` the last error's message), or it did within
// the fallback period and no replica has reconnected (`reason` None). Its
// return value is then compile()'s. With fallback=False `local` is never
// called. The GIL is released while the client talks to ptod.
//
// Errors raise RemoteError(code, address, details): the status code's name
// ("UNAVAILABLE"), the replica's address ("" when none was reached, e.g. an
// address that does not parse), and the message without the client's
// "ptod at ADDRESS: Compile: " prefix.
#ifndef PTO_CLIENT_PYTHON_NATIVE_CLIENT_BINDING_H_
#define PTO_CLIENT_PYTHON_NATIVE_CLIENT_BINDING_H_

#include <pybind11/pybind11.h>

namespace pto::python {

// Adds CompileClient and RemoteError to module `m`.
void BindCompileClient(pybind11::module_& m);

}  // namespace pto::python

#endif  // PTO_CLIENT_PYTHON_NATIVE_CLIENT_BINDING_H_
