"""References for the Atari tests: gymnasium's pipeline, a bare ale-py emulator, and numpy
resizes written from OpenCV's definitions (independently of cypool/atari/resize.py)."""
from __future__ import annotations

import functools
import math

import numpy as np
import gymnasium as gym


def gym_reference(game, n, *, noop_max, p, frame_skip=4, stack=4, size=(84, 84), gray=True,
                  mode=None, difficulty=None, render_mode=None):
    """The acceptance reference: SyncVectorEnv of FrameStackObservation(AtariPreprocessing(
    ALE/<game>-v5 with frameskip 1)). size is (height, width)."""
    import ale_py
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

    gym.register_envs(ale_py)
    h, w = size

    def make():
        e = gym.make(f"ALE/{game}-v5", frameskip=1, repeat_action_probability=p,
                     max_num_frames_per_episode=108000, mode=mode, difficulty=difficulty,
                     render_mode=render_mode)
        e = AtariPreprocessing(e, noop_max=noop_max, frame_skip=frame_skip, screen_size=(w, h),
                               grayscale_obs=gray)
        return FrameStackObservation(e, stack)

    return gym.vector.SyncVectorEnv([make] * n)


def as_gym_obs(obs, gray, stack):
    """cypool's (n, stack*C, H, W) to gymnasium's (n, stack, H, W[, 3])."""
    if gray:
        return obs
    n, _, h, w = obs.shape
    return obs.reshape(n, stack, 3, h, w).transpose(0, 1, 3, 4, 2)


def derived_seeds(seed):
    """ale-py's AtariEnv.seed_game: (numpy Generator for the no-ops, ALE random_seed)."""
    np_seed, ale_seed = np.random.SeedSequence(seed).generate_state(2)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(int(np_seed))))
    return rng, int(ale_seed.astype(np.int32))


def bare_ale(game_rom, ale_seed, p=0.0):
    import ale_py
    from ale_py.roms import get_rom_path

    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setFloat("repeat_action_probability", p)
    ale.setInt("random_seed", ale_seed)
    ale.loadROM(get_rom_path(game_rom))
    return ale


# --------------------------------------------------------------------------- resizes
@functools.lru_cache(maxsize=None)
def _axis_area_weights(src, dst):
    """Dense (dst, src) INTER_AREA weights: the overlap of destination cell d (of width
    1/(dst/src), clipped to the image) with source pixel s, over the cell width, in float32;
    OpenCV skips partial end pixels covering <= 1e-3."""
    scale = 1.0 / (dst / src)
    w = np.zeros((dst, src), np.float32)
    for d in range(dst):
        lo, hi = d * scale, d * scale + scale
        cell = min(scale, src - lo)
        for s in range(int(math.floor(lo)), min(int(math.ceil(hi)), src)):
            overlap = min(hi, s + 1.0) - max(lo, float(s))
            partial = s < lo or s + 1.0 > hi
            if overlap <= 0 or (partial and overlap <= 1e-3):
                continue
            w[d, s] = np.float32(min(overlap, cell) / cell)
    return w


def _integer(src, dst):
    scale = 1.0 / (dst / src)
    k = round(scale)
    return k if abs(scale - k) < np.finfo(np.float64).eps else None


def resize_area(img, h, w):
    """cv2.resize(img, (w, h), interpolation=INTER_AREA) for a 2-D uint8 image that shrinks."""
    sh, sw = img.shape
    ky, kx = _integer(sh, h), _integer(sw, w)
    if kx is not None and ky is not None:
        # OpenCV's integer-scale path: block sums; 2x2 rounds half up (its SIMD code)
        s = img.reshape(h, ky, w, kx).astype(np.int64).sum(axis=(1, 3))
        if (kx, ky) == (2, 2):
            return ((s + 2) >> 2).astype(np.uint8)
        v = np.rint(s.astype(np.float32) * np.float32(1.0 / (kx * ky)))
        return np.clip(v, 0, 255).astype(np.uint8)
    xi, xw = _taps(_axis_area_weights(sw, w))
    yi, yw = _taps(_axis_area_weights(sh, h))
    f = img.astype(np.float32)
    hs = np.zeros((sh, w), np.float32)
    for k in range(xi.shape[1]):            # float32 sums in source order, as OpenCV
        hs = hs + f[:, xi[:, k]] * xw[:, k]
    acc = np.zeros((h, w), np.float32)
    for k in range(yi.shape[1]):
        acc = acc + yw[:, k:k + 1] * hs[yi[:, k]]
    return np.clip(np.rint(acc), 0, 255).astype(np.uint8)


def _taps(dense):
    """The nonzero weights of each row of a dense (dst, src) matrix, in source order, padded
    with zero weights (adding 0.0f changes no float sum): (indices, weights)."""
    rows = [np.flatnonzero(r) for r in dense]
    width = max(len(r) for r in rows)
    idx = np.zeros((len(rows), width), np.int64)
    wts = np.zeros((len(rows), width), np.float32)
    for d, r in enumerate(rows):
        idx[d, :len(r)] = r
        idx[d, len(r):] = r[-1]
        wts[d, :len(r)] = dense[d, r]
    return idx, wts


def resize_linear(img, h, w):
    """OpenCV's INTER_LINEAR for uint8: half-pixel centres, 11-bit weights, and its vector
    code's vertical rounding."""
    def taps(src, dst):
        scale = 1.0 / (dst / src)
        f = ((np.arange(dst) + 0.5) * scale - 0.5).astype(np.float32)
        s = np.floor(f).astype(np.int64)
        f = (f - s.astype(np.float32)).astype(np.float32)
        f[s < 0] = 0
        s[s < 0] = 0
        end = s >= src - 1
        f[end] = 0
        s[end] = src - 1
        w0 = np.rint((np.float32(1) - f) * np.float32(2048)).astype(np.int64)
        w1 = np.rint(f * np.float32(2048)).astype(np.int64)
        return s, np.minimum(s + 1, src - 1), w0, w1

    x0, x1, a0, a1 = taps(img.shape[1], w)
    y0, y1, b0, b1 = taps(img.shape[0], h)
    im = img.astype(np.int64)
    hsum = im[:, x0] * a0 + im[:, x1] * a1
    v = ((hsum[y0] >> 4) * b0[:, None] >> 16) + ((hsum[y1] >> 4) * b1[:, None] >> 16)
    return np.clip((v + 2) >> 2, 0, 255).astype(np.uint8)


def resize_frame(img, h, w, inter_area=True):
    """A raw screen (210, 160) or (210, 160, 3) to cypool's channel-first (C, h, w)."""
    fn = resize_area if inter_area else resize_linear
    if img.ndim == 2:
        return fn(img, h, w)[None]
    return np.stack([fn(np.ascontiguousarray(img[:, :, c]), h, w) for c in range(3)])


# --------------------------------------------------------------------------- EnvPool reference
class EnvPoolRef:
    """One env with EnvPool's Atari semantics (envpool/atari/atari_env.h), in plain Python over
    a bare ale-py emulator and the numpy resizes above, seeded as ale-py seeds (the seeding
    cypool uses), with gymnasium's frame grabbing at a game over inside the frame skip (no
    grab of the terminal frame). NEXT_STEP autoreset is the caller's."""

    def __init__(self, game_rom, seed, *, stack_num=4, frame_skip=4, noop_max=30,
                 episodic_life=False, reward_clip=False, use_fire_reset=True, img_height=84,
                 img_width=84, gray_scale=True, repeat_action_probability=0.0,
                 full_action_space=False, use_inter_area_resize=True, max_episode_steps=27000,
                 zero_discount_on_life_loss=False):
        self.rng, ale_seed = derived_seeds(seed)
        self.ale = bare_ale(game_rom, ale_seed, repeat_action_probability)
        acts = self.ale.getLegalActionSet() if full_action_space else \
            self.ale.getMinimalActionSet()
        self.actions = [a.value for a in acts]
        self.fire = use_fire_reset and 1 in self.actions
        self.stack_num, self.frame_skip, self.noop_max = stack_num, frame_skip, noop_max
        self.episodic_life, self.reward_clip = episodic_life, reward_clip
        self.h, self.w, self.gray = img_height, img_width, gray_scale
        self.inter_area, self.max_steps = use_inter_area_resize, max_episode_steps
        self.life_lost, self.game_steps, self.lives, self.stack = False, 0, 0, None
        self.buf0 = self.buf1 = None

    def _grab(self):
        return self.ale.getScreenGrayscale() if self.gray else self.ale.getScreenRGB()

    def _push(self, push_all):
        frame = resize_frame(self.buf0, self.h, self.w, self.inter_area)
        if push_all:
            self.stack = [frame] * self.stack_num
        else:
            self.stack = self.stack[1:] + [frame]
        return np.concatenate(self.stack)

    def _info(self, reward, over):
        return dict(lives=self.lives, raw_reward=reward, game_over=int(over),
                    elapsed_step=self.game_steps)

    def reset(self):
        over = self.ale.game_over(with_truncation=False)
        soft = (self.episodic_life and self.life_lost and not over
                and self.game_steps < self.max_steps)
        if not soft:
            self.ale.reset_game()
            self.game_steps = 0
        self.life_lost = False
        push_all = not soft
        noops = int(self.rng.integers(1, self.noop_max + 1)) if self.noop_max > 0 else 0
        if self.fire and noops > 0:
            noops -= 1
        for _ in range(noops):
            self.ale.act(0)
            if self.ale.game_over(with_truncation=False):
                self.ale.reset_game()
                self.game_steps = 0
                push_all = True
        if self.fire:
            self.ale.act(1)
        self.buf0 = self._grab()
        self.buf1 = np.zeros_like(self.buf0)
        obs = self._push(push_all)
        self.lives = self.ale.lives()
        return obs, self._info(0.0, self.ale.game_over(with_truncation=False))

    def step(self, a):
        action = self.actions[a]
        reward, over = 0, False
        for t in range(self.frame_skip):
            reward += self.ale.act(action)
            over = self.ale.game_over(with_truncation=False)
            if over:
                break
            if t == self.frame_skip - 2:
                self.buf1 = self._grab()
            elif t == self.frame_skip - 1:
                self.buf0 = self._grab()
        if self.frame_skip > 1:
            self.buf0 = np.maximum(self.buf0, self.buf1)
        obs = self._push(False)
        lives = self.ale.lives()
        self.game_steps += 1
        life_loss = self.episodic_life and 0 < lives < self.lives
        trunc = self.game_steps >= self.max_steps
        term = (over or life_loss) and not trunc
        self.life_lost = life_loss and not over
        self.lives = lives
        rew = float(np.sign(reward)) if self.reward_clip else float(reward)
        return obs, rew, term, trunc, self._info(float(reward), over)


def run_against_envpool_ref(game, num_envs, steps, seed, *, num_threads=2, actions_seed=0,
                            **options):
    """Step cypool and one EnvPoolRef per env with the same actions (NEXT_STEP autoreset on
    both sides); assert every output equal; return counts of what happened."""
    import cypool
    from cypool.atari.games import rom_of

    max_steps = options.pop("max_episode_steps", 27000)
    env = cypool.make_vec(f"{game}-v5", num_envs, num_threads=num_threads,
                          max_episode_steps=max_steps, **options)
    refs = [EnvPoolRef(rom_of(f"{game}-v5"), seed + i, max_episode_steps=max_steps, **options)
            for i in range(num_envs)]
    stats = dict(term=0, trunc=0, game_over=0, life_loss=0)
    try:
        obs, info = env.reset(seed=seed)
        for i, ref in enumerate(refs):
            o, inf = ref.reset()
            assert np.array_equal(obs[i], o), f"reset obs env {i}"
            for k, v in inf.items():
                assert info[k][i] == v, f"reset info {k} env {i}"
        done = np.zeros(num_envs, bool)
        rng = np.random.default_rng(actions_seed)
        for t in range(steps):
            a = rng.integers(0, env.single_action_space.n, num_envs)
            obs, rew, term, trunc, info = env.step(a)
            for i, ref in enumerate(refs):
                if done[i]:
                    o, inf = ref.reset()
                    r, te, tr = 0.0, False, False
                else:
                    o, r, te, tr, inf = ref.step(int(a[i]))
                    stats["term"] += te
                    stats["trunc"] += tr
                    stats["game_over"] += inf["game_over"]
                    stats["life_loss"] += te and not inf["game_over"]
                where = f"env {i} step {t}"
                assert np.array_equal(obs[i], o), f"obs {where}"
                assert (rew[i], term[i], trunc[i]) == (r, te, tr), f"reward/flags {where}"
                for k, v in inf.items():
                    assert info[k][i] == v, f"info {k} {where}: {info[k][i]} != {v}"
                assert info["env_id"][i] == i
            done = term | trunc
        return stats
    finally:
        env.close()
