"""EnvPool 1.2.5's Python API over cypool's engines: an EnvPool script switches by changing
``import envpool`` to ``import cypool.envpool as envpool``.

What it keeps of EnvPool (read from envpool's ``python/`` sources and checked against the
installed envpool in tests/test_envpool_api.py): ``make``, ``make_gymnasium``, ``make_gym``
(the same class), ``make_spec``, ``list_all_envs``; the env is a ``gymnasium.Env`` and a
``gymnasium.vector.VectorEnv``, with **one env's** ``observation_space``/``action_space``
(MuJoCo actions float64), ``len(env)``, ``config``, ``all_env_ids``, ``is_async``;
``reset(env_id=None)`` and ``step(action, env_id=None)`` return the rows of ``env_id``
(positionally too), ``send``/``recv``/``async_reset``; EnvPool's option names and defaults
(``num_envs``, ``batch_size`` 0 = all, ``num_threads`` 0 = auto, ``seed=42`` with env i seeded
``seed + i``, or a per-env list); its results: float32 rewards, truncation winning over
termination, next-step auto-reset (reward 0 and ``elapsed_step`` 0 on the reset step),
plain info dicts with ``env_id``, ``players``, ``elapsed_step`` and, for Atari, ``lives``,
the unclipped ``reward``, ``terminated`` (the real game over) and ``ram``. CleanRL-style
scripts may assign ``num_envs``, ``single_*_space`` and ``is_vector_env`` on the env.

It serves the ids of every family spec that names its EnvPool ids (``FamilySpec.envpool``,
a :class:`cypool.api.EnvPoolNames`, read through :mod:`cypool.registry`; this module imports
no family): EnvPool's Atari ``<Game>-v5`` and MuJoCo ``<Task>-v5`` and ``<Task>-v4`` ids
(``register_task``'s ids too; v4: gymnasium's v4 classes, EnvPool's v4 option names and info
keys; ``Ant-v3``, ``HalfCheetah-v3``, ``Hopper-v3``, ``Walker2d-v3``, ``Swimmer-v3`` and the
``-v2`` pendulums, Reacher and HumanoidStandup are served by the v4 task their options
describe; ``Humanoid-v3``, ``Pusher-v2`` and ``Pusher-v4`` are refused with the id to use),
dm_control's ``<Domain><Task>-v1`` for the suite tasks cypool serves (dm_control's numbers,
EnvPool's options, float32 rewards and info keys; EnvPool's other dm_control ids are refused
naming the task), classic control (``CartPole-v0``/``-v1``, ``Pendulum-v1``,
``MountainCar-v0``, ``MountainCarContinuous-v0``, ``Acrobot-v1``) and toy text
(``FrozenLake-v1``, ``FrozenLake8x8-v1``, ``Taxi-v3`` = cypool's Taxi-v4 with its default dry
options, ``CliffWalking-v0``/``-v1``, ``CliffWalkingSlippery-v1``, ``Blackjack-v1``, and
EnvPool's ``phys2d/``/``tabular/`` aliases of them), Box2D (``LunarLander``,
``BipedalWalker``, ``CarRacing-v2``/``-v3`` with its ``lap_complete_percent``), MiniGrid/BabyAI
and Gymnasium-Robotics (names this module keeps itself, since those families' specs name none:
:mod:`cypool._envpool_minigrid`, :mod:`cypool._envpool_robotics`), with EnvPool's
options and defaults (tests/test_envpool_config_fields.py: every served id's config fields are
EnvPool 1.2.5's, the differences listed with their reasons),
spaces and dtypes (toy text: int32 observations, Blackjack's a ``Box(0, 31, (3,), int32)``),
info keys (Acrobot's ``state``, CliffWalking's float32 ``prob``) and float32 rewards. This
module reads those names generically; it has no table per family for them.

What differs, and why: the numbers are cypool's (gymnasium's for MuJoCo, bit for bit; the
Atari random streams behind no-ops and sticky actions are ale-py's, so frames are not
EnvPool's); MuJoCo info keys are gymnasium's v5 keys (EnvPool's v5 sets are a subset or
renamed, e.g. Humanoid's ``reward_linvel``); MuJoCo options take gymnasium's v5 task, so
EnvPool's version switches (``post_constraint``, ``legacy_healthy_reward``, ...) accept only
their v5 values; the classic-control and toy-text dynamics are gymnasium's, exact with
``gymnasium.make_vec(id, n, vectorization_mode="sync")`` seeded alike, not EnvPool's own
C++ ports (their ``std::mt19937`` draws, Blackjack's card order and "any ace" ``obs[2]``,
FrozenLake's slip rule); EnvPool options that select another variant (Pendulum's
``version=0``, FrozenLake sizes other than 4 and 8) are refused, and EnvPool's
``Pendulum-v0``, ``Catch-v0`` and ``NChain-v0`` are not served; ``from_pixels=True`` (with
``render_width``, ``render_height``, ``render_camera_id``) gives EnvPool's channels-first
``(3, H, W)`` uint8 observations, the frames of gymnasium's renderer (Gymnasium-Robotics'
ids: ``make_vec``'s ``from_pixels=True, channels_first=True``, the frames drawn by the
family's render hook on the calling thread after each reset or step, as the reference's
``render()`` draws them; ``xla()`` is refused there); ``render()`` is not offered; ``xla()`` is cypool's (:mod:`cypool.xla`, through ``jax.ffi``). Invalid options
raise ``TypeError``/``ValueError`` (EnvPool asserts, which ``python -O`` skips).

``make_dm`` (and ``make(..., env_type="dm")``) gives EnvPool's dm_env interface for every
served id, ``xla()`` included: a conversion of the same gymnasium env's results into EnvPool's
``TimeStep``s (:mod:`cypool._envpool_dm`). ``register_as_envpool()`` makes ``import envpool``
give this module, for libraries that import EnvPool themselves (TorchRL's
``MultiThreadedEnv``); docs/migration.md says what TorchRL also needs (``gym``).
"""
from __future__ import annotations

import collections
import difflib
import dataclasses
import functools
import warnings

import numpy as np
import gymnasium as gym
from gymnasium.vector import AutoresetMode

from cypool import _envpool_dm as _dm
from cypool._validate import check_int, check_pool_size
from cypool.errors import ClosedEnvError
from cypool.make import make_vec
from cypool.registry import family_for, spec_of, specs

__all__ = ["make", "make_gym", "make_gymnasium", "make_spec", "make_dm", "list_all_envs",
           "EnvSpec", "register_as_envpool"]
# The EnvPool release whose API this module mirrors (its contract; tests check it against
# that release).
ENVPOOL_API_VERSION = "1.2.5"

# Options every EnvPool env has (envpool/python/env_spec.py's defaults), in its order.
COMMON = dict(num_envs=1, batch_size=0, num_threads=0, max_num_players=1,
              thread_affinity_offset=-1, seed=42, env_seed=[], gym_reset_return_info=True)
# EnvPool's make-only pixel options (from_pixels): frames of render_height x render_width from
# render_camera_id, channels-first; they join the config when from_pixels is set
PIXELS = dict(render_width=84, render_height=84, render_camera_id=-1)


_BASE_PATH = __import__("os").path.dirname(__file__)   # EnvPool: its assets directory (cypool/)


_LISTED = "cypool.envpool.list_all_envs() lists the ids it serves"


class _Named:
    """A FamilySpec seen with EnvPool names that its family does not give (MiniGrid's and
    Gymnasium-Robotics', from cypool._envpool_minigrid/_envpool_robotics): ``envpool`` those
    names, ``envpool_space(pool space) -> EnvPool's space`` (None: the pool's), and
    ``envpool_own_limit`` (EnvPool's ``max_episode_steps`` is the env's own step limit, 0 its
    default, not a time limit of the pool's); the rest is the spec's."""

    def __init__(self, spec, names, space, own_limit):
        self._spec = spec
        self.envpool = names
        self.envpool_space = space
        self.envpool_own_limit = own_limit

    def __getattr__(self, name):
        return getattr(self._spec, name)


def _extra_modules():
    from cypool import _envpool_minigrid, _envpool_robotics
    return ((_envpool_minigrid, True), (_envpool_robotics, False))


@functools.lru_cache(maxsize=None)
def _extras() -> dict:
    """``{EnvPool id: _Named}`` of the MiniGrid and Gymnasium-Robotics ids whose env cypool
    runs (built once: their families register at import)."""
    out = {}
    for mod, own_limit in _extra_modules():
        for eid, (cid, names, space) in mod.served().items():
            spec = spec_of(cid)
            if spec is None:
                continue
            if spec.envpool_info:               # the family's own info values
                names = dataclasses.replace(names, info={**names.info, **spec.envpool_info})
            out[eid] = _Named(spec, names, space, own_limit)
    return out


def _served() -> dict:
    """``{EnvPool id: FamilySpec}`` of every spec that names its EnvPool ids, in list_envs
    order, then the MiniGrid and Gymnasium-Robotics ids whose env cypool runs."""
    out = {}
    for _, spec in specs():
        if spec.envpool is not None:
            for eid in (*spec.envpool.ids, *spec.envpool.aliases):
                out.setdefault(eid, spec)
    for eid, named in _extras().items():
        out.setdefault(eid, named)
    return out


def _refused() -> dict:
    """``{EnvPool id: why cypool does not serve it}`` of every spec's EnvPool names."""
    out = {}
    for _, spec in specs():
        if spec.envpool is not None:
            out.update(spec.envpool.refused)
    for mod, _ in _extra_modules():
        out.update(mod.refused())
    return out


def list_all_envs() -> list[str]:
    """Every id ``make`` serves: the EnvPool ids of the family specs that name theirs
    (MuJoCo's and Atari's are cypool's ids; classic control's and toy text's EnvPool's own)."""
    return list(_served())


class EnvSpec:
    """EnvPool's EnvSpec: ``config`` (a namedtuple of every option), one env's
    ``observation_space`` and ``action_space``, and ``reward_threshold``."""

    def __init__(self, task_id, config, observation_space, action_space):
        self.task_id = task_id
        Config = collections.namedtuple("Config", list(config))
        self.config = Config(**config)
        self.observation_space = observation_space
        self.action_space = action_space
        self.reward_threshold = config.get("reward_threshold")

    def gen_config(self, **kwargs):
        return self.config._replace(**kwargs)

    def __repr__(self):
        return f"EnvSpec({self.task_id}, {dict(self.config._asdict())})"


def _family(task_id):
    """The FamilySpec whose EnvPool names hold ``task_id``; a ValueError saying what to use
    for an id cypool.envpool does not serve."""
    if not isinstance(task_id, str):
        raise TypeError(f"task_id must be a str, got {type(task_id).__name__}")
    served = _served()
    spec = served.get(task_id)
    if spec is not None:
        return spec
    why = _refused().get(task_id)
    if why is not None:
        raise ValueError(f"{why} ({_LISTED})")
    try:
        family_for(task_id)
    except ValueError:
        close = difflib.get_close_matches(task_id, list(served), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"{task_id!r} is not an id cypool.envpool serves{hint} ({_LISTED})") \
            from None
    # a cypool id that is not an EnvPool one
    own = spec_of(task_id)
    names = own.envpool.ids if own is not None and own.envpool is not None else ()
    use = f"cypool.make_vec({task_id!r}, num_envs) for cypool's API"
    if names:
        raise ValueError(f"{task_id} is cypool's id, not EnvPool's: EnvPool (and "
                         f"cypool.envpool) call this env {names[0]}; or use {use}")
    raise ValueError(f"{task_id}: cypool.envpool does not serve this env under EnvPool's API "
                     f"({_LISTED}): use {use}")


def _same_option(value, default):
    """value is the option's default (a bool only for a bool default)."""
    if isinstance(default, (bool, np.bool_)) != isinstance(value, (bool, np.bool_)):
        return False
    try:
        return bool(np.all(np.asarray(value) == np.asarray(default)))
    except Exception:
        return False


def _spec_task(task_id, spec, cfg, from_pixels):
    """cypool kwargs of ``spec`` for EnvPool's config ``cfg`` (its EnvPoolNames mapping)."""
    names = spec.envpool
    for k, v in names.variants.items():
        if not _same_option(cfg[k], v) and cfg[k] != v:
            raise ValueError(f"{k}={cfg[k]!r} selects an EnvPool variant of {task_id} that "
                             f"cypool does not run (it runs gymnasium's {spec.env_id}: "
                             f"{k}={v!r})")
    if names.convert is not None:
        own = {k: cfg[k] for k in names.config}
        pixels = {k: cfg[k] for k in PIXELS} if from_pixels else None
        return names.convert(task_id, own, pixels)
    task = {}
    for k in names.config:
        if k in ("max_episode_steps", "reward_threshold") or k in names.variants:
            continue
        v = cfg[k]
        target = names.kwargs.get(k)
        if target is None:          # an EnvPool variant switch: its default only
            if not _same_option(v, names.config[k]):
                raise ValueError(f"{k}={v!r} selects an EnvPool variant of {task_id} that "
                                 f"cypool does not run (it runs gymnasium's {spec.env_id}: "
                                 f"{k}={names.config[k]!r})")
        elif callable(target):
            task.update(target(v))
        else:
            task[target] = v
    if from_pixels and getattr(spec, "render_pixels", False):
        task.update(from_pixels=True, channels_first=True, width=cfg["render_width"],
                    height=cfg["render_height"])
        cam = cfg["render_camera_id"]
        if "camera_id" in spec.kwargs:
            task["camera_id"] = cam
        elif not (isinstance(cam, (int, np.integer)) and not isinstance(cam, bool)
                  and cam == -1):
            raise ValueError(f"render_camera_id={cam!r}: gymnasium-robotics' {spec.env_id} "
                             "renders its free camera only (render_camera_id=-1)")
    return task


def _config(task_id, kwargs):
    """EnvPool's config for these options (unknown ones: TypeError, bad values: ValueError),
    and cypool.make_vec's arguments for it (``make["env_id"]``: cypool's id)."""
    spec = _family(task_id)
    names = spec.envpool
    kwargs = dict(kwargs)
    from_pixels = kwargs.pop("from_pixels", False)
    if not isinstance(from_pixels, (bool, np.bool_)):
        raise TypeError(f"from_pixels must be a bool, got {from_pixels!r}")
    if from_pixels and not (names.pixels or getattr(spec, "render_pixels", False)):
        raise ValueError("from_pixels=True is only supported for MuJoCo tasks.")
    if not from_pixels and any(k in kwargs for k in PIXELS):
        raise ValueError(f"{', '.join(k for k in PIXELS if k in kwargs)}: cypool.envpool "
                         "does not render; these options need from_pixels=True")
    cfg = {**COMMON, "base_path": _BASE_PATH, **names.config, **names.aliases.get(task_id, {}),
           **(PIXELS if from_pixels else {})}
    unknown = [k for k in kwargs if k not in cfg]
    if unknown:
        raise TypeError(f"Config.__new__() got an unexpected keyword argument '{unknown[0]}'")
    cfg.update(kwargs)
    n = check_pool_size(cfg["num_envs"], task_id)      # before the per-env seeds
    batch = check_int("batch_size", cfg["batch_size"], 0, n, closed_high=True) or n
    cfg["batch_size"] = batch
    threads = check_int("num_threads", cfg["num_threads"], 0)
    if cfg["gym_reset_return_info"] is not True:
        raise ValueError("gym_reset_return_info=False is not supported (as in EnvPool 1.2.5)")
    if cfg["max_num_players"] != 1:
        raise ValueError("max_num_players must be 1 for single-agent tasks")
    seed = cfg["seed"]
    if isinstance(seed, (list, tuple, np.ndarray)):
        cfg["env_seed"], cfg["seed"] = [int(s) for s in seed], 0
    if cfg["env_seed"]:
        if len(cfg["env_seed"]) != n:
            raise ValueError(f"env_seed must have num_envs={n} seeds, got {len(cfg['env_seed'])}")
        seeds = [check_int("env_seed[i]", s, 0, 2**31) for s in cfg["env_seed"]]
    else:
        base = check_int("seed", cfg["seed"], -2**31, 2**31)
        seeds = [(base + i) % 2**31 for i in range(n)]     # EnvPool's int32 seeds
    own_limit = getattr(spec, "envpool_own_limit", False)
    limit = check_int("max_episode_steps", cfg["max_episode_steps"], 0 if own_limit else 1)
    make = dict(env_id=spec.env_id, num_envs=n, num_threads=threads or None,
                max_episode_steps=None if own_limit else limit, batch_size=batch,
                autoreset_mode="next_step")
    task = _spec_task(task_id, spec, cfg, from_pixels)
    cfg.update(names.fixed)
    return spec, cfg, make, task, seeds


def _spaces(pool, spec):
    """One env's spaces as EnvPool gives them."""
    obs = pool.single_observation_space
    act = pool.single_action_space
    names = spec.envpool
    if names.observation_space is not None:
        obs = names.observation_space      # EnvPool's own (Blackjack's Box)
    elif getattr(spec, "envpool_space", None) is not None and \
            not getattr(pool.pool.family, "from_pixels", False):
        obs = spec.envpool_space(obs)      # MiniGrid's mission bytes, robotics' key order
    if names.action_dtype is not None and isinstance(act, gym.spaces.Box):
        act = gym.spaces.Box(act.low.astype(names.action_dtype),
                             act.high.astype(names.action_dtype), dtype=names.action_dtype)
    return obs, act


def make_spec(task_id: str, **kwargs) -> EnvSpec:
    """EnvPool's ``make_spec``: the config and one env's spaces."""
    family, cfg, make, task, _ = _config(task_id, kwargs)
    pixels = task.pop("from_pixels", False)
    task.pop("channels_first", None)
    pool = make_vec(make["env_id"], 1, num_threads=1, **task)   # checks the options
    try:
        obs, act = _spaces(pool, family)
    finally:
        pool.close()
    if pixels or "render_width" in cfg:     # the pixel pool's space (no GL context made)
        obs = gym.spaces.Box(0, 255, (3, cfg["render_height"], cfg["render_width"]), np.uint8)
    return EnvSpec(task_id, cfg, obs, act)


def make_gymnasium(task_id: str, **kwargs) -> "EnvPoolEnv":
    """EnvPool's ``make_gymnasium``: a pool of ``num_envs`` envs with EnvPool's API."""
    family, cfg, make, task, seeds = _config(task_id, kwargs)
    return EnvPoolEnv(task_id, family, cfg, make, task, seeds)


make_gym = make_gymnasium


def make(task_id: str, env_type: str, **kwargs) -> "EnvPoolEnv":
    """EnvPool's ``make``: ``env_type`` "gym" or "gymnasium" (the same class in 1.2.5)."""
    if env_type in ("gym", "gymnasium"):
        return make_gymnasium(task_id, **kwargs)
    if env_type == "dm":
        return make_dm(task_id, **kwargs)
    raise ValueError(f"env_type must be 'gym', 'gymnasium' or 'dm', got {env_type!r}")


def make_dm(task_id: str, **kwargs):
    """EnvPool's ``make_dm``: the same pool as ``make_gymnasium`` (options, seeds, engine)
    with EnvPool's dm_env interface: ``reset``/``step``/``recv`` return a
    ``dm_env.TimeStep`` whose observation is EnvPool's ``State`` namedtuple (see
    :mod:`cypool._envpool_dm`); needs the ``dm_env`` package."""
    cls = _dm.dm_class()            # dm_env missing: ImportError before any pool is built
    return cls(make_gymnasium(task_id, **kwargs))


def _rows(obs, ids):
    """Rows ``ids`` of an observation batch: an array, or a Dict's arrays (dm_control's)."""
    if isinstance(obs, dict):
        return {k: v[ids] for k, v in obs.items()}
    return obs[ids]


class EnvPoolEnv(gym.vector.VectorEnv, gym.Env):
    """EnvPool's ``<Family>GymnasiumEnvPool``, stepped by a cypool pool (``self.pool``)."""

    def __init__(self, task_id, family, cfg, make, task, seeds):
        try:
            self.pool = make_vec(**make, **task)
        except (TypeError, ValueError) as exc:
            # an option error names the env by cypool's id (CliffWalking-v1): name EnvPool's
            own = f"{make['env_id']}:"
            if type(exc) not in (TypeError, ValueError) or task_id == make["env_id"] or \
                    not str(exc).startswith(own):
                raise
            raise type(exc)(f"{task_id}:{str(exc)[len(own):]}").with_traceback(
                exc.__traceback__) from None
        self.task_id = task_id
        self._family = family
        # the spec's EnvPool names: its obs/reward dtypes and info keys
        self._names = family.envpool
        self._info_cols = {}
        col = 0
        for key in family.info:
            col = col if key.column is None else key.column
            self._info_cols[key.name] = (col, key.width)
            col += key.width
        self._config = cfg
        self._seeds = seeds
        self._started = False
        obs, act = _spaces(self.pool, family)
        if task.get("from_pixels"):         # EnvPool's frames, channels-first
            obs = gym.spaces.Box(0, 255, (3, cfg["render_height"], cfg["render_width"]),
                                 np.uint8)
        self.single_observation_space = self.observation_space = obs
        self.single_action_space = self.action_space = act
        self.num_envs = self.pool.num_envs
        self.batch_size = self.pool.batch_size
        self.is_async = self.pool.is_async
        self.is_vector_env = True
        self.metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}
        self.render_mode = None
        self.spec = EnvSpec(task_id, cfg, obs, act)

    def check_open(self):
        """ClosedEnvError once closed (naming EnvPool's id: the pool's own error would name
        cypool's, Taxi-v4 for Taxi-v3)."""
        if self.pool.closed:
            raise ClosedEnvError(f"cypool.envpool: this {self.task_id} env is closed")

    # ------------------------------------------------------------------ attributes
    @property
    def config(self) -> dict:
        return dict(self._config)

    @property
    def all_env_ids(self) -> np.ndarray:
        return np.arange(self.num_envs, dtype=np.int32)

    @property
    def unwrapped(self):
        return self

    def __len__(self):
        return self.num_envs

    def __repr__(self):
        # EnvPool's class name, e.g. TaxiGymnasiumEnvPool, AtariGymnasiumEnvPool
        kind = self._names.family or self.task_id.split("/")[-1].split("-v")[0]
        return (f"{kind}GymnasiumEnvPool(cypool, num_envs={self.num_envs}, "
                f"batch_size={self.batch_size})")

    def __str__(self):          # EnvPool's (gymnasium.Env's reads spec.id, which it has not)
        return self.__repr__()

    # ------------------------------------------------------------------ results
    def _ids(self, env_id):
        """env_id as int64 ids, checked before any cast or indexing: integers in
        [0, num_envs), none repeated (numpy would read -1 as the last env, wrap a uint64)."""
        if env_id is None:
            return None
        ids = np.asarray(env_id).reshape(-1)
        if ids.dtype.kind not in "iu":
            raise TypeError(f"env_id must be an integer array of env ids, got {ids.dtype}")
        bad = (ids < 0) | (ids >= self.num_envs)
        if bad.any():
            raise ValueError(f"env_id must be in [0, {self.num_envs}), got "
                             f"{ids[bad].tolist()}")
        ids = ids.astype(np.int64)
        if len(np.unique(ids)) != len(ids):
            raise ValueError(f"env_id must not repeat an env, got {ids.tolist()}")
        return ids

    def _info(self, info, ids):
        """EnvPool's info: plain arrays for the rows `ids`, no masks."""
        out = {"env_id": ids.astype(np.int32), "players": {"env_id": ids.astype(np.int32)}}
        if not self._names.info_all:    # EnvPool's keys only
            return self._spec_info(out, ids)
        for k, v in info.items():
            if k.startswith("_") or k in ("env_id", "final_obs", "final_info"):
                continue
            out[k] = v
        engine = self.pool.pool.engine
        for key, col, width, dtype, on_step, on_reset in self.pool.pool.info_layout:
            if key not in out:      # EnvPool has every key on every call (zeros when unset)
                dt = np.float64 if isinstance(dtype, str) else dtype
                if not (on_step or on_reset):    # a column only EnvPool reports (v4 tasks):
                    # the kernel's value after a step, 0 on a reset (elapsed_step 0)
                    stepped = engine.elapsed()[ids] > 0
                    vals = engine.info[ids, col] if width == 1 else \
                        engine.info[ids, col:col + width]
                    out[key] = np.where(stepped if width == 1 else stepped[:, None], vals,
                                        0.0).astype(dt)
                else:
                    out[key] = np.zeros((len(ids),) if width == 1 else (len(ids), width), dt)
        return self._spec_info(out, ids)

    def _spec_info(self, out, ids):
        """The info keys of the spec's EnvPoolNames, read from the engine's rows ``ids`` (its
        float64 info row, not gymnasium's first-reporter typed arrays), then
        ``elapsed_step``."""
        engine = self.pool.pool.engine
        for key, (source, dtype) in self._names.info.items():
            if callable(source):
                vals = source(engine, ids)
            else:
                col, width = self._info_cols[source]
                vals = engine.info[ids, col] if width == 1 else \
                    engine.info[ids, col:col + width]
            out[key] = np.asarray(vals).astype(dtype)
        if "elapsed_step" not in out:       # steps since the env's reset (Atari reports its own)
            out["elapsed_step"] = engine.elapsed()[ids].astype(np.int32)
        return out

    def _obs(self, obs):
        """A spec family's observation batch as EnvPool gives it (its converter, dtype)."""
        if self._names.obs is not None and \
                not getattr(self.pool.pool.family, "from_pixels", False):   # (robotics' frames)
            obs = self._names.obs(obs)
        if self._names.obs_dtype is not None:
            obs = np.asarray(obs).astype(self._names.obs_dtype, copy=False)
        return obs

    def _step_result(self, out, ids):
        obs, rew, term, trunc, info = out
        trunc = np.asarray(trunc, np.bool_)
        rdt = self._names.reward_dtype
        obs = self._obs(obs)
        return (obs, np.asarray(rew, rdt), np.asarray(term, np.bool_) & ~trunc,
                trunc, self._info(info, ids))

    def _first_seeds(self):
        if self._started:
            return None
        self._started = True
        return list(self._seeds)

    # ------------------------------------------------------------------ API
    def reset(self, env_id=None, *, seed=None, options=None):
        """The rows of ``env_id`` (default: every env) after a reset: ``(obs, info)``."""
        self.check_open()
        if seed is not None:
            warnings.warn("EnvPool seeds are fixed when the environment is created "
                          "(make(..., seed=)); the seed passed to reset() is ignored",
                          UserWarning, stacklevel=2)
        mask = None
        if options is not None:
            if not isinstance(options, dict) or set(options) - {"reset_mask"}:
                raise ValueError("reset options may only hold 'reset_mask'")
            mask = options.get("reset_mask")
            if mask is not None:
                if env_id is not None:
                    raise ValueError("pass env_id or options['reset_mask'], not both")
                mask = np.asarray(mask, np.bool_)
                if mask.shape != (self.num_envs,) or not mask.any():
                    raise ValueError(f"reset_mask must be a bool array of shape "
                                     f"({self.num_envs},) with at least one True value")
                env_id = np.flatnonzero(mask)
        ids = self._ids(env_id)
        if ids is None:
            ids = np.arange(self.num_envs, dtype=np.int64)
        seeds = self._first_seeds()
        if seeds is not None:      # the first reset starts every env, from its fixed seed
            obs, info = self.pool.reset(seed=seeds)
        else:
            m = np.zeros(self.num_envs, np.bool_)
            m[ids] = True
            obs, info = self.pool.reset(options={"reset_mask": m})
        obs = _rows(self._obs(obs), ids)
        return obs, self._info({k: v[ids] if isinstance(v, np.ndarray) and
                                len(v) == self.num_envs else v
                                for k, v in info.items()}, ids)

    def step(self, action, env_id=None):
        """``send`` then ``recv``: the 5-tuple of the envs stepped (sync) or of the first
        ``batch_size`` to finish (async)."""
        self.check_open()
        if self.is_async:
            self.send(action, env_id)
            return self.recv()
        ids = self._ids(env_id)
        out = self.pool.step(self._action(action), env_ids=ids)
        return self._step_result(out, np.arange(self.num_envs) if ids is None else ids)

    def _action(self, action):
        """Atari actions go to the pool as given: it checks their dtype (integers; floats
        are refused, never truncated) and values (in [0, n)) before any cast, as make_vec's
        pools do, so a 2**32 + 1 cannot wrap into action 1. An array-like (a jax.Array, a
        list) is taken as numpy converts it, exactly (its own dtype)."""
        if isinstance(action, np.ndarray):
            return action
        try:
            a = np.asarray(action)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"action must be an array (numpy's, or one numpy converts), got "
                            f"{type(action).__name__}: {exc}") from None
        if a.dtype == object:
            raise TypeError(f"action must be an array of numbers, got {type(action).__name__}")
        return a

    def send(self, action, env_id=None):
        self.check_open()
        if not self._started:
            raise RuntimeError("call reset() or async_reset() before send()")
        self.pool.send(self._action(action), self._ids(env_id))

    def recv(self, reset: bool = False, return_info: bool = True):
        self.check_open()
        out = self.pool.recv()
        ids = out[4]["env_id"].astype(np.int64)
        obs, rew, term, trunc, info = self._step_result(out, ids)
        if reset:
            return (obs, info) if return_info else obs
        return (obs, rew, term, trunc, info) if return_info else (obs, rew, term, trunc)

    def async_reset(self):
        """Reset every env; the next ``recv()`` returns the first ``batch_size`` of them."""
        self.check_open()
        self.pool.async_reset(seed=self._first_seeds())

    def seed(self, seed=None):
        warnings.warn("The `seed` function in envpool is abandoned. You can set seed by "
                      "envpool.make(..., seed=seed) instead.", UserWarning, stacklevel=2)

    def render(self, *args, **kwargs):
        raise RuntimeError("cypool.envpool does not render; use cypool.make_vec")

    def xla(self):
        """EnvPool's ``handle, recv, send, step`` (see :mod:`cypool.xla`; needs
        ``pip install "cypool[jax]"``)."""
        from cypool.xla import make_xla
        return make_xla(self, envpool=True)

    @property
    def truncation_discount(self) -> float:
        """The dm_env discount EnvPool gives a truncated step (``make_dm``): 0 (its time
        limit ends the episode), but 1 for dm_control's ids (dm_control's time limit)."""
        return 1.0 if (self._names.family or "").startswith("Dmc") else 0.0

    # what cypool.xla reads to lay out its results (and check_open)
    @property
    def reward_dtype(self):
        """The dtype of EnvPool's reward arrays."""
        return self._names.reward_dtype

    def info_rows(self, ids) -> dict:
        """EnvPool's info dict for the rows ``ids`` of the pool's last results (every key,
        no masks)."""
        return self._info({}, ids)

    def obs_zeros(self, b: int):
        """Zeros of a batch of ``b`` observations as ``step()`` returns them: the pool's
        observation assembly (an array, or a Dict's/Tuple's dict/tuple of arrays) on zero
        arrays of its engine's output shapes, through EnvPool's conversion (its dtypes,
        Blackjack's Box). Reads no env state."""
        pool = self.pool.pool
        return self._obs(pool.obs(pool.engine.outputs,
                                  lambda a: np.zeros((b,) + a.shape[1:], a.dtype)))

    def close(self, **kwargs):
        self.pool.close()


# EnvPool's classes that clients type-check (TorchRL: envpool.python.envpool.EnvPoolMixin)
EnvPoolMixin = _dm.EnvPoolMixin
EnvPoolMixin.register(EnvPoolEnv)
_dm.GymnasiumEnvPoolMixin.register(EnvPoolEnv)


def register_as_envpool():
    """Make ``import envpool`` give this module, for libraries that import EnvPool
    themselves (TorchRL's ``MultiThreadedEnv``, ARLBench): call it once, before they import
    ``envpool``. Installs ``sys.modules`` entries for ``envpool`` (``make``, ``make_gym``,
    ``make_gymnasium``, ``make_dm``, ``make_spec``, ``list_all_envs``, ``__version__``
    1.2.5), ``envpool.registration``, ``envpool.python``, ``envpool.python.envpool``
    (``EnvPoolMixin``, which every env of this module is an instance of),
    ``envpool.python.protocol``, ``envpool.python.gymnasium_envpool`` and
    ``envpool.python.dm_envpool``. Calling it again returns the same module; it raises
    RuntimeError when the real EnvPool is already imported (objects made from it would
    mix with cypool's)."""
    import importlib.machinery
    import sys
    import types

    have = sys.modules.get("envpool")
    if have is not None:
        if getattr(have, "__cypool__", False):
            return have
        raise RuntimeError(
            f"register_as_envpool(): the real EnvPool is already imported "
            f"({getattr(have, '__file__', have)!r}); call "
            "cypool.envpool.register_as_envpool() before anything imports envpool (e.g. at "
            "the top of the script, before importing torchrl)")
    this = sys.modules[__name__]

    def module(name, doc, is_package=False, **attrs):
        m = types.ModuleType(name, doc)
        m.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=is_package)
        if is_package:
            m.__path__ = []
        m.__cypool__ = True
        m.__dict__.update(attrs)
        return m

    api = dict(make=make, make_gym=make_gym, make_gymnasium=make_gymnasium, make_dm=make_dm,
               make_spec=make_spec, list_all_envs=list_all_envs)
    mods = {
        "envpool.python.envpool": module("envpool.python.envpool", "cypool's EnvPoolMixin",
                                         EnvPoolMixin=EnvPoolMixin),
        "envpool.python.protocol": module("envpool.python.protocol", "cypool's protocol",
                                          EnvPool=EnvPoolMixin, EnvSpec=EnvSpec),
        "envpool.python.gymnasium_envpool": module(
            "envpool.python.gymnasium_envpool", "cypool's gymnasium mixin",
            GymnasiumEnvPoolMixin=_dm.GymnasiumEnvPoolMixin),
        "envpool.python.dm_envpool": module("envpool.python.dm_envpool", "cypool's dm mixin",
                                            DMEnvPoolMixin=_dm.DMEnvPoolMixin),
        "envpool.registration": module("envpool.registration", "cypool's registry", **api),
    }
    python = module("envpool.python", "cypool.envpool's stand-in for envpool.python",
                    is_package=True, **{k.rsplit(".", 1)[1]: m for k, m in mods.items()
                                        if k.startswith("envpool.python.")})
    top = module("envpool", this.__doc__, is_package=True, **api, python=python,
                 registration=mods["envpool.registration"], EnvSpec=EnvSpec,
                 __version__=ENVPOOL_API_VERSION, cypool_module=this)
    sys.modules.update(mods)
    sys.modules["envpool.python"] = python
    sys.modules["envpool"] = top        # last: a half-installed set is never "registered"
    return top
