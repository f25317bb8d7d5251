"""mpe2's particle worlds as cypool specs: :func:`spec_of` is each id's
:class:`cypool.api.FamilySpec`; its build hook makes one :class:`MPEPool` whose envs are
whole multi-agent envs.

The contract (what cypool.multiagent reads):

- ids ``mpe2/<module>`` (``mpe2/simple_spread_v3``); kwargs: the module's
  ``parallel_env(**kwargs)`` kwargs and defaults (``render_mode`` is make_vec's).
- ``single_observation_space``: a ``Dict`` keyed by agent name in the reference's
  ``possible_agents`` order, each the reference's float32 Box (one engine output per agent);
  ``single_action_space``: a ``Dict`` in the same order, each the reference's action space.
  The agent order is ``list(single_observation_space.spaces)`` (also ``fam.state.agents``).
- info ``"rewards"``: float64, one column per agent (that order), on step (0.0 at reset);
  ``"terminations"`` (bool, one column per agent) for the scenarios that can end an episode
  (simple_spread_v3, simple_tag_v3, simple_formation_v1, simple_line_v1:
  ``terminate_on_success``). A one-agent scenario
  (simple_v3) gets them as shape (B,): the façade squeezes a width-1 info key.
- ``env.observation_space`` / ``env.action_space`` (the batched Dicts) are in sorted key
  order (gymnasium's batch_space sorts); only the single spaces keep the agent order.
- the env's reward is the sum of the agents' rewards in agent order (from 0.0); truncated:
  the reference's truncation of every agent at step number ``max_cycles``; terminated: every
  agent terminated (the scenario's ``is_terminal``).
- actions: a dict ``{agent: array}`` with a row per env (Discrete: integers (B,); Box: floats
  (B, n), clipped into [0, 1] as PettingZoo's ClipOutOfBoundsWrapper does); also taken: a
  list of B dicts ``{agent: action}`` (``gymnasium.make``'s single env hands its one dict so).

Served: every module of mpe2 1.1.1 (``MODULES``). Refused with a
ValueError: ``benchmark_data=True`` and partial observability (``num_*_neighbors``).
``render_mode="rgb_array"`` gives the reference's frames (cypool/mpe2/_render.py); "human"
is not offered. Kwarg scopes: those that change the spaces or the layout (N, the counts,
continuous_actions, tag's curriculum) are per pool; local_ratio, max_cycles,
dynamic_rescaling, spread's curriculum and terminate_on_success per env.

Numerics taken from numpy itself where numpy does not call libm: np.exp, np.cos, np.sin and
np.arctan2 of a float64 scalar run numpy's own ufunc inner loops (its AVX-512 exp/arctan2
differ from libm's), and np.linalg.norm of a 2-vector calls the cblas_ddot of the OpenBLAS
numpy loaded (``_mpe.HAVE_NUMPY_DDOT``; without it, the FMA form of its x86-64 kernels).

Exact: the same seeds and actions give ``mpe2.<module>.parallel_env(...)``'s observations,
rewards, terminations and truncations bit for bit (tests/mpe2). The layout of a pool (agent
names, sizes, masses, spaces) is read from one reference ``raw_env`` made with the pool's
kwargs at build time, so the spaces are the reference's by construction (mpe2 is needed to
make a pool). The spec itself (``cypool.registry.spec_of(id)``) carries placeholder spaces
(a spec's action space must be one leaf): read the pool's ``single_*_space``.
"""
from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np

from cypool._core.spec import Built, FamilySpec, InfoKey, Kwarg
from cypool._validate import Interval
from cypool.mpe2._reference import reference_env

# the modules served, in the order the ids are listed
MODULES = ("simple_spread_v3", "simple_v3", "simple_adversary_v3", "simple_tag_v3",
           "simple_push_v3", "simple_speaker_listener_v4", "simple_reference_v3",
           "simple_crypto_v3", "simple_formation_v1", "simple_line_v1", "simple_world_comm_v3",
           "collect_treasure_v1")

_INT = Interval("int", 1, 1_000_000)
_RATIO = Interval("real", 0, 1, what="a proportion")


def _common(max_cycles=25):
    return {"max_cycles": Kwarg(max_cycles, kind=_INT),
            "continuous_actions": Kwarg(False, kind="bool", scope="pool"),
            "dynamic_rescaling": Kwarg(True, kind="bool"),
            "benchmark_data": Kwarg(False, kind="bool", scope="pool")}


_COUNT = Interval("int", 0, 1024)
_POSITIVE = Interval("int", 1, 1024)
_PO = ("num_agent_neighbors", "num_landmark_neighbors")

# module -> (kwargs, scenario kwargs that are None only, can terminate)
KWARGS = {
    "simple_v3": (_common(), (), False),
    "simple_spread_v3": (
        {"N": Kwarg(3, kind=Interval("int", 1, 1024), scope="pool"),
         "local_ratio": Kwarg(0.5, kind=_RATIO), **_common(),
         "curriculum": Kwarg(False, kind="bool"),
         "terminate_on_success": Kwarg(False, kind="bool"),
         "num_agent_neighbors": Kwarg(None, kind="any", scope="pool"),
         "num_landmark_neighbors": Kwarg(None, kind="any", scope="pool")},
        _PO, True),
    "simple_adversary_v3": (
        {"N": Kwarg(2, kind=Interval("int", 1, 1024), scope="pool"), **_common(),
         "num_agent_neighbors": Kwarg(None, kind="any", scope="pool"),
         "num_landmark_neighbors": Kwarg(None, kind="any", scope="pool")}, _PO, False),
    "simple_tag_v3": (
        {"num_good": Kwarg(1, kind=_COUNT, scope="pool"),
         "num_adversaries": Kwarg(3, kind=_COUNT, scope="pool"),
         "num_obstacles": Kwarg(2, kind=_COUNT, scope="pool"), **_common(),
         # the prey's speed follows the curriculum stage a new env starts in (0)
         "curriculum": Kwarg(False, kind="bool", scope="pool"),
         "terminate_on_success": Kwarg(False, kind="bool"),
         "num_agent_neighbors": Kwarg(None, kind="any", scope="pool"),
         "num_landmark_neighbors": Kwarg(None, kind="any", scope="pool")}, _PO, True),
    "simple_push_v3": (_common(), (), False),
    "simple_speaker_listener_v4": (_common(), (), False),
    "simple_crypto_v3": (_common(), (), False),
    # N up to 64: the assignment keeps an N x N cost matrix per env
    "simple_formation_v1": (
        {"N": Kwarg(4, kind=Interval("int", 1, 64), scope="pool"), **_common(),
         "terminate_on_success": Kwarg(False, kind="bool")}, (), True),
    "simple_world_comm_v3": (
        {"num_good": Kwarg(2, kind=_POSITIVE, scope="pool"),
         "num_adversaries": Kwarg(4, kind=_POSITIVE, scope="pool"),
         "num_obstacles": Kwarg(1, kind=_COUNT, scope="pool"),
         "num_food": Kwarg(2, kind=_POSITIVE, scope="pool"),
         **_common(), "num_forests": Kwarg(2, kind=_COUNT, scope="pool")}, (), False),
    "collect_treasure_v1": (
        {"num_collectors": Kwarg(6, kind=_POSITIVE, scope="pool"),
         "num_deposits": Kwarg(2, kind=Interval("int", 1, 1024), scope="pool"),
         "num_treasures": Kwarg(6, kind=_POSITIVE, scope="pool"), **_common()}, (), False),
    "simple_line_v1": (
        {"N": Kwarg(4, kind=Interval("int", 1, 64), scope="pool"), **_common(),
         "terminate_on_success": Kwarg(False, kind="bool")}, (), True),
    "simple_reference_v3": ({"local_ratio": Kwarg(0.5, kind=_RATIO), **_common()}, (), False),
}


def env_ids():
    return [f"mpe2/{m}" for m in MODULES]


def _module(env_id):
    return env_id.split("/", 1)[1]


def _check_kwargs(env_id, kw):
    """What the kinds cannot say: the kwargs cypool does not reproduce are refused."""
    _, none_only, _ = KWARGS[_module(env_id)]
    if kw.get("benchmark_data"):
        raise ValueError(f"{env_id}: benchmark_data=True is not served (cypool does not "
                         "compute the scenarios' benchmark_data infos)")
    for name in none_only:
        if kw[name] is not None:
            raise ValueError(f"{env_id}: {name}={kw[name]!r} is not served: cypool runs the "
                             f"fully observed scenario only ({name}=None)")
    if "num_good" in kw and kw["num_good"] + kw["num_adversaries"] < 1:
        raise ValueError(f"{env_id}: num_good + num_adversaries must be >= 1, got "
                         f"{kw['num_good']} + {kw['num_adversaries']}")
    lr = kw.get("local_ratio")
    if isinstance(lr, np.floating) and lr.dtype != np.float64:
        # the reference would blend the rewards in that width
        raise TypeError(f"{env_id}: local_ratio must be a Python float (or float64), got a "
                        f"numpy {lr.dtype}")
    return None


class _State:
    """A pool's facts: its module, agent names (possible_agents order), reference env."""

    __slots__ = ("module", "agents", "ref", "continuous")

    def __init__(self, module, agents, ref, continuous):
        self.module, self.agents, self.ref, self.continuous = module, agents, ref, continuous


def _layout(module, ref, can_terminate):
    w = ref.world
    agents, lms = w.agents, w.landmarks
    ents = agents + lms
    names = [a.name for a in agents]
    if names != list(ref.possible_agents):
        raise RuntimeError(f"mpe2/{module}: agent order differs from possible_agents")
    asp = [ref.action_spaces[n] for n in names]
    return dict(
        scenario=module, names=names, n_agents=len(agents), n_landmarks=len(lms),
        dim_c=int(w.dim_c), continuous=bool(ref.continuous_actions),
        terminations=bool(can_terminate),
        world=(float(w.dt), float(w.damping), float(w.contact_force),
               float(w.contact_margin)),
        size=[float(e.size) for e in ents], movable=[bool(e.movable) for e in ents],
        collide=[bool(e.collide) for e in ents], mass=[float(e.mass) for e in ents],
        max_speed=[-1.0 if e.max_speed is None else float(e.max_speed) for e in ents],
        accel=[-1.0 if a.accel is None else float(a.accel) for a in agents],
        silent=[bool(a.silent) for a in agents],
        local_ratio=ref.local_ratio,
        n_food=len(getattr(w, "food", ())), n_forests=len(getattr(w, "forests", ())),
        n_collectors=int(getattr(w, "num_collectors", 0)),
        n_types=len(getattr(w, "treasure_types", ())),
        adversary=[bool(getattr(a, "adversary", False)) for a in agents],
        # the landmarks' RGB colours (simple_crypto's one-hot "colours" are the kernel's)
        lm_color=[float(c) for lm in lms
                  for c in (lm.color if len(lm.color) == 3 else (0.0, 0.0, 0.0))],
        act_dims=[int(s.n) if isinstance(s, gym.spaces.Discrete) else int(s.shape[0])
                  for s in asp],
        obs_dims=[int(ref.observation_spaces[n].shape[0]) for n in names])


def _build(fam, num_envs, num_threads, max_episode_steps, env_kwargs, *, module):
    from cypool.mpe2._mpe import MPEPool, TreasurePool

    kw = dict(fam.kwargs)
    _, _, can_terminate = KWARGS[module]
    ref = reference_env(module, kw)
    lay = _layout(module, ref, can_terminate)
    pool = TreasurePool if module == "collect_treasure_v1" else MPEPool
    engine = pool(num_envs, num_threads, max_episode_steps, kw, lay)
    names = lay["names"]
    # a list of pairs keeps possible_agents' order (gymnasium's Dict sorts a plain dict's
    # keys, and so does batch_space: the batched env.observation_space is sorted)
    obs = gym.spaces.Dict([(n, ref.observation_spaces[n]) for n in names])
    act = gym.spaces.Dict([(n, ref.action_spaces[n]) for n in names])
    A = len(names)
    info = [InfoKey("rewards", np.float64, width=A)]
    if can_terminate:
        info.append(InfoKey("terminations", np.bool_, width=A))
    state = _State(module, tuple(names), ref, lay["continuous"])
    if env_kwargs is not None:
        for i, k in enumerate(env_kwargs):
            engine.configure(np.array([i], np.int64), k)
    return Built(engine, observation_space=obs, action_space=act, info=tuple(info),
                 render_fps=10, state=state)


def _configure(fam, ids, kwargs):
    fam.engine.configure(ids, kwargs)


def _load_actions(fam, actions, env_ids=None):
    """Check a dict {agent: rows} (every agent, no other), then copy it into the pool."""
    engine = fam.engine
    names = fam.state.agents
    asp = fam.single_action_space.spaces
    n = engine.num_envs if env_ids is None else len(env_ids)
    rows = slice(None) if env_ids is None else np.asarray(env_ids, np.int64)
    if isinstance(actions, (list, tuple, np.ndarray)) and len(actions) == n and n and all(
            isinstance(d, dict) for d in (actions.ravel() if isinstance(actions, np.ndarray)
                                          else actions)):
        # one dict per env (cypool.SingleEnv hands its one dict as a (1,) object array)
        rows_ = list(actions.ravel() if isinstance(actions, np.ndarray) else actions)
        keys = set(rows_[0])
        if any(set(d) != keys for d in rows_):
            raise ValueError(f"mpe2/{fam.state.module}: the envs' action dicts name "
                             "different agents")
        actions = {k: np.stack([np.asarray(d[k]) for d in rows_]) for k in rows_[0]}
    if not isinstance(actions, dict):
        raise TypeError(f"mpe2/{fam.state.module}: actions must be a dict {{agent: array}} "
                        f"over the agents {list(names)}, got {type(actions).__name__}")
    unknown = [k for k in actions if k not in asp]
    missing = [k for k in names if k not in actions]
    if unknown or missing:
        raise ValueError(f"mpe2/{fam.state.module}: actions must name every agent "
                         f"{list(names)} and no other; missing {missing}, unknown {unknown}")
    checked = []
    for k, name in enumerate(names):
        space = asp[name]
        a = np.asarray(actions[name])
        if isinstance(space, gym.spaces.Discrete):
            if a.dtype.kind not in "iu":
                raise TypeError(f"actions[{name!r}] must be integers (Discrete({space.n})), "
                                f"got {a.dtype}")
            if a.shape != (n,):
                raise ValueError(f"actions[{name!r}] must have shape ({n},), got {a.shape}")
            if a.size and (a.min() < 0 or a.max() >= space.n):
                raise ValueError(f"actions[{name!r}] must be in [0, {space.n}), got values "
                                 f"{a.min()}..{a.max()}")
            checked.append(a)
        else:
            w = space.shape[0]
            if a.dtype not in (np.float32, np.float64):
                raise TypeError(f"actions[{name!r}] must be float32 or float64 (Box(0, 1, "
                                f"({w},))), got {a.dtype}")
            if a.shape != (n, w):
                raise ValueError(f"actions[{name!r}] must have shape ({n}, {w}), got "
                                 f"{a.shape}")
            if not np.isfinite(a).all():
                raise ValueError(f"actions[{name!r}] contain NaN or Inf")
            # ClipOutOfBoundsWrapper: np.clip(action, low, high) (float32 bounds), which
            # keeps the action's own dtype
            checked.append(np.clip(a, space.low, space.high))
    if fam.state.continuous:
        for k, a in enumerate(checked):
            engine.actions[rows, k, :a.shape[1]] = a
            engine.act_f32[rows, k] = a.dtype == np.float32
    else:
        for k, a in enumerate(checked):
            engine.actions[rows, k] = a


@functools.lru_cache(maxsize=None)
def spec_of(env_id):
    module = _module(env_id)
    kwargs, _, can_terminate = KWARGS[module]
    # placeholder spaces for the spec itself (the build hook gives each pool its Dicts)
    box = gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)
    info = (InfoKey("rewards", np.float64),)
    return FamilySpec(
        env_id, "cypool.mpe2._mpe:MPEPool", box, gym.spaces.Discrete(5), kwargs=kwargs,
        max_episode_steps=None, info=info,
        check_kwargs=functools.partial(_check_kwargs, env_id),
        build=functools.partial(_build, module=module), configure=_configure,
        load_actions=_load_actions, render=functools.partial(_render, module),
        render_modes=("rgb_array",), render_fps=10, module="cypool.mpe2.registration")


def _render(module, engine, ids, mode, kwargs):
    from cypool.mpe2._render import render
    return render(module, engine, ids, mode, kwargs)
