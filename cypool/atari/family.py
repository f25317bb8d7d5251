"""The Atari family as specs: one game's pool from EnvPool's options, spaces, info layout,
seeding, actions.

``cypool.make_vec("<Game>-v5", num_envs, **options)`` takes EnvPool's Atari options with
EnvPool's defaults:

    stack_num=4            frames per observation, oldest first
    frame_skip=4           emulator frames per step (rewards summed; max of the last two);
                           at most 1,000 (one env's step runs them natively, past Ctrl-C)
    noop_max=30            a reset plays U[1, noop_max] no-ops (one fewer when it presses FIRE);
                           at most 10,000 (likewise)
    episodic_life=False    a life loss ends the episode; the next reset continues the game
    zero_discount_on_life_loss=False   accepted for EnvPool compatibility; it only changes
                           dm_env's discount, which gymnasium's API does not have
    reward_clip=False      reward = sign(reward); info["raw_reward"] keeps the raw sum
    use_fire_reset=True    press FIRE after the no-ops when the game's action set has it
    img_height=84, img_width=84, gray_scale=True
                           colour frames are channel-first: a stack is (3 * stack_num, H, W)
    use_inter_area_resize=True   OpenCV INTER_AREA arithmetic; False: INTER_LINEAR
    repeat_action_probability=0.0   ALE's sticky actions
    full_action_space=False       True: ALE's 18 actions
    mode=None, difficulty=None    the game's mode / difficulty (None or -1: its default)
    ram_info=False         cypool's: info["ram"], the console's 128 bytes after each step
    screen_rows=None       cypool's: resize only the top screen_rows lines of ALE's screen;
                           None: all of them, as gymnasium (210 lines; more for 13 games:
                           250 for Adventure, AirRaid, KeystoneKapers, KingKong, Klax,
                           LaserGates, MrDo, Pacman, SirLancelot, SpaceWar; Carnival 214,
                           Pooyan 220, JourneyEscape 230); 210: EnvPool 1.2.5's frames, which
                           read 210 x 160 pixels of every screen (cypool.envpool sets it)
    info_keys="cypool"     cypool's: the info key names, "cypool" or "envpool" (below)
    max_episode_steps      (make_vec's argument) None: EnvPool's 27,000 agent steps

Info per env: env_id, lives, raw_reward (unclipped), game_over (the real game over),
elapsed_step (steps since the game was reset); and at the step where a game ends (game over,
or the time limit, after which the next reset restarts the game) game_return (float64, the
unclipped rewards of every step of the game, all its lives) and game_length (int32, its
agent steps): the game score whatever episodic_life and reward_clip do (info_keys="cypool"
only: EnvPool's info has no such keys). EnvPool calls raw_reward "reward" and
game_over "terminated"; info_keys="envpool" gives those names (for EnvPool-era logging code;
cypool.envpool always does), but they collide with the step's own reward and terminated in
libraries that merge info into one namespace (TorchRL's GymWrapper), so cypool's own names
are the default. With use_fire_reset=False, episodic_life=False and
reward_clip=False the trajectories are bit-identical to gymnasium's AtariPreprocessing +
FrameStackObservation over ale-py (see cypool/atari/_pool.pyx).

Each id is served by its FamilySpec (:func:`game_spec`): the options above as its kwargs,
the hooks every Atari pool shares (the ROM and the engine, per-env options, ale-py's
seeding, actions, the info keys), its EnvPool names.

Per-env options (populations): the options that change neither the observation nor the
action set (PER_ENV_OPTIONS: frame_skip, noop_max, episodic_life, reward_clip,
use_fire_reset, repeat_action_probability, mode, difficulty, zero_discount_on_life_loss) may
differ between the envs of one pool: ``AtariFamily(..., member_kwargs=[{...}, ...])`` at
construction, ``configure_envs(ids, kwargs)`` at run time, and ``set_max_episode_steps(ids,
limit)`` for the time limit (None: EnvPool's 27,000). frame_skip, reward_clip,
episodic_life and the time limit apply from the env's next step; noop_max and
use_fire_reset from its next reset; repeat_action_probability, mode and difficulty are ALE
settings, applied by reloading the ROM at the env's next reset (a seeded reset then gives
exactly the game of a pool built with them; an unseeded one keeps ALE's sticky-action
stream going). The others (SHAPE_OPTIONS) are pool-wide, and a per-env value that differs
from the pool's is refused.
"""
from __future__ import annotations


import numpy as np
import gymnasium as gym

from cypool.atari import games
from cypool.errors import check_known_kwargs
from cypool._validate import (C_INT_END, MAX_ATARI_FRAME_SKIP, MAX_ATARI_NOOP_MAX,
                              MIN_ENV_BYTES, Interval, Options, check_discrete_actions,
                              check_kwarg, check_pool_memory, loop_count)
from cypool.atari.resize import make_plan
from cypool.atari._pool import AlePool, ENV_OPTIONS, INFO_COLUMNS, RAM_SIZE, screen_shape
from cypool._core.spec import (Built, EnvPoolNames, FamilySpec, InfoKey, Kwarg, NativeStep,
                              SpecFamily)

# EnvPool's Atari config (envpool/atari/atari_env.h, plus mode/difficulty of envpool 1.2.5),
# so that an EnvPool user switches by changing the import. ram_info is cypool's: EnvPool
# always puts the RAM in the info; here it costs 128 values per env and step, so it is asked
# for.
DEFAULTS = dict(
    stack_num=4, frame_skip=4, noop_max=30, episodic_life=False,
    zero_discount_on_life_loss=False, reward_clip=False, use_fire_reset=True, img_height=84,
    img_width=84, gray_scale=True, repeat_action_probability=0.0, full_action_space=False,
    use_inter_area_resize=True, mode=None, difficulty=None, ram_info=False, info_keys="cypool",
    screen_rows=None,
)
# The info key names of the raw reward and of the real game over, per info_keys.
INFO_NAMES = {"cypool": ("raw_reward", "game_over"), "envpool": ("reward", "terminated")}
# EnvPool's default time limit, in agent steps (108,000 frames at frame_skip 4).
MAX_EPISODE_STEPS = games.ENVPOOL_MAX_EPISODE_STEPS
BOOL_OPTIONS = ("episodic_life", "zero_discount_on_life_loss", "reward_clip", "use_fire_reset",
                "gray_scale", "full_action_space", "use_inter_area_resize", "ram_info")
# Options each env may set for itself; ENV_OPTIONS are the ones the pool holds in C
# (zero_discount_on_life_loss is accepted and changes nothing).
PER_ENV_OPTIONS = ENV_OPTIONS + ("zero_discount_on_life_loss",)
# Options that shape the observation buffers or the action set: the same for every env.
SHAPE_OPTIONS = ("stack_num", "img_height", "img_width", "gray_scale", "full_action_space",
                 "use_inter_area_resize", "ram_info", "info_keys", "screen_rows")
# The lines of ALE's screen EnvPool 1.2.5 resizes, whatever the game's (kRawHeight): the top
# 210 of a taller screen (Pacman's 250).
ENVPOOL_SCREEN_ROWS = 210
# Larger frames are refused: a stack of them per env would be a memory accident, not a choice.
MAX_IMG = 4096
_GAME_DEFAULT = "None or -1 is the game's default"
# Each option's kind, bounds included: complete_kwargs checks (and converts: np.int64 ->
# int, np.bool_ -> bool, a number -> float) every option by it before check_options.
# mode and difficulty: None, -1 or one of the game's (checked against its ROM at build).
OPTION_KINDS = dict(
    {k: "bool" for k in BOOL_OPTIONS},
    stack_num=Interval("int", 1, C_INT_END, closed="left"),     # a C int
    # loops one env's step / reset runs natively, where Ctrl-C cannot stop them
    frame_skip=loop_count(1, MAX_ATARI_FRAME_SKIP, "emulator frames per agent step"),
    noop_max=loop_count(0, MAX_ATARI_NOOP_MAX, "no-op frames a reset may play"),
    img_height=Interval("int", 1, MAX_IMG), img_width=Interval("int", 1, MAX_IMG),
    repeat_action_probability=Interval("number", 0.0, 1.0),
    mode=Interval("int", -1, None, note=_GAME_DEFAULT),
    difficulty=Interval("int", -1, None, note=_GAME_DEFAULT),
    # "any": a value that is no name is a ValueError, as any unknown name
    info_keys=Options(tuple(INFO_NAMES), kind="any"),
    # None (all) or at most the game's screen height (checked against its ROM at build)
    screen_rows=Interval("int", 1, MAX_IMG),
)


def merge_kwargs(env_id: str, kwargs: dict) -> dict:
    """Validate the options (TypeError for a wrong type or unknown name, ValueError for an
    impossible value) and return them merged over the defaults, as plain Python values."""
    check_known_kwargs(env_id, kwargs, DEFAULTS)
    return check_options({k: check_kwarg(env_id, k, kwargs.get(k, d), d, OPTION_KINDS[k])
                          for k, d in DEFAULTS.items()})


def check_options(kw: dict) -> dict:
    """The complete options ``kw``, each checked by its kind (OPTION_KINDS), normalised: mode
    and difficulty None become -1, the game's default (the spec's check_kwargs)."""
    kw = dict(kw)
    for k in ("mode", "difficulty"):
        if kw[k] is None:
            kw[k] = -1
    return kw


def _check_memory(env_id, num_envs, kw, raw_h, raw_w):
    """MemoryError before anything per env is built when the pool's frame stacks (and their
    final_ twins) and the two raw (raw_h, raw_w) screens each env max-pools cannot fit in
    this process (a lower bound: ALE's own state comes on top)."""
    channels = 1 if kw["gray_scale"] else 3
    stack = kw["stack_num"] * channels * kw["img_height"] * kw["img_width"]
    check_pool_memory(num_envs, MIN_ENV_BYTES + 2 * stack + 2 * raw_h * raw_w * channels,
                      f"{env_id} envs")


# ---------------------------------------------------------------------------- the spec
_SPECS: dict = {}
# EnvPool's own Atari options (envpool/atari/atari_env.h's config, in its order) for
# cypool.envpool: the same names as cypool's kwargs, mode/difficulty -1 for the default
ENVPOOL_CONFIG = dict(
    max_episode_steps=MAX_EPISODE_STEPS, stack_num=4, frame_skip=4, noop_max=30,
    zero_discount_on_life_loss=False, episodic_life=False, reward_clip=False,
    use_fire_reset=True, img_height=84, img_width=84, mode=-1, difficulty=-1,
    full_action_space=False, repeat_action_probability=0.0, use_inter_area_resize=True,
    gray_scale=True)


def _envpool_kwargs(task_id, cfg, pixels):
    """cypool's kwargs for EnvPool's options: the same, with EnvPool's info (its key names,
    the RAM) and frames (the top 210 lines of a taller screen)."""
    task = {k: v for k, v in cfg.items() if k != "max_episode_steps"}
    for k in ("mode", "difficulty"):
        task[k] = None if task[k] == -1 else task[k]
    task.update(ram_info=True, info_keys="envpool", screen_rows=ENVPOOL_SCREEN_ROWS)
    return task


def game_spec(env_id: str) -> FamilySpec:
    """The FamilySpec of Atari id ``env_id`` (``<Game>-v5``), built once."""
    spec = _SPECS.get(env_id)
    if spec is None:
        games.rom_of(env_id)                    # ValueError for an id that is no game
        kwargs = {k: Kwarg(v, kind=OPTION_KINDS[k],
                           scope="pool" if k in SHAPE_OPTIONS else "env")
                  for k, v in DEFAULTS.items()}
        spec = _SPECS[env_id] = FamilySpec(
            env_id, AlePool, gym.spaces.Box(0, 255, (1,), np.uint8), gym.spaces.Discrete(1),
            kwargs=kwargs, max_episode_steps=MAX_EPISODE_STEPS, check_kwargs=check_options,
            # gymnasium's AtariEnv metadata (it offers "human" too, which cypool does not)
            render=_render, render_modes=("rgb_array",), render_fps=30,
            envpool=EnvPoolNames(ids=(_ENVPOOL_SPELLING.get(env_id, env_id),),
                                 config=ENVPOOL_CONFIG, convert=_envpool_kwargs,
                                 fixed={"task": games.rom_of(env_id)}, info_all=True,
                                 family="Atari"),
            build=_build, configure=_configure, load_actions=_load_actions, seed=_seed,
            extra_info=_extra_info,
            # _load_actions checks indices in range; _extra_info's game masks
            native=NativeStep(actions=True, info_masks=(("_game_length", "game_length"),
                                                        ("_game_return", "game_length"))))
    return spec


# EnvPool 1.2.5's ids that spell a game otherwise than ale-py's ids (cypool.envpool serves
# EnvPool's spelling)
_ENVPOOL_SPELLING = {"TicTacToe3D-v5": "TicTacToe3d-v5"}


def AtariFamily(env_id, num_envs, num_threads, max_episode_steps, kwargs, member_kwargs=None):
    """The family of one Atari pool (a :class:`cypool.api.SpecFamily` of ``game_spec``).

    member_kwargs: None, or one dict per env of option overrides on top of kwargs
    (PER_ENV_OPTIONS only, in effect; a SHAPE_OPTIONS value that differs from kwargs' is a
    ValueError)."""
    return SpecFamily(game_spec(env_id), env_id, num_envs, num_threads, max_episode_steps,
                      kwargs, member_kwargs)


def _build(fam, num_envs, num_threads, max_episode_steps, env_kwargs):
    env_id, kw = fam.env_id, fam.kwargs
    rom = games.rom_of(env_id)
    path, rom_bytes = games.read_rom(rom)     # the pool loads these verified bytes
    # ALE's screen for this ROM (210 x 160 for most games, up to 250 lines): one ROM load
    # per game and process
    raw_h, raw_w = screen_shape(f"{rom}.bin", rom_bytes)
    rows = raw_h if kw["screen_rows"] is None else kw["screen_rows"]
    if rows > raw_h:
        raise ValueError(f"{env_id}: screen_rows={rows} is more than the {raw_h} lines of "
                         f"the game's screen")
    _check_memory(env_id, num_envs, kw, raw_h, raw_w)
    raw_reward, game_over = INFO_NAMES[kw["info_keys"]]
    info = [InfoKey("lives", np.int32, column=INFO_COLUMNS["lives"]),
            InfoKey(raw_reward, np.float32, column=INFO_COLUMNS["reward"]),
            InfoKey(game_over, np.int32, column=INFO_COLUMNS["terminated"]),
            InfoKey("elapsed_step", np.int32, column=INFO_COLUMNS["elapsed_step"])]
    if kw["info_keys"] != "envpool":    # EnvPool's info has no game score
        # on step rows; extra_info narrows their masks to the rows where a game ended
        info += [InfoKey("game_return", np.float64, on_reset=False,
                         column=INFO_COLUMNS["game_return"]),
                 InfoKey("game_length", np.int32, on_reset=False,
                         column=INFO_COLUMNS["game_length"])]
    width = INFO_COLUMNS["ram"]
    if kw["ram_info"]:
        info.append(InfoKey("ram", np.uint8, RAM_SIZE, column=INFO_COLUMNS["ram"]))
        width += RAM_SIZE
    h, w = kw["img_height"], kw["img_width"]
    plan = make_plan(rows, raw_w, h, w, kw["use_inter_area_resize"])
    engine = AlePool(path, num_envs, num_threads, max_episode_steps, kw, plan, width,
                     rom_bytes)
    channels = 1 if kw["gray_scale"] else 3
    # EnvPool's layout: frames oldest first; colour frames channel-first, so a stack of
    # 4 RGB frames is (12, H, W).
    obs_space = gym.spaces.Box(0, 255, (kw["stack_num"] * channels, h, w), np.uint8)
    return Built(engine, obs_space, gym.spaces.Discrete(engine.n_actions), tuple(info),
                 state=np.arange(num_envs, dtype=np.int32))


def _configure(fam, ids, kw):
    """Envs ``ids`` get the complete options ``kw``: frame_skip, reward_clip and
    episodic_life apply from each env's next step; noop_max and use_fire_reset from its
    next reset; a new repeat_action_probability, mode or difficulty reloads the ROM at its
    next reset (reset with a seed to get exactly the game of a pool built with them; mode
    and difficulty must be offered by the game). Episodes in progress are not restarted.
    Call between batches, with none of these envs in flight."""
    fam.engine.set_env_options(ids, {k: kw[k] for k in ENV_OPTIONS})


def _render(engine, ids, mode, kwargs):
    """render_mode="rgb_array": the (len(ids), H, 160, 3) uint8 screens of envs ids, ALE's
    whole screen (H = 210 for most games, up to 250; whatever screen_rows)."""
    return engine.render_rgb(np.ascontiguousarray(ids, np.int64))


def _seed(fam, i, seed):
    """ale-py's AtariEnv.seed_game(seed), so that env i seeded with s follows gymnasium's
    env reset with seed s: SeedSequence(s) -> (np_seed, ale_seed); the no-op generator is
    PCG64(SeedSequence(np_seed)) (gymnasium's seeding.np_random), ALE's random_seed is
    int32(ale_seed), applied by a ROM reload at env i's next reset. None: fresh entropy."""
    np_seed, ale_seed = np.random.SeedSequence(seed).generate_state(2)
    fam.engine.set_generator(i, np.random.PCG64(np.random.SeedSequence(int(np_seed))))
    fam.engine.set_ale_seed(i, int(ale_seed.astype(np.int32)))


def _load_actions(fam, actions, env_ids=None):
    """Validate action indices (rows for env_ids, or for every env) and copy them into C."""
    engine = fam.engine
    n = engine.num_envs if env_ids is None else len(env_ids)
    a = check_discrete_actions(actions, engine.n_actions, n, env_ids)
    engine.set_actions(a, env_ids)


def _extra_info(fam, info, kinds, ids):
    """EnvPool's info["env_id"] (int32) on every row that has info; game_return and
    game_length only on the rows where a game ended (the native loop writes a length of
    at least 1 there, 0 elsewhere)."""
    if "game_length" in info:
        ended = info["_game_length"] & (info["game_length"] > 0)
        info["_game_length"] = ended
        info["_game_return"] = ended.copy()
    mask = kinds != 0
    if mask.any():
        env_ids = fam.state if ids is None else np.asarray(ids, np.int32)
        info["env_id"] = np.where(mask, env_ids, 0).astype(np.int32)
        info["_env_id"] = mask
