"""Builds an Atari pool for one game: EnvPool's options, spaces, info layout, seeding, actions.

``cypool.make_vec("<Game>-v5", num_envs, **options)`` takes EnvPool's Atari options with
EnvPool's defaults:

    stack_num=4            frames per observation, oldest first
    frame_skip=4           emulator frames per step (rewards summed; max of the last two)
    noop_max=30            a reset plays U[1, noop_max] no-ops (one fewer when it presses FIRE)
    episodic_life=False    a life loss ends the episode; the next reset continues the game
    zero_discount_on_life_loss=False   accepted for EnvPool compatibility; it only changes
                           dm_env's discount, which gymnasium's API does not have
    reward_clip=False      reward = sign(reward); info["reward"] keeps the raw sum
    use_fire_reset=True    press FIRE after the no-ops when the game's action set has it
    img_height=84, img_width=84, gray_scale=True
                           colour frames are channel-first: a stack is (3 * stack_num, H, W)
    use_inter_area_resize=True   OpenCV INTER_AREA arithmetic; False: INTER_LINEAR
    repeat_action_probability=0.0   ALE's sticky actions
    full_action_space=False       True: ALE's 18 actions
    mode=None, difficulty=None    the game's mode / difficulty (None or -1: its default)
    ram_info=False         cypool's: info["ram"], the console's 128 bytes after each step
    max_episode_steps      (make_vec's argument) None: EnvPool's 27,000 agent steps

Info per env: env_id, lives, reward (unclipped), terminated (real game over), elapsed_step
(steps since the game was reset). With use_fire_reset=False, episodic_life=False and
reward_clip=False the trajectories are bit-identical to gymnasium's AtariPreprocessing +
FrameStackObservation over ale-py (see cypool/atari/_pool.pyx).
"""
from __future__ import annotations

import difflib
import math

import numpy as np
import gymnasium as gym

from cypool.atari import games
from cypool.atari.resize import make_plan
from cypool.atari._pool import AlePool, INFO_COLUMNS, RAM_SIZE

# EnvPool's Atari config (envpool/atari/atari_env.h, plus mode/difficulty of envpool 1.2.5),
# so that an EnvPool user switches by changing the import. ram_info is cypool's: EnvPool
# always puts the RAM in the info; here it costs 128 values per env and step, so it is asked
# for.
DEFAULTS = dict(
    stack_num=4, frame_skip=4, noop_max=30, episodic_life=False,
    zero_discount_on_life_loss=False, reward_clip=False, use_fire_reset=True, img_height=84,
    img_width=84, gray_scale=True, repeat_action_probability=0.0, full_action_space=False,
    use_inter_area_resize=True, mode=None, difficulty=None, ram_info=False,
)
# EnvPool's default time limit, in agent steps (108,000 frames at frame_skip 4).
MAX_EPISODE_STEPS = 27000
BOOL_OPTIONS = ("episodic_life", "zero_discount_on_life_loss", "reward_clip", "use_fire_reset",
                "gray_scale", "full_action_space", "use_inter_area_resize", "ram_info")
INT_OPTIONS = {"stack_num": 1, "frame_skip": 1, "noop_max": 0, "img_height": 1, "img_width": 1}
RAW_H, RAW_W = 210, 160
# Larger frames are refused: a stack of them per env would be a memory accident, not a choice.
MAX_IMG = 4096


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def merge_kwargs(env_id: str, kwargs: dict) -> dict:
    """Validate the options (TypeError for a wrong type or unknown name, ValueError for an
    impossible value) and return them merged over the defaults, as plain Python values."""
    for k in kwargs:
        if k not in DEFAULTS:
            close = difflib.get_close_matches(k, list(DEFAULTS), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise TypeError(f"{env_id} got an unexpected keyword argument '{k}'{hint}")
    kw = dict(DEFAULTS)
    kw.update(kwargs)
    for k in BOOL_OPTIONS:
        if not isinstance(kw[k], (bool, np.bool_)):
            raise TypeError(f"{k} must be a bool, got {kw[k]!r}")
        kw[k] = bool(kw[k])
    for k, low in INT_OPTIONS.items():
        v = kw[k]
        if not _is_int(v):
            raise TypeError(f"{k} must be an int, got {v!r}")
        if v < low:
            raise ValueError(f"{k} must be >= {low}, got {v}")
        kw[k] = int(v)
    for k in ("img_height", "img_width"):
        if kw[k] > MAX_IMG:
            raise ValueError(f"{k} must be <= {MAX_IMG}, got {kw[k]}")
    p = kw["repeat_action_probability"]
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise TypeError(f"repeat_action_probability must be a number, got {p!r}")
    if not (math.isfinite(p) and 0.0 <= p <= 1.0):
        raise ValueError(f"repeat_action_probability must be in [0, 1], got {p}")
    kw["repeat_action_probability"] = float(p)
    for k in ("mode", "difficulty"):
        v = kw[k]
        if v is None:
            kw[k] = -1
        elif not _is_int(v):
            raise TypeError(f"{k} must be an int or None, got {v!r}")
        elif v < -1:
            raise ValueError(f"{k} must be >= 0 (or None / -1 for the game's default), got {v}")
        else:
            kw[k] = int(v)
    return kw


class AtariFamily:
    """Everything the façade needs for one Atari pool (see cypool/vector.py)."""

    def __init__(self, env_id, num_envs, num_threads, max_episode_steps, kwargs):
        rom = games.rom_of(env_id)
        kw = merge_kwargs(env_id, kwargs)
        path = games.rom_path(rom)
        if max_episode_steps is None:
            max_episode_steps = MAX_EPISODE_STEPS
        self.game = rom
        self.kwargs = kw
        layout = [("lives", INFO_COLUMNS["lives"], 1, np.int32, True, True),
                  ("reward", INFO_COLUMNS["reward"], 1, np.float32, True, True),
                  ("terminated", INFO_COLUMNS["terminated"], 1, np.int32, True, True),
                  ("elapsed_step", INFO_COLUMNS["elapsed_step"], 1, np.int32, True, True)]
        width = INFO_COLUMNS["ram"]
        if kw["ram_info"]:
            layout.append(("ram", INFO_COLUMNS["ram"], RAM_SIZE, np.uint8, True, True))
            width += RAM_SIZE
        self.info_layout = layout
        h, w = kw["img_height"], kw["img_width"]
        plan = make_plan(RAW_H, RAW_W, h, w, kw["use_inter_area_resize"])
        self.engine = AlePool(path, num_envs, num_threads, max_episode_steps, kw, plan, width)
        self.num_actions = self.engine.n_actions
        channels = 1 if kw["gray_scale"] else 3
        # EnvPool's layout: frames oldest first; colour frames channel-first, so a stack of
        # 4 RGB frames is (12, H, W).
        self.single_observation_space = gym.spaces.Box(
            0, 255, (kw["stack_num"] * channels, h, w), np.uint8)
        self.single_action_space = gym.spaces.Discrete(self.num_actions)
        self.metadata = {"render_modes": [], "render_fps": max(1, round(60 / kw["frame_skip"]))}
        self.action_dtype = np.int64
        self._env_ids = np.arange(num_envs, dtype=np.int32)

    # ------------------------------------------------------------------ façade hooks
    def seed_env(self, i, seed):
        """ale-py's AtariEnv.seed_game(seed), so that env i seeded with s follows gymnasium's
        env reset with seed s: SeedSequence(s) -> (np_seed, ale_seed); the no-op generator is
        PCG64(SeedSequence(np_seed)) (gymnasium's seeding.np_random), ALE's random_seed is
        int32(ale_seed), applied by a ROM reload at env i's next reset. None: fresh entropy."""
        np_seed, ale_seed = np.random.SeedSequence(seed).generate_state(2)
        self.engine.set_generator(i, np.random.PCG64(np.random.SeedSequence(int(np_seed))))
        self.engine.set_ale_seed(i, int(ale_seed.astype(np.int32)))

    def load_actions(self, actions, env_ids=None):
        """Validate action indices (rows for env_ids, or for every env) and copy them into C."""
        a = np.asarray(actions)
        n = self.engine.num_envs if env_ids is None else len(env_ids)
        if a.shape != (n,):
            raise ValueError(f"actions must have shape ({n},), got {a.shape}")
        if a.dtype.kind not in "iu":
            raise TypeError(f"actions must be integers (action indices), got {a.dtype}")
        bad = (a < 0) | (a >= self.num_actions)
        if bad.any():
            rows = np.flatnonzero(bad)
            envs = rows if env_ids is None else np.asarray(env_ids)[rows]
            raise ValueError(f"actions must be in [0, {self.num_actions}); got "
                             f"{a[rows].tolist()} for env(s) {envs.tolist()}")
        self.engine.set_actions(a, env_ids)

    def extra_info(self, info, kinds, ids):
        """EnvPool's info["env_id"] (int32) on every row that has info."""
        mask = kinds != 0
        if mask.any():
            env_ids = self._env_ids if ids is None else np.asarray(ids, np.int32)
            info["env_id"] = np.where(mask, env_ids, 0).astype(np.int32)
            info["_env_id"] = mask
