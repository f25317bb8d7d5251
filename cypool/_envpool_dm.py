"""EnvPool 1.2.5's dm_env interface (``make_dm``) and its import-path stand-ins, for
:mod:`cypool.envpool`.

The dm_env env is a thin conversion of a ``cypool.envpool`` gymnasium env's results into
EnvPool's ``dm_env.TimeStep(step_type, reward, discount, observation)``, as read from the
installed EnvPool (``envpool/python/dm_envpool.py``) and checked against it in
tests/test_envpool_dm.py:

- ``observation`` is a namedtuple ``State(env_id, players, obs, <info keys>...)``:
  ``players`` a namedtuple ``players(env_id)``, ``obs`` the observation batch (a Dict
  observation's keys in its place, dm_control's ``position``, ``velocity``, ...), then the
  gymnasium env's info keys in its order, less ``elapsed_step``;
- ``step_type`` int32: FIRST (0) on a reset (also the auto-reset step), LAST (2) when the
  episode ends (terminated or truncated), MID (1) otherwise;
- ``reward`` float32 (0 on a reset); ``discount`` float32: 0 on a termination, and on a
  truncation 0 too (EnvPool's time limit), except for dm_control's ids (``Dmc`` classes),
  whose time limit keeps dm_control's discount 1; 1 otherwise.

The same conversion runs on jax arrays inside ``xla()``'s ``recv``/``step``.
"""
from __future__ import annotations

import collections
from abc import ABC

import numpy as np

FIRST, MID, LAST = 0, 1, 2


# ---------------------------------------------------------------- EnvPool's mixin classes
class EnvPoolMixin(ABC):
    """``envpool.python.envpool.EnvPoolMixin``: every ``cypool.envpool`` env is registered as
    one (TorchRL's ``MultiThreadedEnvWrapper`` checks it)."""


class GymnasiumEnvPoolMixin(ABC):
    """``envpool.python.gymnasium_envpool.GymnasiumEnvPoolMixin``."""


class DMEnvPoolMixin(ABC):
    """``envpool.python.dm_envpool.DMEnvPoolMixin``."""


players = collections.namedtuple("players", ["env_id"])


def _dm_env():
    try:
        import dm_env
    except ImportError as exc:
        raise ImportError(f"cypool.envpool.make_dm needs the dm_env package (pip install "
                          f"dm-env; dm-control depends on it): {exc}") from None
    return dm_env


def _int_spec(specs, name, dtype=np.int32, shape=()):
    info = np.iinfo(dtype)
    return specs.BoundedArray(shape, dtype, info.min, info.max, name=name)


def _space_spec(specs, space, name):
    """A dm_env spec of one env's gymnasium space (Box, Discrete)."""
    import gymnasium as gym
    if isinstance(space, gym.spaces.Discrete):
        return specs.DiscreteArray(int(space.n), dtype=np.int32, name=name)
    if isinstance(space, gym.spaces.Box):
        return specs.BoundedArray(space.shape, space.dtype, space.low, space.high, name=name)
    return specs.Array(getattr(space, "shape", ()) or (), getattr(space, "dtype", None),
                       name=name)


def _value_spec(specs, value, name):
    """A dm_env spec of one row of a batched info array."""
    a = np.asarray(value)
    shape, dtype = a.shape[1:], a.dtype
    if dtype.kind in "iu":
        return _int_spec(specs, name, dtype, shape)
    if dtype.kind == "f":
        fi = np.finfo(dtype)
        return specs.BoundedArray(shape, dtype, fi.min, fi.max, name=name)
    return specs.Array(shape, dtype, name=name)


class _Layout:
    """The State namedtuple of one env and the conversion of gymnasium results into
    TimeSteps (numpy or jax)."""

    SKIP = ("env_id", "players", "elapsed_step")

    def __init__(self, obs, info, truncation_discount):
        self.obs_keys = list(obs) if isinstance(obs, dict) else None
        self.info_keys = [k for k in info if k not in self.SKIP]
        fields = ["env_id", "players"] + (self.obs_keys or ["obs"]) + self.info_keys
        dup = [f for f in set(fields) if fields.count(f) > 1]
        if dup:
            raise ValueError(f"cypool.envpool.make_dm: an observation key repeats an info key "
                             f"{sorted(dup)}")
        self.State = collections.namedtuple("State", fields)
        self.truncation_discount = float(truncation_discount)

    def state(self, obs, info):
        obs_vals = [obs[k] for k in self.obs_keys] if self.obs_keys else [obs]
        return self.State(info["env_id"], players(info["players"]["env_id"]), *obs_vals,
                          *(info[k] for k in self.info_keys))

    def timestep(self, xp, out):
        """``dm_env.TimeStep`` of a gymnasium ``(obs, reward, terminated, truncated, info)``
        with array module ``xp`` (numpy, or jax.numpy inside jit)."""
        import dm_env
        obs, rew, term, trunc, info = out
        first = info["elapsed_step"] == 0
        last = term | trunc
        step_type = xp.where(first, FIRST, xp.where(last, LAST, MID)).astype(xp.int32)
        keep = ~term & (~trunc if self.truncation_discount == 0.0 else True)
        discount = keep.astype(xp.float32)
        return dm_env.TimeStep(step_type=step_type, reward=xp.asarray(rew, xp.float32),
                               discount=discount, observation=self.state(obs, info))


_CLASS = None


def dm_class():
    """The dm_env env class (dm_env imported on first use: an optional dependency)."""
    global _CLASS
    if _CLASS is None:
        _CLASS = _make_class(_dm_env())
    return _CLASS


def _make_class(dm_env):
    class EnvPoolDMEnv(dm_env.Environment):
        """EnvPool's ``<Family>DMEnvPool`` over a cypool.envpool gymnasium env
        (``self.gym_env``): the same engine, seeds and options."""

        def __init__(self, gym_env):
            self.gym_env = gym_env
            obs, info = gym_env.obs_zeros(1), gym_env.info_rows(np.zeros(1, np.int64))
            self._layout = _Layout(obs, info, gym_env.truncation_discount)
            self._info_zero = info
            self.spec = gym_env.spec

        # ---------------------------------------------------------- attributes
        @property
        def config(self) -> dict:
            return self.gym_env.config

        @property
        def all_env_ids(self) -> np.ndarray:
            return self.gym_env.all_env_ids

        @property
        def is_async(self) -> bool:
            return self.gym_env.is_async

        def __len__(self):
            return len(self.gym_env)

        def __repr__(self):
            return repr(self.gym_env).replace("GymnasiumEnvPool(", "DMEnvPool(", 1)

        def observation_spec(self):
            """EnvPool's: a State of dm_env specs of one env's values."""
            specs = dm_env.specs
            lay = self._layout
            space = self.gym_env.observation_space
            if lay.obs_keys:
                obs_specs = [_space_spec(specs, space[k], k) for k in lay.obs_keys]
            else:
                obs_specs = [_space_spec(specs, space, "obs")]
            return lay.State(_int_spec(specs, "env_id"), players(_int_spec(specs, "env_id")),
                             *obs_specs,
                             *(_value_spec(specs, self._info_zero[k], k)
                               for k in lay.info_keys))

        def action_spec(self):
            return _space_spec(dm_env.specs, self.gym_env.action_space, "action")

        # ---------------------------------------------------------- API
        def _ts(self, out):
            return self._layout.timestep(np, out)

        def reset(self, env_id=None):
            """A FIRST TimeStep of the envs ``env_id`` (default: every env)."""
            obs, info = self.gym_env.reset(env_id)
            b = len(info["env_id"])
            false = np.zeros(b, np.bool_)
            return self._ts((obs, np.zeros(b, np.float32), false, false, info))

        def step(self, action, env_id=None):
            return self._ts(self.gym_env.step(action, env_id))

        def send(self, action, env_id=None):
            self.gym_env.send(action, env_id)

        def recv(self, reset: bool = False, return_info: bool = True):
            return self._ts(self.gym_env.recv())

        def async_reset(self):
            self.gym_env.async_reset()

        def seed(self, seed=None):
            self.gym_env.seed(seed)

        def render(self, *args, **kwargs):
            return self.gym_env.render(*args, **kwargs)

        def close(self, **kwargs):
            self.gym_env.close()

        def xla(self):
            """EnvPool's ``handle, recv, send, step`` of a dm env: ``recv(handle)`` and
            ``step(handle, action, env_id=None)`` give ``(handle, TimeStep)``."""
            handle, recv, send, step = self.gym_env.xla()
            import jax.numpy as jnp
            lay = self._layout

            def dm_recv(h):
                h, out = recv(h)
                return h, lay.timestep(jnp, out)

            def dm_step(h, action, env_id=None):
                h, out = step(h, action, env_id)
                return h, lay.timestep(jnp, out)

            dm_recv.adapter = dm_step.adapter = step.adapter
            return handle, dm_recv, send, dm_step

    EnvPoolMixin.register(EnvPoolDMEnv)
    DMEnvPoolMixin.register(EnvPoolDMEnv)
    return EnvPoolDMEnv
