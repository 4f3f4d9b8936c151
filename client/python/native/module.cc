// pypto._native: the compiler and the runtime, in-process, for Python.
//
//   key = cache_key(graph_bytes, "host", {"opt_level": "2"})
//   target_maps("ascend-a2a3", "TIMG2COL")  # False: the target refuses it
//   key, binary_bytes, stages = compile(graph_bytes, "host", {}, timeout_s=120)
//   kernel = Kernel(binary_bytes)          # verify + load the native payload
//   kernel.run([a, b, out])                # numpy arrays, C-contiguous
//   kernel.run([x16, out], [3, 0])         # x16: int16 view of bf16 data
//   launcher = kernel.launcher([a, out], [], [1], guards)   # pypto's repeat calls
//   launcher.call((a, out))                # False: nothing ran (see ArgGuard)
//   outs = reference_eval(graph_bytes, [a, None])  # reference_binding.h
//   reg = op_registry()                    # the op registry: op_registry_binding.h
//   client = CompileClient("ptod:7070")    # ptod's client: client_binding.h
//   apply_dim_op(DIM_OP_MOD, -7, 2)        # dims' arithmetic: dim_binding.h
//
// Errors come back as Python exceptions carrying the absl::Status message:
// INVALID_ARGUMENT and friends -> ValueError, UNIMPLEMENTED ->
// NotImplementedError, anything else -> RuntimeError. The GIL is released
// while compiling and while a kernel runs.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "client/python/native/client_binding.h"
#include "client/python/native/dim_binding.h"
#include "client/python/native/op_registry_binding.h"
#include "client/python/native/reference_binding.h"
#include "compiler/compile.h"
#include "compiler/targets/target_maps.h"
#include "pto/v1/graph.pb.h"
#include "pto/v1/kernel.pb.h"
#include "runtime/executor.h"
#include "runtime/kernel.h"

namespace py = pybind11;

namespace {

// Converts a non-OK status into the matching Python exception.
[[noreturn]] void Raise(const absl::Status& status) {
  std::string message(status.message());
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
      throw py::value_error(message);
    case absl::StatusCode::kUnimplemented:
      PyErr_SetString(PyExc_NotImplementedError, message.c_str());
      throw py::error_already_set();
    default:
      throw std::runtime_error(
          absl::StrCat(absl::StatusCodeToString(status.code()), ": ", message));
  }
}

pto::v1::Graph ParseGraph(const py::bytes& graph_bytes) {
  pto::v1::Graph graph;
  if (!graph.ParseFromString(std::string(graph_bytes))) {
    throw py::value_error("graph bytes do not parse as a pto.v1.Graph");
  }
  return graph;
}

py::tuple Compile(const py::bytes& graph_bytes, const std::string& target,
                  const pto::compiler::CompileOptions& options,
                  double timeout_s) {
  pto::v1::Graph graph = ParseGraph(graph_bytes);
  pto::compiler::CompileSettings settings;
  if (timeout_s <= 0) throw py::value_error("timeout_s must be positive");
  settings.native_compile_timeout = absl::Seconds(timeout_s);
  absl::StatusOr<pto::compiler::CompileResult> result;
  {
    py::gil_scoped_release release;
    result = pto::compiler::Compile(graph, target, options, settings);
  }
  if (!result.ok()) Raise(result.status());
  py::list stages;
  for (const auto& stage : result->stages) {
    stages.append(py::make_tuple(stage.stage,
                                 absl::ToDoubleSeconds(stage.duration)));
  }
  return py::make_tuple(result->key,
                        py::bytes(result->binary.SerializeAsString()), stages);
}

std::string CacheKey(const py::bytes& graph_bytes, const std::string& target,
                      const pto::compiler::CompileOptions& options) {
  pto::v1::Graph graph = ParseGraph(graph_bytes);
  absl::StatusOr<std::string> key =
      pto::compiler::CacheKey(graph, target, options);
  if (!key.ok()) Raise(key.status());
  return *key;
}

std::string ResolveTarget(const std::string& target) {
  absl::StatusOr<std::string> resolved = pto::compiler::ResolveTarget(target);
  if (!resolved.ok()) Raise(resolved.status());
  return *resolved;
}

// Maps a numpy dtype to the wire dtype; only what kernels compile for.
pto::v1::DataType DtypeOf(const py::array& array, size_t index) {
  const py::dtype dt = array.dtype();
  if (dt.kind() == 'f' && dt.itemsize() == 4) return pto::v1::DT_FP32;
  if (dt.kind() == 'f' && dt.itemsize() == 2) return pto::v1::DT_FP16;
  if (dt.kind() == 'f' && dt.itemsize() == 8) return pto::v1::DT_DOUBLE;
  if (dt.kind() == 'b' && dt.itemsize() == 1) return pto::v1::DT_BOOL;
  if (dt.kind() == 'u' && dt.itemsize() == 1) return pto::v1::DT_UINT8;
  if (dt.kind() == 'i' && dt.itemsize() == 1) return pto::v1::DT_INT8;
  if (dt.kind() == 'i' && dt.itemsize() == 2) return pto::v1::DT_INT16;
  if (dt.kind() == 'i' && dt.itemsize() == 4) return pto::v1::DT_INT32;
  if (dt.kind() == 'i' && dt.itemsize() == 8) return pto::v1::DT_INT64;
  throw py::type_error(absl::StrCat(
      "argument ", index, ": numpy dtype '",
      std::string(py::str(static_cast<const py::handle&>(dt))),
      "' is not supported (float32, float16, float64, bool, int8, int16, "
      "int32, int64, uint8)"));
}

// What one positional argument of a jit call must be for Launcher.call() to
// run the kernel on it: what pypto's fast-path key holds for the argument
// (jit_function.py), as a guard tuple (kind, wrapper, axes, type, dtype or
// value, shape):
//   ("array", wrapper, axes, numpy.ndarray, dtype, shape)  equivalent dtype
//   ("tensor", wrapper, axes, type, dtype, shape)  the same dtype object
//   ("scalar", None, None, type, value, None)  == value; no kernel argument
// `wrapper` (pypto.from_torch's HostTensor, or None) is the exact type of an
// object whose `_pypto_data` is the array or tensor and whose
// `dynamic_axis` == axes. Types are exact (no subclasses).
struct ArgGuard {
  enum class Kind { kArray, kTensor, kScalar };
  Kind kind = Kind::kScalar;
  PyTypeObject* wrapper = nullptr;
  py::object axes;
  PyTypeObject* type = nullptr;
  py::object dtype_or_value;
  std::vector<py::ssize_t> shape;
  py::object keep;  // the guard tuple: keeps `wrapper` and `type` alive
};

ArgGuard ParseGuard(const py::handle& spec, size_t index) {
  const std::string where = absl::StrCat("launcher: guard ", index);
  if (!py::isinstance<py::tuple>(spec) || py::len(spec) != 6) {
    throw py::value_error(absl::StrCat(where, " is not a 6-tuple"));
  }
  const py::tuple t = py::reinterpret_borrow<py::tuple>(spec);
  ArgGuard g;
  const std::string kind = t[0].cast<std::string>();
  if (kind == "array") {
    g.kind = ArgGuard::Kind::kArray;
  } else if (kind == "tensor") {
    g.kind = ArgGuard::Kind::kTensor;
  } else if (kind != "scalar") {
    throw py::value_error(absl::StrCat(where, ": kind '", kind,
                                       "' is not array, tensor or scalar"));
  }
  if (!t[1].is_none()) {
    if (!PyType_Check(t[1].ptr())) {
      throw py::value_error(absl::StrCat(where, ": wrapper is not a type"));
    }
    g.wrapper = reinterpret_cast<PyTypeObject*>(t[1].ptr());
    g.axes = t[2];
  }
  if (!PyType_Check(t[3].ptr())) {
    throw py::value_error(absl::StrCat(where, ": type is not a type"));
  }
  g.type = reinterpret_cast<PyTypeObject*>(t[3].ptr());
  if (g.kind == ArgGuard::Kind::kArray &&
      g.type != py::detail::npy_api::get().PyArray_Type_) {
    throw py::value_error(absl::StrCat(where, ": an array's type must be numpy.ndarray"));
  }
  g.dtype_or_value = t[4];
  if (g.kind != ArgGuard::Kind::kScalar) {
    for (const py::handle d : py::reinterpret_borrow<py::sequence>(t[5])) {
      g.shape.push_back(d.cast<py::ssize_t>());
    }
  }
  g.keep = t;
  return g;
}

// Attribute and method names call() looks up per argument, interned once
// (never freed: they outlive the module's objects at exit).
struct Names {
  PyObject* dynamic_axis = PyUnicode_InternFromString("dynamic_axis");
  PyObject* pypto_data = PyUnicode_InternFromString("_pypto_data");
  PyObject* is_cpu = PyUnicode_InternFromString("is_cpu");
  PyObject* dtype = PyUnicode_InternFromString("dtype");
  PyObject* shape = PyUnicode_InternFromString("shape");
  PyObject* is_contiguous = PyUnicode_InternFromString("is_contiguous");
  PyObject* data_ptr = PyUnicode_InternFromString("data_ptr");
};

const Names& names() {
  static const Names* const kNames = new Names();
  return *kNames;
}

// A new reference to obj.name, or null (the error cleared).
py::object AttrOrNull(PyObject* obj, PyObject* name) {
  PyObject* value = PyObject_GetAttr(obj, name);
  if (value == nullptr) PyErr_Clear();
  return py::reinterpret_steal<py::object>(value);
}

// A new reference to obj.name(), or null (the error cleared).
py::object CallOrNull(PyObject* obj, PyObject* name) {
  PyObject* value = PyObject_CallMethodNoArgs(obj, name);
  if (value == nullptr) PyErr_Clear();
  return py::reinterpret_steal<py::object>(value);
}

// True when sequence `dims` (a torch.Size) holds exactly `shape`.
bool SameDims(PyObject* dims, const std::vector<py::ssize_t>& shape) {
  if (!PyTuple_Check(dims) ||
      PyTuple_GET_SIZE(dims) != static_cast<py::ssize_t>(shape.size())) {
    return false;
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    const py::ssize_t size = PyLong_AsSsize_t(PyTuple_GET_ITEM(dims, d));
    if (size != shape[d]) {
      PyErr_Clear();
      return false;
    }
  }
  return true;
}

// The address of the memory `obj` holds when it is what `g` asks for
// (numpy arrays: C-contiguous, aligned and writeable, as the fast-path key
// asks; torch tensors: on the CPU and contiguous), else 0.
uintptr_t GuardedAddress(const ArgGuard& g, PyObject* obj) {
  py::object data;
  if (g.wrapper != nullptr) {
    if (Py_TYPE(obj) != g.wrapper) return 0;
    py::object axes = AttrOrNull(obj, names().dynamic_axis);
    if (!axes || PyObject_RichCompareBool(axes.ptr(), g.axes.ptr(), Py_EQ) != 1) {
      PyErr_Clear();
      return 0;
    }
    data = AttrOrNull(obj, names().pypto_data);
    if (!data) return 0;
    obj = data.ptr();
  }
  if (Py_TYPE(obj) != g.type) return 0;
  if (g.kind == ArgGuard::Kind::kArray) {
    const auto& api = py::detail::npy_api::get();
    const auto* a = py::detail::array_proxy(obj);
    constexpr int kCArray = py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_ |
                            py::detail::npy_api::NPY_ARRAY_ALIGNED_ |
                            py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    if ((a->flags & kCArray) != kCArray ||
        a->nd != static_cast<int>(g.shape.size()) ||
        !std::equal(g.shape.begin(), g.shape.end(), a->dimensions)) {
      return 0;
    }
    if (a->descr != g.dtype_or_value.ptr() &&
        !api.PyArray_EquivTypes_(a->descr, g.dtype_or_value.ptr())) {
      return 0;
    }
    return reinterpret_cast<uintptr_t>(a->data);
  }
  // A torch tensor, through its Python attributes (no libtorch here).
  py::object is_cpu = AttrOrNull(obj, names().is_cpu);
  py::object dtype = AttrOrNull(obj, names().dtype);
  py::object shape = AttrOrNull(obj, names().shape);
  if (is_cpu.ptr() != Py_True || dtype.ptr() != g.dtype_or_value.ptr() || !shape ||
      !SameDims(shape.ptr(), g.shape) ||
      CallOrNull(obj, names().is_contiguous).ptr() != Py_True) {
    return 0;
  }
  py::object address = CallOrNull(obj, names().data_ptr);
  if (!address || !PyLong_Check(address.ptr())) return 0;
  const size_t result = PyLong_AsSize_t(address.ptr());
  if (result == static_cast<size_t>(-1)) {
    PyErr_Clear();
    return 0;
  }
  return result;
}

// Kernel runs made by launchers in this process: pypto counts them as memory
// hits (cache.py's compile_stats), so that its repeat calls take no lock.
std::atomic<int64_t> g_launcher_runs{0};

// A kernel's arguments fixed but for their addresses, for pypto's repeat-call
// fast path: made once per fast-path key from that call's arguments (their
// guards) and numpy views of them (the kernel's dtypes and shapes). call()
// takes a later call's positional arguments as they are, checks each against
// its guard and runs the kernel on their addresses: one native call for what
// pypto would otherwise build a key for, look up and convert per argument
// (numpy views of torch tensors, np.may_share_memory).
class PyLauncher {
 public:
  PyLauncher(std::shared_ptr<const pto::runtime::Kernel> kernel,
             std::vector<pto::runtime::TensorArg> args,
             std::vector<int64_t> nbytes, std::vector<int64_t> itemsize,
             std::vector<int> written, std::vector<ArgGuard> guards)
      : kernel_(std::move(kernel)),
        args_(std::move(args)),
        nbytes_(std::move(nbytes)),
        itemsize_(std::move(itemsize)),
        written_(std::move(written)),
        guards_(std::move(guards)) {}

  // False (nothing run) where an argument is not what its guard asks for,
  // an address is not aligned to its element, or an argument the kernel
  // writes overlaps another one's bytes: the caller's full path then says
  // why, copies or compiles.
  bool Call(const py::tuple& call_args) const {
    if (call_args.size() != guards_.size()) return false;
    std::vector<pto::runtime::TensorArg> args = args_;
    size_t k = 0;
    for (size_t i = 0; i < guards_.size(); ++i) {
      const ArgGuard& g = guards_[i];
      PyObject* obj = PyTuple_GET_ITEM(call_args.ptr(), i);
      if (g.kind == ArgGuard::Kind::kScalar) {
        if (Py_TYPE(obj) != g.type ||
            PyObject_RichCompareBool(obj, g.dtype_or_value.ptr(), Py_EQ) != 1) {
          PyErr_Clear();
          return false;
        }
        continue;
      }
      const uintptr_t address = GuardedAddress(g, obj);
      if (address == 0 || address % itemsize_[k] != 0) return false;
      args[k++].data = reinterpret_cast<void*>(address);
    }
    // np.may_share_memory's bounds test, for each written argument.
    for (int w : written_) {
      const uintptr_t lo = reinterpret_cast<uintptr_t>(args[w].data);
      for (size_t i = 0; i < args.size(); ++i) {
        if (static_cast<int>(i) == w) continue;
        const uintptr_t other = reinterpret_cast<uintptr_t>(args[i].data);
        if (lo < other + nbytes_[i] && other < lo + nbytes_[w]) return false;
      }
    }
    absl::Status status;
    {
      py::gil_scoped_release release;
      status = kernel_->Run(args);
    }
    if (!status.ok()) Raise(status);
    g_launcher_runs.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

 private:
  std::shared_ptr<const pto::runtime::Kernel> kernel_;
  std::vector<pto::runtime::TensorArg> args_;  // data filled per call
  std::vector<int64_t> nbytes_;    // >= 1: launchers are made for non-empty arrays
  std::vector<int64_t> itemsize_;  // >= 1
  std::vector<int> written_;
  std::vector<ArgGuard> guards_;  // one per positional argument
};

// A loaded kernel. Immutable; run() may be called from several threads.
class PyKernel {
 public:
  explicit PyKernel(const py::bytes& binary_bytes) {
    pto::v1::KernelBinary binary;
    if (!binary.ParseFromString(std::string(binary_bytes))) {
      throw py::value_error("kernel bytes do not parse as a pto.v1.KernelBinary");
    }
    absl::StatusOr<std::unique_ptr<pto::runtime::Kernel>> kernel;
    {
      py::gil_scoped_release release;
      kernel = pto::runtime::Kernel::Load(binary);
    }
    if (!kernel.ok()) Raise(kernel.status());
    kernel_ = std::move(*kernel);
  }

  // `dtypes`, when not empty, gives per argument a pto.v1 dtype that
  // overrides the array's (0 = the array's own): bfloat16 data has no numpy
  // dtype, so pypto passes it as a 2-byte integer view with DT_BF16 here;
  // FP8 data (DT_FP8E4M3, DT_FP8E5M2, DT_FP8E8M0) as uint8 bit patterns.
  void Run(const std::vector<py::array>& arrays,
           const std::vector<int>& dtypes) const {
    RunWith(arrays, dtypes, pto::runtime::RunOptions());
  }

  // As run(), and says where the call's time went (runtime LaunchProfile,
  // in seconds), for benchmarks.
  // With trace, also "threads": {worker name: (tasks, first start, last end,
  // busy)} in seconds from the executor's start of the run: how the tasks
  // were split, when each thread started and how long the last one ran on.
  // With shares, "shares": [(worker name, cpu at start, cpu at end, start,
  // end, roots, tasks)], one per root claimer (runtime ShareEvent): on which
  // CPU each thread took its share of the roots, and when (two clock reads
  // and two sched_getcpu per thread, not per task).
  py::dict RunProfiled(const std::vector<py::array>& arrays,
                       const std::vector<int>& dtypes, bool trace,
                       bool with_shares) const {
    pto::runtime::LaunchProfile profile;
    pto::runtime::RunOptions options;
    options.profile = &profile;
    std::vector<pto::runtime::TaskEvent> events;
    std::vector<pto::runtime::ShareEvent> shares;
    if (trace) options.trace = &events;
    if (with_shares) options.shares = &shares;
    RunWith(arrays, dtypes, options);
    py::dict out;
    out["check"] = profile.check_ns * 1e-9;
    out["expand"] = profile.expand_ns * 1e-9;
    out["plan"] = profile.plan_ns * 1e-9;
    out["workspace"] = profile.workspace_ns * 1e-9;
    out["setup"] = profile.setup_ns * 1e-9;
    out["caller"] = profile.caller_ns * 1e-9;
    out["wait"] = profile.wait_ns * 1e-9;
    out["total"] = profile.total_ns * 1e-9;
    out["tasks"] = profile.tasks;
    out["plan_cached"] = profile.plan_cached;
    if (trace) {
      struct Span {
        int64_t tasks = 0, first = INT64_MAX, last = 0, busy = 0;
      };
      std::map<int, Span> spans;
      for (const pto::runtime::TaskEvent& e : events) {
        Span& s = spans[e.worker];
        ++s.tasks;
        s.first = std::min(s.first, e.start_ns);
        s.last = std::max(s.last, e.end_ns);
        s.busy += e.end_ns - e.start_ns;
      }
      py::dict threads;
      const auto& executor = pto::runtime::Executor::Default();
      for (const auto& [worker, s] : spans) {
        threads[py::str(executor.WorkerName(worker))] = py::make_tuple(
            s.tasks, s.first * 1e-9, s.last * 1e-9, s.busy * 1e-9);
      }
      out["threads"] = threads;
      // The run's tasks as Chrome trace-event JSON, one event per task (the
      // swimlane of pypto's run folder: run_folder.py).
      out["chrome_trace"] = executor.ChromeTraceJson(events);
    }
    if (with_shares) {
      const auto& executor = pto::runtime::Executor::Default();
      py::list share_list;
      for (const pto::runtime::ShareEvent& e : shares) {
        share_list.append(py::make_tuple(
            executor.WorkerName(e.worker), e.cpu_start, e.cpu_end,
            e.start_ns * 1e-9, e.end_ns * 1e-9, e.roots, e.tasks));
      }
      out["shares"] = share_list;
    }
    return out;
  }

 private:
  void RunWith(const std::vector<py::array>& arrays,
               const std::vector<int>& dtypes,
               const pto::runtime::RunOptions& options) const {
    std::vector<pto::runtime::TensorArg> args = ArgsOf(arrays, dtypes);
    absl::Status status;
    {
      py::gil_scoped_release release;
      status = kernel_->Run(args, nullptr, options);
    }
    if (!status.ok()) Raise(status);
  }

  // The runtime's view of `arrays` (run()'s checks and dtype overrides).
  static std::vector<pto::runtime::TensorArg> ArgsOf(
      const std::vector<py::array>& arrays, const std::vector<int>& dtypes) {
    if (!dtypes.empty() && dtypes.size() != arrays.size()) {
      throw py::value_error(absl::StrCat("dtypes: expected ", arrays.size(),
                                         " entries, got ", dtypes.size()));
    }
    std::vector<pto::runtime::TensorArg> args;
    args.reserve(arrays.size());
    for (size_t i = 0; i < arrays.size(); ++i) {
      const py::array& a = arrays[i];
      if (!(a.flags() & py::array::c_style)) {
        throw py::value_error(
            absl::StrCat("argument ", i, " is not C-contiguous"));
      }
      pto::runtime::TensorArg arg;
      // The runtime writes only OUT/INOUT parameters; pypto checks that those
      // arrays are writable before calling run().
      arg.data = const_cast<void*>(a.data());
      if (!dtypes.empty() && dtypes[i] != 0) {
        const bool fp8 = dtypes[i] == pto::v1::DT_FP8E4M3 ||
                         dtypes[i] == pto::v1::DT_FP8E5M2 ||
                         dtypes[i] == pto::v1::DT_FP8E8M0;
        if (!(dtypes[i] == pto::v1::DT_BF16 && a.itemsize() == 2) &&
            !(fp8 && a.itemsize() == 1)) {
          throw py::value_error(absl::StrCat(
              "argument ", i, ": dtype override ", dtypes[i],
              " is supported only as DT_BF16 over a 2-byte array or an FP8 dtype "
              "over a 1-byte array"));
        }
        arg.dtype = static_cast<pto::v1::DataType>(dtypes[i]);
      } else {
        arg.dtype = DtypeOf(a, i);
      }
      for (py::ssize_t d = 0; d < a.ndim(); ++d) arg.shape.push_back(a.shape(d));
      args.push_back(std::move(arg));
    }
    return args;
  }

 public:
  // A launcher (PyLauncher) for calls whose positional arguments pass
  // `guards` (ArgGuard), one per argument; `arrays`: numpy views of one such
  // call's non-scalar arguments, in order (their dtypes and shapes are the
  // kernel's); `written`: the indices of the arrays the kernel writes.
  PyLauncher Launcher(const std::vector<py::array>& arrays,
                      const std::vector<int>& dtypes,
                      const std::vector<int>& written,
                      const py::sequence& guard_specs) const {
    std::vector<pto::runtime::TensorArg> args = ArgsOf(arrays, dtypes);
    std::vector<int64_t> nbytes, itemsize;
    for (const py::array& a : arrays) {
      if (a.nbytes() == 0) {
        throw py::value_error("launcher: arrays must not be empty");
      }
      nbytes.push_back(a.nbytes());
      itemsize.push_back(std::max<int64_t>(1, a.itemsize()));
    }
    std::vector<ArgGuard> guards;
    size_t tensors = 0;
    for (size_t i = 0; i < py::len(guard_specs); ++i) {
      guards.push_back(ParseGuard(guard_specs[i], i));
      const ArgGuard& g = guards.back();
      if (g.kind == ArgGuard::Kind::kScalar) continue;
      if (tensors >= arrays.size() ||
          static_cast<size_t>(arrays[tensors].ndim()) != g.shape.size() ||
          !std::equal(g.shape.begin(), g.shape.end(), arrays[tensors].shape())) {
        throw py::value_error(absl::StrCat(
            "launcher: guard ", i, " does not describe array ", tensors));
      }
      ++tensors;
    }
    if (tensors != arrays.size()) {
      throw py::value_error(absl::StrCat("launcher: ", tensors,
                                         " array and tensor guards for ",
                                         arrays.size(), " arrays"));
    }
    for (int w : written) {
      if (w < 0 || static_cast<size_t>(w) >= arrays.size()) {
        throw py::value_error(absl::StrCat("launcher: written index ", w,
                                           " out of range"));
      }
    }
    for (auto& arg : args) arg.data = nullptr;
    return PyLauncher(kernel_, std::move(args), std::move(nbytes),
                      std::move(itemsize), written, std::move(guards));
  }

  std::string key() const { return kernel_->binary().key(); }
  std::string target() const { return kernel_->binary().target(); }

  // [(name, role, dtype, [dims])] with role and dtype as pto.v1 enum values.
  py::list params() const {
    py::list out;
    for (const auto& p : kernel_->binary().params()) {
      py::list dims;
      for (const auto& d : p.shape().dims()) dims.append(d.size());
      out.append(py::make_tuple(p.name(), static_cast<int>(p.role()),
                                static_cast<int>(p.dtype()), dims));
    }
    return out;
  }

 private:
  std::shared_ptr<const pto::runtime::Kernel> kernel_;
};

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "PTO compiler and runtime, embedded (see client/python/native/module.cc)";
  pto::python::BindReferenceEval(m);
  pto::python::BindCompileClient(m);
  pto::python::BindOpRegistry(m);
  pto::python::BindDimOps(m);
  m.def("compile", &Compile, py::arg("graph"), py::arg("target") = "host",
        py::arg("options") = pto::compiler::CompileOptions{},
        py::arg("timeout_s") = 120.0,
        "Compiles serialized pto.v1.Graph bytes: (key, binary bytes, [(stage, s)]).");
  m.def("cache_key", &CacheKey, py::arg("graph"), py::arg("target") = "host",
        py::arg("options") = pto::compiler::CompileOptions{},
        "The compiler's cache key for a graph, without compiling.");
  m.def("resolve_target", &ResolveTarget, py::arg("target"),
        "The concrete target name, e.g. 'host' -> 'host-x86_64-v4-amx'.");
  m.def(
      "target_maps",
      [](const std::string& target, const std::string& instruction) {
        absl::StatusOr<bool> maps = pto::compiler::TargetMaps(target, instruction);  // target_maps.h
        if (!maps.ok()) Raise(maps.status());
        return *maps;
      },
      py::arg("target"), py::arg("instruction"),
      "Whether the target maps the PTO instruction (e.g. 'TIMG2COL') in some "
      "form: False for one its code generator refuses in every form.");
  m.def("compiler_fingerprint",
        [] { return pto::compiler::CompilerFingerprint(); });
  // Bench only (policy A/B in one process): Executor::SetPolicyForBench on
  // the process's executor, between calls.
  m.def(
      "set_executor_policy",
      [](uint32_t bits) {
        absl::StatusOr<uint32_t> previous =
            pto::runtime::Executor::Default().SetPolicyForBench(bits);
        if (!previous.ok()) Raise(previous.status());
        return *previous;
      },
      py::arg("bits"),
      "Bench only: sets the executor's scheduling policy bits (runtime "
      "Executor::Policy: 1 wake a worker off the caller's CPU; 4 the caller "
      "runs every vector root: one thread's baseline; 16 pinned workers; 32 "
      "home segments of the roots; 64 one thread runs every cube root, the "
      "caller where there are no vector roots; the default 33); returns the "
      "previous bits.");
  m.def(
      "executor_policy",
      [] { return pto::runtime::Executor::Default().policy(); },
      "The executor's scheduling policy bits (Executor::Policy).");
  m.def(
      "launcher_runs",
      [] { return g_launcher_runs.load(std::memory_order_relaxed); },
      "Kernel runs made by launchers (Launcher.call) in this process.");
  py::class_<PyLauncher>(m, "Launcher")
      .def("call", &PyLauncher::Call, py::arg("args"),
           "Runs on a jit call's positional arguments (a tuple) when each "
           "passes its guard; False when nothing ran (a guard failed, an "
           "address is misaligned or a written argument overlaps another).");
  py::class_<PyKernel>(m, "Kernel")
      .def(py::init<const py::bytes&>(), py::arg("binary"))
      .def("run", &PyKernel::Run, py::arg("arrays"),
           py::arg("dtypes") = std::vector<int>{},
           "Runs on C-contiguous arrays, one per parameter; dtypes[i] = "
           "DT_BF16 reads a 2-byte array as bfloat16, an FP8 dtype a 1-byte "
           "array as FP8 bit patterns.")
      .def("run_profiled", &PyKernel::RunProfiled, py::arg("arrays"),
           py::arg("dtypes") = std::vector<int>{}, py::arg("trace") = false,
           py::arg("shares") = false,
           "As run(); returns where the call's time went: {phase: seconds} "
           "(check, expand, plan, workspace, setup, caller, wait, total), "
           "tasks and plan_cached; trace=True adds per-thread task counts "
           "and spans (threads: {name: (tasks, first start, last end, busy)}) "
           "and chrome_trace (Chrome trace-event JSON, one event per task); "
           "shares=True each root claimer's thread, CPUs and share (shares: "
           "[(name, cpu at start, cpu at end, start, end, roots, tasks)]).")
      .def("launcher", &PyKernel::Launcher, py::arg("arrays"),
           py::arg("dtypes"), py::arg("written"), py::arg("guards"),
           "A launcher for jit calls whose arguments pass the guards, one per "
           "argument (fast path; see ArgGuard), given numpy views of one such "
           "call's arrays and tensors: launcher.call(args) -> False where "
           "nothing ran.")
      .def_property_readonly("key", &PyKernel::key)
      .def_property_readonly("target", &PyKernel::target)
      .def_property_readonly("params", &PyKernel::params);
}
