"""Toy text: gymnasium 1.4.0's toy-text envs as nogil kernels (FrozenLake-v1,
FrozenLake8x8-v1, Taxi-v4, CliffWalking-v1, CliffWalkingSlippery-v1, Blackjack-v1), built
only on cypool's public env API (:mod:`cypool.api`) and registered as family specs by
:mod:`cypool.toy_text.registration`.

Exact: the same seeds (env i: ``PCG64(SeedSequence(seed + i))``) and actions give gymnasium's
observations, rewards, terminated, truncated and info dicts (their dtypes included) bit for
bit, as ``gymnasium.make_vec(id, n, vectorization_mode="sync")``: the pools draw exactly
gymnasium's ``random()`` and ``choice``/``integers`` values from the same stream (see the pool
modules) and look transitions up in tables built as gymnasium builds its ``P``
(``_tables.py``).

Rendering: ``render_mode="rgb_array"`` (every id) and ``"ansi"`` (all but Blackjack, which
has none in gymnasium) give gymnasium's frames and strings exactly: ``render()`` returns one
``(H, W, 3)`` uint8 frame or one string per env (or per id of ``env_ids``), drawn by the
pool's one gymnasium env of its id fed each env's state (:mod:`cypool.toy_text._render`,
which also reproduces Taxi's orientation when only some steps are rendered). rgb_array needs
pygame: ``pip install "cypool[toy-text]"``; without it ``render()`` raises
``gymnasium.error.DependencyNotInstalled``. No display is needed. ``"human"`` is not offered.

Differences: a random FrozenLake map (``desc`` and ``map_name`` None) is refused, as
gymnasium draws it from OS entropy that no seed reproduces; so are probabilities outside
[0, 1] (``success_rate``, ``rainy_probability``, ``fickle_probability``; NaN included), which
gymnasium takes. ``set_state`` takes only states that play reaches
(:mod:`cypool.toy_text._states`), and a bust Blackjack hand is never stepped again.
"""
