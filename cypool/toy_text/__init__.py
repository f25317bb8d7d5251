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

Differences: a random FrozenLake map (``desc`` and ``map_name`` None) is refused, as
gymnasium draws it from OS entropy that no seed reproduces; rendering is not offered yet.
"""
