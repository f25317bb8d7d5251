"""Rendering of the classic-control pools: gymnasium 1.4.0's own ``render()``, fed each env's
state (imported at the first render; stepping never touches it).

Each pool keeps, in its ``renderer`` slot, one gymnasium env of its id made with
``render_mode="rgb_array"``. To render env i the hook sets the attributes that env's
``render()`` reads, with the values *and numpy types* gymnasium's env would hold at that point
(its drawing does float32 arithmetic on a float32 state), then calls it: the frames are
gymnasium's pygame ``gfxdraw`` frames by construction.

- CartPole, MountainCar: ``state``, float64.
- Acrobot: ``state``; float32 right after a reset (gymnasium casts its reset draw), float64
  after a step.
- MountainCarContinuous: ``state``; float64 after a reset, float32 after a step (the pool's
  ``state_f32`` flag).
- Pendulum: ``state`` and ``last_u``: None right after a reset, else the env's last action
  clipped to [-2, 2] in the action's own dtype (float32 or float64, as the pool kept it).

"Right after a reset" is the engine's ``episode_length`` being 0: every reset (explicit or
autoreset, either autoreset mode) zeroes it and every step counts.
"""
from __future__ import annotations

import numpy as np
import gymnasium as gym
from gymnasium.error import DependencyNotInstalled

__all__ = ["render", "PYGAME_MISSING"]

PYGAME_MISSING = ('pygame is not installed: classic-control rgb_array rendering draws with it; '
                  'run `pip install "cypool[classic-control]"` (or `pip install pygame-ce`)')


class _Renderer:
    __slots__ = ("env",)

    def __init__(self, env):
        self.env = env


def _cartpole(env, engine, i):
    env.state = np.array(engine.states[i], np.float64)


_mountain_car = _cartpole


def _acrobot(env, engine, i):
    dtype = np.float32 if engine.episode_length[i] == 0 else np.float64
    env.state = np.array(engine.states[i], dtype)       # float32 values are exact doubles


def _mountain_car_continuous(env, engine, i):
    env.state = np.array(engine.states[i], np.float32 if engine.state_f32[i] else np.float64)


def _pendulum(env, engine, i):
    env.state = np.array(engine.states[i], np.float64)
    if engine.episode_length[i] == 0:
        env.last_u = None
    else:
        dtype = np.float32 if engine.act_f32[i] else np.float64
        # gymnasium: np.clip(u, -max_torque, max_torque)[0] of the action as given
        env.last_u = np.clip(np.array(engine.actions[i], dtype), -2.0, 2.0)[0]


_SETTERS = {"CartPole": _cartpole, "Acrobot": _acrobot, "MountainCar": _mountain_car,
            "MountainCarContinuous": _mountain_car_continuous, "Pendulum": _pendulum}


def _setter(env_id):
    return _SETTERS[env_id.split("-")[0]]


def render(env_id, engine, ids, mode, kwargs):
    """One ``(H, W, 3)`` uint8 frame per id, gymnasium's."""
    if mode != "rgb_array":
        raise ValueError(f"{env_id}: cannot render {mode!r} (only 'rgb_array')")
    r = engine.renderer
    if r is None:
        try:
            import pygame  # noqa: F401  (gymnasium imports it in render(); fail clearly first)
        except ImportError as exc:
            raise DependencyNotInstalled(f"{env_id}: {PYGAME_MISSING}") from exc
        env = gym.make(env_id, render_mode="rgb_array", disable_env_checker=True,
                       **kwargs).unwrapped
        r = engine.renderer = _Renderer(env)
    env, put = r.env, _setter(env_id)
    out = []
    for i in ids:
        put(env, engine, int(i))
        out.append(np.ascontiguousarray(env.render()))
    return out
