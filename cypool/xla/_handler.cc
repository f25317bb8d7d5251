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
#include <vector>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

PyObject* g_dispatch = nullptr;  // cypool.xla._bridge.dispatch, set once under the GIL

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

ffi::Error Call(ffi::RemainingArgs args, ffi::RemainingRets rets, int64_t op, int64_t token) {
  // buffer 0 on both sides is the handle, aliased in place: never read or written here
  if (args.size() < 1 || rets.size() < 1)
    return ffi::Error::InvalidArgument("cypool xla: the handle buffer is missing");
  if (!Py_IsInitialized())
    return ffi::Error::Internal("cypool xla: the Python interpreter is not running");
  PyGILState_STATE gil = PyGILState_Ensure();
  std::string err;
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

// Installs the Python dispatcher (called through ctypes.PyDLL, so with the GIL held).
extern "C" __attribute__((visibility("default"))) int cypool_xla_set_dispatch(PyObject* fn) {
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
