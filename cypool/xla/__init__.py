"""``env.xla()``: EnvPool's jittable ``handle, recv, send, step`` on cypool pools.

``handle, recv, send, step = env.xla()`` on a :class:`cypool.VectorEnv` (``make_vec``) or a
``cypool.envpool`` env, with EnvPool's contract:

- ``send(handle, action, env_id=None) -> handle``
- ``recv(handle) -> (handle, (obs, reward, terminated, truncated, info))``
- ``step(handle, action, env_id=None) -> (handle, (obs, ...))``, one call doing send + recv

They are jax functions: use them inside ``jax.jit``, ``lax.scan`` or ``lax.fori_loop``,
threading the handle from each call to the next. Each call is an XLA FFI custom call with a
side effect whose handle is aliased from input to output, so XLA can neither drop a call nor
reorder two calls on one handle. The calls run the env's own ``send``/``recv``/``step``
(the Python path's engine entry points, GIL released while the engine steps), so results
are bit-identical to the Python path's for the same seeds and actions.

``info`` holds every key the env can report, as arrays of ``batch_size`` rows: a key the
Python path leaves out on a given call (with its ``_key`` mask) is zeros here, its mask all
False. Observations, rewards and info values are declared in their numpy dtypes, which jax
turns into 32-bit ones unless ``jax_enable_x64`` is on (MuJoCo's float64 observations are
then rounded to float32; enable x64 for the exact values).

Reset the env in Python first (``env.reset(seed=...)``, or ``env.async_reset()`` and
``recv``), and call ``jax.block_until_ready`` on a jitted result before mixing Python calls
on the same env: jax dispatches asynchronously.

jax is needed only here: ``pip install "cypool[jax]"``.
"""
from __future__ import annotations

import weakref

import gymnasium as gym
import numpy as np

from cypool._core.spec import KindDtype

from cypool.xla._bridge import (OP_NATIVE, OP_RECV, OP_SEND, OP_STEP, XlaCallError, fill,
                                register, unregister)
from cypool.xla._build import INSTALL_HINT, import_jax

__all__ = ["make_xla", "XlaCallError", "INSTALL_HINT", "import_jax"]

_INFO_STEP, _INFO_RESET = 1, 2


# ---------------------------------------------------------------- pytrees of numpy arrays
def _flatten(tree, path=()):
    """[(path, leaf)] of nested tuples and dicts (dict keys sorted, as jax orders them)."""
    if isinstance(tree, dict):
        out = []
        for k in sorted(tree):
            out += _flatten(tree[k], path + (k,))
        return out
    if isinstance(tree, tuple):
        out = []
        for k, v in enumerate(tree):
            out += _flatten(v, path + (k,))
        return out
    return [(path, tree)]


def _unflatten(template, leaves):
    it = iter(leaves)

    def build(t):
        if isinstance(t, dict):
            return {k: build(t[k]) for k in sorted(t)}
        if isinstance(t, tuple):
            return tuple(build(v) for v in t)
        return next(it)
    return build(template)


def _spec(a):
    a = np.asarray(a)
    return a.shape, a.dtype


# ---------------------------------------------------------------- what one env reports
def _vector_template(pool, b):
    """(obs, reward, terminated, truncated, info) of a batch of ``b`` as zero arrays of the
    dtypes the Python path returns, info with every key it can hold. Reads no env state."""
    e = pool.engine
    obs = pool.obs(e.outputs, lambda a: np.zeros((b,) + a.shape[1:], a.dtype))
    info = {}
    mat = np.zeros((b,) + e.info.shape[1:], e.info.dtype)
    for kind in (_INFO_STEP, _INFO_RESET):
        d = pool.info_dict(np.full(b, kind, np.uint8), mat, np.arange(b, dtype=np.int64))
        for k, v in d.items():
            v = np.asarray(v)
            if k in info and info[k].dtype != v.dtype:  # typed by its first reporter
                v = v.astype(np.result_type(info[k].dtype, v.dtype))
            info[k] = np.zeros_like(v)
    w = getattr(e, "warnings", None)       # a key only some calls report (MuJoCo's)
    if w is not None:
        info["mujoco_warnings"] = np.zeros(b, np.asarray(w).dtype)
        info["_mujoco_warnings"] = np.zeros(b, np.bool_)
    info["env_id"] = np.zeros(b, np.int32)
    info["_env_id"] = np.zeros(b, np.bool_)
    return (obs, np.zeros(b, e.reward.dtype), np.zeros(b, np.bool_), np.zeros(b, np.bool_),
            info)


def _zeros_like_tree(tree):
    """Zeros of a nested dict/tuple of arrays, leaf by leaf."""
    if isinstance(tree, dict):
        return {k: _zeros_like_tree(v) for k, v in tree.items()}
    if isinstance(tree, tuple):
        return tuple(_zeros_like_tree(v) for v in tree)
    return np.zeros_like(np.asarray(tree))


def _envpool_template(env):
    """The same for a cypool.envpool env: its observation batch as its step() assembles it
    (a Dict or Tuple space's as a dict or tuple of arrays, to any depth, as EnvPool's xla()
    gives dm_control's; EnvPool's dtypes, e.g. toy text's int32), EnvPool's info (every key
    on every call, no masks)."""
    b = env.batch_size
    obs = env.obs_zeros(b)
    info = _zeros_like_tree(env.info_rows(np.arange(b, dtype=np.int64)))
    return (obs, np.zeros(b, env.reward_dtype), np.zeros(b, np.bool_), np.zeros(b, np.bool_),
            info)


class _Adapter:
    """One xla() call's view of its env: the result layout and the calls the handler runs,
    through the env's public surface (a VectorEnv's ``pool``, ``lock``,
    ``check_ready_to_step`` and ``steppable``; a cypool.envpool env's ``send``/``recv``/
    ``step``). Holds the env weakly: a handle outliving its env raises instead of stepping
    freed memory. It is also what the native fast route checks (``lock``, ``in_flight``,
    ``steppable``)."""

    def __init__(self, env, template, envpool, canon=None):
        self._ref = weakref.ref(env)
        self.name = getattr(env, "env_id", None) or getattr(env, "task_id", "env")
        self.envpool = envpool
        self.num_envs = env.num_envs
        self.is_async = env.is_async
        self.template = template
        flat = _flatten(template)
        self.paths = [p for p, _ in flat]
        self.pathset = set(self.paths)
        self.zeros = {p: v for p, v in flat}
        self.names = ["/".join(map(str, p)) for p in self.paths]
        self.last_error = None
        self.pool = None if envpool else env.pool
        self.in_flight = None if envpool else env.pool.in_flight
        self.native, roles = (None, None) if envpool else \
            _native_step(env, self.paths, canon)
        if self.native is not None:
            self.native_addr = self.native.address
            self.py_rows = [k for k, r in enumerate(roles) if r == 0]     # ROLE_PY
            self.native_begin = (self.native_addr, bool(self.py_rows))

    @property
    def lock(self):
        """The lock the env's step() holds."""
        return self.env().lock

    def steppable(self) -> bool:
        """Alive, open and reset: the env's step() checks would pass."""
        env = self._ref()
        return env is not None and env.steppable()

    # the native step (cypool.xla._native): the façade's part, around the nogil call
    def begin(self):
        """With the GIL, before the engine steps: VectorEnv.step's checks, under its lock
        (kept until end())."""
        env = self.env()
        lock = env.lock
        lock.acquire()
        try:
            env.check_ready_to_step()
            if self.in_flight.any():
                raise ValueError("cypool: step() while results of send() are waiting; call "
                                 "recv() first")
        except BaseException:
            lock.release()
            raise
        return self.native_begin

    def end(self, status, args, res):
        """After the native step: the info keys computed in Python, or the Python path's
        error for a failed status; releases the lock."""
        import cypool.xla._native as nat
        lock = self.env().lock
        pool = self.pool
        try:
            if status == nat.NATIVE_OK:
                if self.py_rows:
                    e = pool.engine
                    info = pool.info_dict(e.info_kind_arr, e.info, None)
                    extra = set(info) - {p[1] for p in self.paths if p[0] == 4}
                    if extra:
                        raise XlaCallError(f"cypool: the result holds info keys "
                                           f"{sorted(extra)}, which xla() did not declare")
                    vals = [info.get(self.paths[k][1], self.zeros[self.paths[k]])
                            for k in self.py_rows]
                    fill([res[k] for k in self.py_rows], vals,   # res: every result
                         [self.names[k] for k in self.py_rows])
                return
            if status == nat.NATIVE_BAD_ACTION and args:
                pool.family.load_actions(args[0], None)     # raises the Python path's error
                raise XlaCallError("cypool: the native step refused an action batch that "
                                   "load_actions accepts")
            if status == nat.NATIVE_FAILED:
                pool.check_failures()                       # raises EngineError
            if status == nat.NATIVE_NO_STREAM:
                raise RuntimeError("cypool: call reset() (or async_reset()) before stepping")
            raise XlaCallError(f"cypool: the native step failed with status {status} (its "
                               "buffers do not match what xla() declared)")
        finally:
            lock.release()

    def env(self):
        env = self._ref()
        if env is None:
            raise XlaCallError(f"cypool: the {self.name} env behind this xla() handle was "
                               "garbage-collected")
        return env

    def check_open(self):
        """At trace time: the env is alive and open (ClosedEnvError otherwise)."""
        self.env().check_open()

    def call(self, op, args, res):
        env = self.env()
        action = args[0] if args else None
        ids = args[1] if len(args) > 1 else None
        if op == OP_SEND:
            env.send(action, ids)
            return
        if op == OP_RECV:
            out = env.recv()
        elif op == OP_STEP:
            out = env.step(action, ids)
        else:
            raise XlaCallError(f"unknown op {op}")
        info = out[4]
        if not self.envpool and "env_id" not in info:   # sync step(): every env, in order
            info = dict(info, env_id=np.arange(self.num_envs, dtype=np.int32),
                        _env_id=np.ones(self.num_envs, np.bool_))
            out = (*out[:4], info)
        got = dict(_flatten(tuple(out)))
        extra = set(got) - self.pathset
        if extra:
            raise XlaCallError(f"cypool: the result holds {sorted(extra)}, which xla() did not "
                               "declare")
        fill(res, [got[p] if p in got else self.zeros[p] for p in self.paths], self.names)


def _native_step(env, paths, canon=None):
    """A cypool.xla._native.NativeStep for env, or None where only the Python route is
    exact: async mode, autoreset other than next_step, Tuple/Dict observations, actions the
    family's spec does not let the native step write (``FamilySpec.native``: Discrete
    actions are native without a ``load_actions`` hook, Box actions only where the spec
    says so), MultiDiscrete actions."""
    try:
        import cypool.xla._native as _native
    except ImportError:                 # not built (a source checkout without build_ext)
        return None, None
    pool = env.pool
    e = pool.engine
    spec = getattr(pool.family, "spec", None)       # a SpecFamily's FamilySpec
    if spec is None or env.is_async or not pool.next_step or pool.obs_structure is not None:
        return None, None
    native = spec.native
    may_load = native is not None and native.actions
    actions = getattr(e, "actions", None)
    if not isinstance(actions, np.ndarray) or not actions.flags.c_contiguous:
        return None, None
    space = env.single_action_space
    act_f32, n = None, 0
    if isinstance(space, gym.spaces.Discrete):
        if actions.shape != (env.num_envs,) or actions.dtype.kind not in "iu" or \
                int(space.start) != 0:
            return None, None
        if not may_load and (spec.load_actions is not None or
                             getattr(e, "set_actions", None) is not None):
            return None, None
        n = int(space.n)
    elif isinstance(space, gym.spaces.Box) and may_load:
        act_f32 = getattr(e, "act_f32", None)
        if actions.shape != (env.num_envs,) + space.shape or act_f32 is None:
            return None, None
        act_f32 = np.asarray(act_f32)
    else:
        return None, None
    # info keys in C: as laid out, the engine's warning counts (MuJoCo's extra_info), and
    # masks the spec says its extra_info narrows (Atari's game_length > 0)
    warnings = getattr(e, "warnings", None)
    layout = {k: (col, w, dt, on_step, on_reset)
              for k, col, w, dt, on_step, on_reset in pool.info_layout}
    refine = {mask: layout[key][0] for mask, key in (native.info_masks if native else ())
              if key in layout}
    canon = canon or (lambda d: d)
    roles = []
    for p in paths:
        key = p[1] if p[0] == 4 else None
        base = key[1:] if key is not None and key.startswith("_") else key
        if p[0] < 4:
            roles.append(p[0] + 1)          # ROLE_OBS .. ROLE_TRUNC
        elif key == "env_id":
            roles.append(_native.ROLE_ENV_ID)
        elif key == "_env_id":
            roles.append(_native.ROLE_ENV_ID_MASK)
        elif warnings is not None and base == "mujoco_warnings":
            roles.append(_native.ROLE_WARN if key == base else _native.ROLE_WARN_MASK)
        elif base in layout and _exact_in_c(layout[base][2], canon):
            col, w, _, on_step, on_reset = layout[base]
            roles.append((_native.ROLE_INFO if key == base else _native.ROLE_INFO_MASK,
                          col, w, on_step, on_reset, refine.get(key, -1)))
        else:
            roles.append(_native.ROLE_PY)
    sources = [e.outputs["obs"], e.reward, e.terminated, e.truncated]
    try:
        native = _native.NativeStep(e, actions, act_f32, n, sources, roles, e.info,
                                    e.info_kind_arr, warnings)
    except ValueError:
        return None, None
    return native, [r if isinstance(r, int) else r[0] for r in roles]


def _exact_in_c(dtype, canon):
    """Whether casting an info value (a float64 of the engine's rows) straight to the
    declared dtype gives what the Python path's cast to ``dtype`` then to the declared one
    gives: plain dtypes only (not "action" or first-reporter typed), and a float or bool
    dtype or one jax keeps."""
    if isinstance(dtype, str):      # "action": float32 or float64 as the actions were; the
        return dtype == "action"    # value was computed in that dtype, so exact either way
    if isinstance(dtype, KindDtype):
        return False
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        return False
    return dtype.kind in "fb" or np.dtype(canon(dtype)) == dtype


# ---------------------------------------------------------------- the jax functions
def _check_action(jnp, adapter, space, action, env_id):
    """Shape and dtype checks at trace time (before any env moves)."""
    action = jnp.asarray(action)
    n = adapter.num_envs
    if env_id is not None:
        env_id = jnp.asarray(env_id)
        if env_id.ndim != 1 or env_id.shape[0] < 1:
            raise ValueError(f"env_id must be a non-empty 1-D array, got shape {env_id.shape}")
        if not jnp.issubdtype(env_id.dtype, jnp.integer):
            raise TypeError(f"env_id must be integers, got {env_id.dtype}")
        n = env_id.shape[0]
        if not adapter.is_async and n != adapter.num_envs:
            raise ValueError(f"in sync mode env_id must name all {adapter.num_envs} envs (the "
                             f"results have a fixed batch of rows), got {n}")
        env_id = env_id.astype(jnp.int32)
    want = (n,) + tuple(space.shape)
    if tuple(action.shape) != want:
        raise ValueError(f"cypool {adapter.name}: action must have shape {want}, got "
                         f"{tuple(action.shape)}")
    if isinstance(space, (gym.spaces.Discrete, gym.spaces.MultiDiscrete,
                          gym.spaces.MultiBinary)):
        if not jnp.issubdtype(action.dtype, jnp.integer):
            raise TypeError(f"cypool {adapter.name}: actions must be integers, got "
                            f"{action.dtype}")
    elif action.dtype not in (jnp.float32, jnp.float64):
        raise TypeError(f"cypool {adapter.name}: actions must be float32 or float64, got "
                        f"{action.dtype}")
    return action, env_id


def make_xla(env, *, envpool: bool = False):
    """``(handle, recv, send, step)`` for ``env`` (see the module's docstring)."""
    from cypool.xla._build import load
    env.check_open()
    jax, target = load()
    jnp = jax.numpy
    if not envpool:
        st = env.pool.obs_structure             # a text leaf (MiniGrid's mission): a str
        if st is not None and any(callable(n) for n in
                                  (st[1].values() if st[0] == "dict" else st[1])):
            raise ValueError("cypool: xla() cannot serve an observation with a text leaf "
                             "(MiniGrid's mission, one str per env), which XLA cannot hold")
        mode = str(getattr(env.autoreset_mode, "value", env.autoreset_mode)).lower()
        if "same" in mode:
            raise ValueError("cypool: xla() supports autoreset_mode 'next_step' and "
                             "'disabled'; same_step's final_obs is an object array, which XLA "
                             "cannot hold")
        if getattr(env.pool, "unit", 1) != 1:      # a population's whole-member queue items
            raise ValueError("cypool: xla() on a population's pool is not supported")
        template = _vector_template(env.pool, env.batch_size)
    else:
        template = _envpool_template(env)
    adapter = _Adapter(env, template, envpool, jax.dtypes.canonicalize_dtype)
    token = register(adapter)
    weakref.finalize(env, unregister, token)
    if adapter.native is not None and not adapter.py_rows:
        # every result in C: the handler's fast route steps it without a Python frame
        import cypool.xla._native as _native
        try:
            _native.bind(token, adapter.native, adapter)
        except ValueError:          # no bool in-flight array: the Python route
            pass
    space = env.single_action_space

    handle = np.frombuffer(token.to_bytes(8, "little"), np.uint8).copy()
    hspec = jax.ShapeDtypeStruct((8,), jnp.uint8)
    leaves = [jax.ShapeDtypeStruct(v.shape, jax.dtypes.canonicalize_dtype(v.dtype))
              for _, v in _flatten(template)]
    attrs = dict(token=token)
    call_send = jax.ffi.ffi_call(target, (hspec,), has_side_effect=True,
                                 input_output_aliases={0: 0})
    call_out = jax.ffi.ffi_call(target, (hspec, *leaves), has_side_effect=True,
                                input_output_aliases={0: 0})

    def check_handle(h):
        h = jnp.asarray(h)
        if h.shape != (8,) or h.dtype != jnp.uint8:
            raise TypeError(f"cypool: handle must be the uint8[8] array xla() returned, got "
                            f"{h.dtype}{list(h.shape)}")
        return h

    def out(res):
        return res[0], _unflatten(template, res[1:])

    def send(handle, action, env_id=None):
        adapter.check_open()
        action, env_id = _check_action(jnp, adapter, space, action, env_id)
        args = (check_handle(handle), action) + (() if env_id is None else (env_id,))
        return call_send(*args, op=OP_SEND, **attrs)[0]

    def recv(handle):
        adapter.check_open()
        return out(call_out(check_handle(handle), op=OP_RECV, **attrs))

    def step(handle, action, env_id=None):
        adapter.check_open()
        action, env_id = _check_action(jnp, adapter, space, action, env_id)
        args = (check_handle(handle), action) + (() if env_id is None else (env_id,))
        op = OP_NATIVE if env_id is None and adapter.native is not None else OP_STEP
        return out(call_out(*args, op=op, **attrs))

    send.adapter = recv.adapter = step.adapter = adapter
    return handle, recv, send, step
