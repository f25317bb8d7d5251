"""The Walk family (see _walk.pyx): built and registered from the test suite alone, through
cypool.get_include() and cypool.families.register_family, with no library change; plus
WalkEnv, the same env in plain Python (gymnasium.Env) as the reference."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np

import cypool
import cypool.api
from cypool.families import register_family, unregister_family

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from _buildext import build_extension, import_built  # noqa: E402
DEFAULTS = {"bound": 2.0, "fail_slot": -1}
LIMIT = 50


def build_walk(cache_dir: Path):
    """Compile _walk.pyx against the installed cypool (cypool.api.extension_kwargs(); cached
    in cache_dir per source, engine header and cypool version) and import it."""
    engine_pxd = (Path(cypool.get_include()[0]) / "cypool" / "_core" / "_engine.pxd").read_bytes()
    out = build_extension("_walk", HERE / "_walk.pyx", cypool.api.extension_kwargs(), cache_dir,
                          key_extra=engine_pxd + Path(__file__).read_bytes())
    return import_built("_walk", out)


class WalkFamily:
    """A cypool.families.Family over WalkPool."""

    walk = None      # the compiled module, set by register()

    def __init__(self, env_id, num_envs, num_threads, max_episode_steps, kwargs,
                 member_kwargs=None):
        self.kwargs = self.merged_kwargs(kwargs)
        self.engine = self.walk.WalkPool(num_envs, num_threads, max_episode_steps or 0,
                                         self.kwargs["bound"], self.kwargs["fail_slot"])
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float64)
        self.metadata = {"render_modes": []}
        self.info_layout = [("x", 0, 1, np.float64, True, True),
                            ("action", 1, 1, np.float64, True, False)]
        self.action_dtype = np.float64
        if member_kwargs is not None:
            for i, kw in enumerate(member_kwargs):
                self.configure_envs([i], self.merged_kwargs(kw))

    def merged_kwargs(self, kwargs):
        unknown = set(kwargs) - set(DEFAULTS)
        if unknown:
            raise TypeError(f"Walk-v0 got unexpected kwargs {sorted(unknown)}")
        out = {**DEFAULTS, **kwargs}
        if not out["bound"] > 0:
            raise ValueError(f"bound must be > 0, got {out['bound']}")
        return out

    def configure_envs(self, ids, kwargs):
        kw = self.merged_kwargs(kwargs)
        self.engine.bounds[np.asarray(ids, np.int64)] = kw["bound"]

    def set_max_episode_steps(self, ids, limit):
        self.engine.set_max_episode_steps(np.asarray(ids, np.int64), limit)

    def load_actions(self, actions, env_ids=None):
        a = np.asarray(actions, np.float64)
        n = self.engine.num_envs if env_ids is None else len(env_ids)
        if a.shape != (n, 1):
            raise ValueError(f"Walk actions must have shape ({n}, 1), got {a.shape}")
        if env_ids is None:
            self.engine.actions[:] = a[:, 0]
        else:
            self.engine.actions[np.asarray(env_ids, np.int64)] = a[:, 0]

    def extra_info(self, info, kinds, ids):
        pass


def default_cache() -> Path:
    return Path(os.environ.get("CYPOOL_CACHE_DIR", Path.home() / ".cache" / "cypool")) / \
        "test-walk"


def register(walk_module):
    """Register the family; walk_plugin is the module a new process (a Ray actor) imports to
    register it there."""
    WalkFamily.walk = walk_module
    register_family("walk", env_ids=lambda: ["Walk-v0"], make=WalkFamily,
                    default_max_episode_steps=lambda env_id: LIMIT, module="walk_plugin")


def unregister():
    unregister_family("walk")
    gym.registry.pop("cypool/Walk-v0", None)


def pix_of(x):
    return np.array([int(abs(x) * 40.0 * (k + 1)) % 256 for k in range(4)], np.uint8)


class WalkEnv(gym.Env):
    """The reference: the same env in Python, seeded as gymnasium seeds (PCG64)."""

    observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float64)

    def __init__(self, bound=2.0):
        self.bound = bound

    def _obs(self):
        return np.array([self.x, self.x * self.x])

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.x = self.np_random.random() - 0.5
        return self._obs(), {"x": self.x}

    def step(self, action):
        a = float(np.asarray(action, np.float64).reshape(-1)[0])
        self.x = self.x + a + 0.1 * (self.np_random.random() - 0.5)
        term = abs(self.x) >= self.bound
        return self._obs(), -abs(self.x), bool(term), False, {"x": self.x, "action": a}


def reference(num_envs, mode, limit=LIMIT, bound=2.0):
    fns = [lambda: gym.wrappers.TimeLimit(WalkEnv(bound), limit) for _ in range(num_envs)]
    return gym.vector.SyncVectorEnv(fns, autoreset_mode=mode)

