// cypool's XLA FFI handler: one typed handler (XLA FFI API, registered for the CPU platform
// under the target "cypool_xla") behind every send/recv/step that env.xla() returns.
//
// XLA calls it with the GIL released. It takes the GIL, hands the buffers to cypool's
// Python dispatcher as memoryviews (inputs read-only, outputs writable), which calls the
// env's own send/recv/step: the same engine entry points as the Python path, so the
// engine steps with the GIL released again (Engine.run / step_all are nogil). A Python
// exception becomes an FFI error whose message is the exception's type and text; jax
// raises it as JaxRuntimeError.
//
// Built on first use by cypool/xla/_build.py against the installed jaxlib's headers
// (jax.ffi.include_dir()) and Python's; never at install time, so cypool installs
// without jax.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

PyObject* g_dispatch = nullptr;  // cypool.xla._bridge.dispatch, set once under the GIL

// cypool.xla._native's nogil whole-batch step (see _native.pyx), from its capsule
using NativeStep = int (*)(void* obj, const void* act, int act_type, int64_t act_count,
                           int n_out, void** outs, const int* out_types,
                           const int64_t* out_counts);
NativeStep g_native = nullptr;

// cypool.xla._native's fast call (GIL held): kFastDone, kFastSlow, kFastEnd + status, or -1
// with a Python error set
using FastCall = int (*)(int64_t token, const void* act, int act_type, int64_t act_count,
                         int n_out, void** outs, const int* out_types,
                         const int64_t* out_counts);
FastCall g_fast = nullptr;
constexpr int kFastDone = 0;
constexpr int kFastEnd = 16;

// ops (cypool/xla/_bridge.py): send, recv, step through the env's Python methods; the
// native step; and the Python calls around it
constexpr int64_t kOpNative = 3;
constexpr int64_t kOpBegin = 4;
constexpr int64_t kOpEnd = 5;

// (memoryview, xla element type, dims) of one buffer; nullptr with a Python error set.
PyObject* describe(void* data, size_t bytes, int dtype, ffi::Span<const int64_t> dims,
                   bool writable) {
  PyObject* mv = PyMemoryView_FromMemory(static_cast<char*>(data),
                                         static_cast<Py_ssize_t>(bytes),
                                         writable ? PyBUF_WRITE : PyBUF_READ);
  if (mv == nullptr) return nullptr;
  PyObject* shape = PyTuple_New(static_cast<Py_ssize_t>(dims.size()));
  if (shape == nullptr) {
    Py_DECREF(mv);
    return nullptr;
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    PyObject* v = PyLong_FromLongLong(dims[d]);
    if (v == nullptr) {
      Py_DECREF(mv);
      Py_DECREF(shape);
      return nullptr;
    }
    PyTuple_SET_ITEM(shape, static_cast<Py_ssize_t>(d), v);
  }
  return Py_BuildValue("(NiN)", mv, dtype, shape);
}

// The current Python exception as "Type: message" (cleared).
std::string take_error() {
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  std::string msg = "cypool xla: Python error";
  if (type != nullptr) {
    PyObject* name = PyObject_GetAttrString(type, "__name__");
    PyObject* text = value != nullptr ? PyObject_Str(value) : nullptr;
    const char* n = name != nullptr ? PyUnicode_AsUTF8(name) : nullptr;
    const char* t = text != nullptr ? PyUnicode_AsUTF8(text) : nullptr;
    if (n != nullptr) msg = std::string(n) + ": " + (t != nullptr ? t : "");
    Py_XDECREF(name);
    Py_XDECREF(text);
  }
  PyErr_Clear();
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  return msg;
}

// Drops the memoryviews' access to XLA's buffers before the handler returns: any view the
// Python side kept would otherwise point at memory XLA reuses.
void release_views(PyObject* list) {
  Py_ssize_t n = PyList_GET_SIZE(list);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* mv = PyTuple_GET_ITEM(PyList_GET_ITEM(list, i), 0);
    PyObject* r = PyObject_CallMethod(mv, "release", nullptr);
    if (r == nullptr) PyErr_Clear();  // still exported: the dispatcher already refused that
    Py_XDECREF(r);
  }
}

// One buffer list for the dispatcher: (memoryview, type, dims) of args/rets 1.. (as Call).
template <typename T>
std::string views(const T& bufs, PyObject* list, bool writable);

// The native step (GIL held on entry and exit; released while the engine steps).
//
// Fast route, every step of the plain case: cypool.xla._native's fast call takes the env's
// lock, does VectorEnv.step's checks, steps every env without the GIL straight from XLA's
// action buffer into XLA's result buffers, and releases the lock: no Python frame, no
// memoryview, no allocation. It declines (FAST_SLOW, nothing done) whatever needs the
// Python path's error, and then the Python route runs: dispatch(BEGIN) takes the env's lock
// and checks it can step, the native entry validates the actions, steps every env and
// writes the results, dispatch(END, status) fills the info keys computed in Python (if
// any), raises the Python path's error for a failed status, and releases the lock. A failed
// env on the fast route comes back as FAST_END + status with the lock held: END reports it.
std::string NativeCall(ffi::RemainingArgs& args, ffi::RemainingRets& rets, int64_t token) {
  if (g_dispatch == nullptr || g_native == nullptr)
    return "cypool xla: the handler's dispatcher is not installed";
  if (args.size() != 2) return "cypool xla: the native step takes one action buffer";
  PyObject* none = Py_None;
  auto act = args.get<ffi::AnyBuffer>(1);
  size_t n_out = rets.size() - 1;
  // the buffers' addresses, types and counts: on the stack for the usual result counts
  constexpr size_t kStack = 48;
  void* outs_s[kStack];
  int types_s[kStack];
  int64_t counts_s[kStack];
  std::vector<void*> outs_h;
  std::vector<int> types_h;
  std::vector<int64_t> counts_h;
  void** outs = outs_s;
  int* types = types_s;
  int64_t* counts = counts_s;
  if (n_out > kStack) {
    outs_h.resize(n_out), types_h.resize(n_out), counts_h.resize(n_out);
    outs = outs_h.data(), types = types_h.data(), counts = counts_h.data();
  }
  int status = 4;  // NATIVE_BAD_CALL unless every buffer decodes
  bool ok = act.has_value();
  for (size_t i = 0; ok && i < n_out; ++i) {
    auto b = rets.get<ffi::AnyBuffer>(i + 1);
    if (!b.has_value()) {
      ok = false;
      break;
    }
    ffi::AnyBuffer buf = **b;
    outs[i] = buf.untyped_data();
    types[i] = static_cast<int>(buf.element_type());
    counts[i] = static_cast<int64_t>(buf.element_count());
  }
  bool locked = false;  // the fast route failed with the env's lock held: END releases it
  if (ok && g_fast != nullptr) {
    int fs = g_fast(token, act->untyped_data(), static_cast<int>(act->element_type()),
                    static_cast<int64_t>(act->element_count()), static_cast<int>(n_out), outs,
                    types, counts);
    if (fs == kFastDone) return std::string();
    if (fs < 0) return take_error();
    if (fs >= kFastEnd) {
      status = fs - kFastEnd;
      locked = true;
    }
  }
  int need_py = 0;
  if (!locked) {
    PyObject* r = PyObject_CallFunction(g_dispatch, "LLOO", static_cast<long long>(kOpBegin),
                                        static_cast<long long>(token), none, none);
    if (r == nullptr) return take_error();
    void* obj = nullptr;
    if (!PyArg_ParseTuple(r, "np", reinterpret_cast<Py_ssize_t*>(&obj), &need_py)) {
      Py_DECREF(r);
      return take_error();  // BEGIN's lock stays taken only if it returned this tuple
    }
    Py_DECREF(r);
    if (ok) {
      PyThreadState* ts = PyEval_SaveThread();  // the engine steps without the GIL
      status = g_native(obj, act->untyped_data(), static_cast<int>(act->element_type()),
                        static_cast<int64_t>(act->element_count()), static_cast<int>(n_out),
                        outs, types, counts);
      PyEval_RestoreThread(ts);
    }
  }
  std::string err;
  PyObject* ins = PyList_New(0);
  PyObject* py_outs = PyList_New(0);
  if (ins == nullptr || py_outs == nullptr) {
    err = take_error();
  } else {
    if (status != 0) err = views(args, ins, false);
    if (err.empty() && status == 0 && need_py) err = views(rets, py_outs, true);
  }
  // END runs even after an error above: it releases the env's lock
  PyObject* res = PyObject_CallFunction(
      g_dispatch, "LLOOi", static_cast<long long>(kOpEnd), static_cast<long long>(token),
      ins != nullptr ? ins : none, py_outs != nullptr ? py_outs : none, status);
  if (res == nullptr && err.empty()) err = take_error();
  if (res == nullptr) PyErr_Clear();
  Py_XDECREF(res);
  if (ins != nullptr) release_views(ins);
  if (py_outs != nullptr) release_views(py_outs);
  Py_XDECREF(ins);
  Py_XDECREF(py_outs);
  return err;
}

template <typename T>
std::string views(const T& bufs, PyObject* list, bool writable) {
  for (size_t i = 1; i < bufs.size(); ++i) {
    void* data;
    size_t bytes;
    int type;
    ffi::Span<const int64_t> dims;
    if constexpr (std::is_same_v<T, ffi::RemainingArgs>) {
      auto b = bufs.template get<ffi::AnyBuffer>(i);
      if (!b.has_value()) return "cypool xla: input " + std::to_string(i) + " is not a buffer";
      data = b->untyped_data(), bytes = b->size_bytes(), dims = b->dimensions();
      type = static_cast<int>(b->element_type());
    } else {
      auto r = bufs.template get<ffi::AnyBuffer>(i);
      if (!r.has_value()) return "cypool xla: result " + std::to_string(i) + " is not a buffer";
      ffi::AnyBuffer b = **r;
      data = b.untyped_data(), bytes = b.size_bytes(), dims = b.dimensions();
      type = static_cast<int>(b.element_type());
    }
    PyObject* d = describe(data, bytes, type, dims, writable);
    if (d == nullptr || PyList_Append(list, d) != 0) {
      Py_XDECREF(d);
      return take_error();
    }
    Py_DECREF(d);
  }
  return std::string();
}

ffi::Error Call(ffi::RemainingArgs args, ffi::RemainingRets rets, int64_t op, int64_t token) {
  // buffer 0 on both sides is the handle, aliased in place: never read or written here
  if (args.size() < 1 || rets.size() < 1)
    return ffi::Error::InvalidArgument("cypool xla: the handle buffer is missing");
  if (!Py_IsInitialized())
    return ffi::Error::Internal("cypool xla: the Python interpreter is not running");
  PyGILState_STATE gil = PyGILState_Ensure();
  std::string err;
  if (op == kOpNative) {
    err = NativeCall(args, rets, token);
    PyGILState_Release(gil);
    if (!err.empty()) return ffi::Error(ffi::ErrorCode::kInternal, err);
    return ffi::Error::Success();
  }
  PyObject* ins = PyList_New(0);
  PyObject* outs = PyList_New(0);
  if (ins == nullptr || outs == nullptr) {
    err = take_error();
  } else if (g_dispatch == nullptr) {
    err = "cypool xla: the handler's dispatcher is not installed";
  } else {
    for (size_t i = 1; err.empty() && i < args.size(); ++i) {
      auto b = args.get<ffi::AnyBuffer>(i);
      if (!b.has_value()) {
        err = "cypool xla: input " + std::to_string(i) + " is not a buffer";
        break;
      }
      PyObject* d = describe(b->untyped_data(), b->size_bytes(),
                             static_cast<int>(b->element_type()), b->dimensions(), false);
      if (d == nullptr || PyList_Append(ins, d) != 0) err = take_error();
      Py_XDECREF(d);
    }
    for (size_t i = 1; err.empty() && i < rets.size(); ++i) {
      auto r = rets.get<ffi::AnyBuffer>(i);
      if (!r.has_value()) {
        err = "cypool xla: result " + std::to_string(i) + " is not a buffer";
        break;
      }
      ffi::AnyBuffer b = **r;
      PyObject* d = describe(b.untyped_data(), b.size_bytes(),
                             static_cast<int>(b.element_type()), b.dimensions(), true);
      if (d == nullptr || PyList_Append(outs, d) != 0) err = take_error();
      Py_XDECREF(d);
    }
    if (err.empty()) {
      PyObject* res = PyObject_CallFunction(g_dispatch, "LLOO", static_cast<long long>(op),
                                            static_cast<long long>(token), ins, outs);
      if (res == nullptr) err = take_error();
      Py_XDECREF(res);
    }
  }
  if (ins != nullptr) release_views(ins);
  if (outs != nullptr) release_views(outs);
  Py_XDECREF(ins);
  Py_XDECREF(outs);
  PyGILState_Release(gil);
  if (!err.empty()) return ffi::Error(ffi::ErrorCode::kInternal, err);
  return ffi::Error::Success();
}

}  // namespace

// Installs the Python dispatcher and the native step's and fast call's capsules (called through ctypes.PyDLL,
// so with the GIL held). Returns 0, or -1 with a Python error set.
extern "C" __attribute__((visibility("default"))) int cypool_xla_set_dispatch(
    PyObject* fn, PyObject* native_capsule, PyObject* fast_capsule) {
  void* p = PyCapsule_GetPointer(native_capsule, "cypool.xla.native_step");
  if (p == nullptr) return -1;
  void* f = PyCapsule_GetPointer(fast_capsule, "cypool.xla.fast_call");
  if (f == nullptr) return -1;
  g_native = reinterpret_cast<NativeStep>(p);
  g_fast = reinterpret_cast<FastCall>(f);
  Py_XINCREF(fn);
  PyObject* old = g_dispatch;
  g_dispatch = fn;
  Py_XDECREF(old);
  return 0;
}

// built with -fvisibility=hidden: export the handler symbol explicitly
extern "C" __attribute__((visibility("default"))) XLA_FFI_Error* cypool_xla_handler(
    XLA_FFI_CallFrame* call_frame);

XLA_FFI_DEFINE_HANDLER_SYMBOL(cypool_xla_handler, Call,
                              ffi::Ffi::Bind()
                                  .RemainingArgs()
                                  .RemainingRets()
                                  .Attr<int64_t>("op")
                                  .Attr<int64_t>("token"));
