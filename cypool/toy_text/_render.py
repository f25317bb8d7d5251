"""Rendering of the toy-text pools: gymnasium 1.4.0's own ``render()``, fed each env's state.

Each pool keeps (in its ``renderer`` slot, built at the first render) one gymnasium env of
its id, made with the pool's kwargs and render mode. To render env i the hook sets the
attributes that env's ``render()`` reads from the pool's state row (FrozenLake, CliffWalking:
``s``, ``lastaction``; Taxi: also ``taxi_orientation``; Blackjack: the ``player`` and
``dealer`` hands, ``dealer_top_card_suit`` and ``dealer_top_card_value_str``), then calls it:
the frames and strings are gymnasium's by construction (its sprites, blits and text).

Taxi: gymnasium updates ``taxi_orientation`` only when it renders rgb_array (to the last
action if it was a move) and sets it to 0 at reset, so a frame after a pickup or dropoff
shows the orientation of the env's last *rendered* frame of the episode. The hook keeps that
per env (``_Renderer.shown``) and tells a reset since that frame from the engine's step and
episode-length counters, so sparse rendering (a video every k steps) matches too.

rgb_array needs pygame (``pip install "cypool[toy-text]"``); ansi does not (gymnasium's text
path imports no pygame). No display is needed: gymnasium draws rgb_array on a
``pygame.Surface``, and SDL falls back to its offscreen driver when there is no display.
"""
from __future__ import annotations

import numpy as np
import gymnasium as gym
from gymnasium.error import DependencyNotInstalled

__all__ = ["render_tabular", "render_taxi", "render_blackjack", "PYGAME_MISSING"]

PYGAME_MISSING = ('pygame is not installed: toy-text rgb_array rendering draws with it; run '
                  '`pip install "cypool[toy-text]"` (or `pip install pygame-ce`)')


class _Renderer:
    """One pool's gymnasium env, and Taxi's per-env memory of its last rendered frame."""

    __slots__ = ("mode", "env", "shown", "seen", "mark_steps", "mark_len")

    def __init__(self, mode, env, n):
        self.mode, self.env = mode, env
        self.shown = np.zeros(n, np.int64)       # taxi_orientation after env i's last frame
        self.seen = np.zeros(n, bool)            # env i has rendered an rgb_array frame
        self.mark_steps = np.zeros(n, np.int64)  # its env_steps then
        self.mark_len = np.zeros(n, np.int64)    # its episode_length then


def _renderer(engine, env_id, mode, kwargs):
    r = engine.renderer
    if r is None or r.mode != mode:
        if mode not in ("rgb_array", "ansi"):
            raise ValueError(f"{env_id}: cannot render {mode!r} (rgb_array or ansi)")
        if mode == "rgb_array":
            try:
                import pygame  # noqa: F401  (gymnasium imports it in render(); fail clearly first)
            except ImportError as exc:
                raise DependencyNotInstalled(f"{env_id}: {PYGAME_MISSING}") from exc
        env = gym.make(env_id, render_mode=mode, disable_env_checker=True,
                       **kwargs).unwrapped
        r = engine.renderer = _Renderer(mode, env, engine.num_envs)
    return r


def _frames(r, out):
    if r.mode == "rgb_array":
        return [np.ascontiguousarray(f) for f in out]
    return out


def _set_tabular(env, row):
    env.s = int(row[0])
    env.lastaction = None if row[1] < 0 else int(row[1])


def render_tabular(env_id, engine, ids, mode, kwargs):
    """FrozenLake, CliffWalking: state rows (s, lastaction)."""
    r = _renderer(engine, env_id, mode, kwargs)
    states = engine.states
    out = []
    for i in ids:
        _set_tabular(r.env, states[i])
        out.append(r.env.render())
    return _frames(r, out)


def render_taxi(env_id, engine, ids, mode, kwargs):
    """Taxi: state rows (s, lastaction, fickle_step, orientation); see the module note on
    the orientation."""
    r = _renderer(engine, env_id, mode, kwargs)
    env, states = r.env, engine.states
    steps, length = engine.env_steps, engine.episode_length
    out = []
    for i in ids:
        _set_tabular(env, states[i])
        if r.mode == "rgb_array":
            # no reset since env i's last frame iff its episode grew by exactly the steps it
            # took since (a reset zeroes episode_length; an autoreset step counts as a step).
            # The ambiguous case (that frame at episode_length 0, then a reset and no step)
            # showed orientation 0, as a reset sets.
            same = r.seen[i] and length[i] - r.mark_len[i] == steps[i] - r.mark_steps[i]
            env.taxi_orientation = int(r.shown[i]) if same else 0
            out.append(env.render())
            r.shown[i] = env.taxi_orientation
            r.seen[i] = True
            r.mark_steps[i], r.mark_len[i] = steps[i], length[i]
        else:
            out.append(env.render())
    return _frames(r, out)


def _hand(c0, c1, total, ace, n):
    """A card list with the hand's first two cards, raw sum and ace flag (all that
    gymnasium's _get_obs and render read of a hand)."""
    cards = [int(c0), int(c1)][:max(int(n), 0)]
    rest = int(total) - sum(cards)
    if ace and 1 not in cards:
        cards.append(1)
        rest -= 1
    if rest:
        cards.append(rest)
    return cards


def render_blackjack(env_id, engine, ids, mode, kwargs):
    """Blackjack: state rows (player c0, c1, sum, ace, n; dealer c0, c1, sum, ace, n; suit;
    face)."""
    r = _renderer(engine, env_id, mode, kwargs)
    env, states = r.env, engine.states
    out = []
    for i in ids:
        row = [int(x) for x in states[i]]
        env.player = _hand(*row[0:5])
        env.dealer = _hand(*row[5:10])
        top, suit, face = row[5], row[10], row[11]
        if top == 1:
            value = "A"
        elif top == 10:
            if not 0 <= face < 3:
                raise RuntimeError(f"{env_id}: env {int(i)}'s state shows a 10 without a face "
                                   "card (a state set by hand?); cannot render it")
            value = "JQK"[face]
        else:
            value = str(top)
        env.dealer_top_card_value_str = value
        env.dealer_top_card_suit = "CDHS"[suit]
        out.append(env.render())
    return _frames(r, out)
