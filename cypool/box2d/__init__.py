"""Box2D: gymnasium 1.4.0's Box2D envs as nogil kernels on Box2D 2.3's C++ core
(LunarLander-v3, LunarLanderContinuous-v3), registered as family specs by
:mod:`cypool.box2d.registration`.

Exact: the same seeds (env i: ``PCG64(SeedSequence(seed + i))``) and actions give gymnasium's
observations, rewards, terminated, truncated and (empty) info dicts bit for bit, as
``gymnasium.make_vec(id, n, vectorization_mode="sync")`` on the ``box2d==2.3.10`` wheel:
the same Box2D C++ (from the box2d-py 2.3.8 sdist, built by buildtools/box2d_build.py with the
wheel's float behaviour: no FMA, no fast-math, the system libm), the same creation order of
bodies and fixtures, gymnasium's Python-double arithmetic and its numpy draws.

Not offered: rendering (``render_mode``), and saving an env's state (get_state, pickling:
refused with a TypeError, as a Box2D world has no exact serialisation).
"""
