"""Shared by tests/xla: a jitted lax.scan of env.xla()'s step, and the Python path's loop."""
import contextlib

import jax
import numpy as np


def scan_steps(step, handle, actions, env_id=None):
    """Outputs of step over actions[t], stacked on a leading time axis, from one jitted scan."""
    def body(h, a):
        h, out = step(h, a) if env_id is None else step(h, a, env_id)
        return h, out
    h, outs = jax.jit(lambda h, A: jax.lax.scan(body, h, A))(handle, actions)
    return jax.device_get(jax.block_until_ready(outs))


def python_steps(env, actions, env_id=None):
    return [env.step(a) if env_id is None else env.step(a, env_id) for a in actions]


def assert_same(xla_outs, py_outs, cast=None):
    """xla results at each t equal the Python path's (np.array_equal, after casting the
    Python arrays to the xla dtype when jax runs without x64: `cast`)."""
    assert len(py_outs) == len(xla_outs[0])
    for t, (o, r, te, tr, info) in enumerate(py_outs):
        def eq(x, y, what):
            x = np.asarray(x)[t]
            y = np.asarray(y)
            if cast:
                y = y.astype(x.dtype)
            assert x.shape == y.shape, (what, t, x.shape, y.shape)
            assert np.array_equal(x, y), (what, t)
        eq(xla_outs[0], o, "obs")
        eq(xla_outs[1], r, "reward")
        eq(xla_outs[2], te, "terminated")
        eq(xla_outs[3], tr, "truncated")
        xinfo = xla_outs[4]
        for k, v in info.items():
            if isinstance(v, dict):
                for kk, vv in v.items():
                    eq(xinfo[k][kk], vv, f"info[{k}][{kk}]")
            else:
                eq(xinfo[k], v, f"info[{k}]")
        for k in xinfo:     # keys absent from this call: zeros, mask False (env_id: EnvPool's
            if k not in info and k not in ("env_id", "_env_id"):  # key, which xla always has)
                assert not np.asarray(xinfo[k])[t].any(), (k, t)


@contextlib.contextmanager
def x64(on=True):
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", on)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", old)
