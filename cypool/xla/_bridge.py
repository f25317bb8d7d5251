"""The Python side of cypool's FFI handler: which env a call is for, and how its buffers
become the arguments and results of the env's own ``send``/``recv``/``step``.

Runs inside XLA's execution, with the GIL the handler took; jax is not imported here (the
handler may run while jax is busy) and nothing here keeps a view of XLA's buffers past the
call (the handler releases the memoryviews when ``dispatch`` returns).
"""
from __future__ import annotations

import itertools
import threading

import numpy as np

OP_SEND, OP_RECV, OP_STEP = 0, 1, 2
# the native step (cypool.xla._native, nogil): the handler calls BEGIN, steps, then END
OP_NATIVE, OP_BEGIN, OP_END = 3, 4, 5
OP_NAMES = {OP_SEND: "send", OP_RECV: "recv", OP_STEP: "step", OP_BEGIN: "step",
            OP_END: "step"}

# XLA_FFI_DataType values (xla/ffi/api/c_api.h) of the dtypes a call can carry
XLA_DTYPES = {1: np.bool_, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 6: np.uint8,
              7: np.uint16, 8: np.uint32, 9: np.uint64, 10: np.float16, 11: np.float32,
              12: np.float64}


class XlaCallError(RuntimeError):
    """An env's send/recv/step failed inside a jax computation; jax raises it as a
    JaxRuntimeError whose message holds this one's (the original exception is the
    adapter's ``last_error``)."""


_adapters: dict[int, object] = {}
_tokens = itertools.count(1)
_reg_lock = threading.Lock()


def register(adapter) -> int:
    with _reg_lock:
        token = next(_tokens)
        _adapters[token] = adapter
    return token


def unregister(token: int) -> None:
    with _reg_lock:
        _adapters.pop(token, None)
    try:
        import cypool.xla._native as _native
    except ImportError:             # not built: nothing was bound
        return
    _native.unbind(token)


def _array(view):
    mv, dt, shape = view
    try:
        dtype = XLA_DTYPES[dt]
    except KeyError:
        raise TypeError(f"unsupported XLA element type {dt}") from None
    return np.frombuffer(mv, dtype).reshape(shape)


def dispatch(op: int, token: int, ins, outs, status: int = 0):
    """Called by the FFI handler: run op on the env registered under token. ``ins`` and
    ``outs`` hold (memoryview, XLA element type, shape) of every buffer but the handle
    (BEGIN: None; END: only those it needs). BEGIN returns (native step's address, whether
    END fills results in Python)."""
    adapter = _adapters.get(token)
    if adapter is None:
        raise XlaCallError("cypool: the env behind this xla() handle was closed or garbage-"
                           "collected; call env.xla() on a live env and jit again")
    args = [_array(v) for v in ins] if ins else []
    res = [_array(v) for v in outs] if outs else []
    try:
        if op == OP_BEGIN:
            return adapter.begin()
        if op == OP_END:
            return adapter.end(status, args, res)
        return adapter.call(op, args, res)
    except XlaCallError:
        raise
    except BaseException as exc:
        adapter.last_error = exc
        raise XlaCallError(f"cypool: {adapter.name}.{OP_NAMES.get(op, op)}() inside jax "
                           f"failed: {type(exc).__name__}: {exc}") from None
    finally:
        del args, res          # the memoryviews must have no exports left when released


def fill(outs: list, leaves: list, names: list) -> None:
    """Copy each result leaf into its XLA buffer (cast to the declared dtype: float64 results
    go to float32 buffers when jax runs without x64)."""
    if len(leaves) != len(outs):
        raise XlaCallError(f"cypool: the call returned {len(leaves)} arrays where xla() "
                           f"declared {len(outs)}")
    for out, val, name in zip(outs, leaves, names):
        val = np.asarray(val)
        if val.shape != out.shape:
            raise XlaCallError(f"cypool: result {name} has shape {val.shape} where xla() "
                               f"declared {out.shape}")
        np.copyto(out, val, casting="unsafe")
