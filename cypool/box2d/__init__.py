"""Box2D: gymnasium 1.4.0's Box2D envs as nogil kernels on Box2D 2.3's C++ core
(LunarLander-v3, LunarLanderContinuous-v3, BipedalWalker-v3, BipedalWalkerHardcore-v3,
CarRacing-v3),
registered as family specs by :mod:`cypool.box2d.registration`.

Exact: the same seeds (env i: ``PCG64(SeedSequence(seed + i))``) and actions give gymnasium's
observations, rewards, terminated, truncated and (empty) info dicts bit for bit, as
``gymnasium.make_vec(id, n, vectorization_mode="sync")`` on the ``box2d==2.3.10`` wheel:
the same Box2D C++ (from the box2d-py 2.3.8 sdist, built once into a cached static library by
buildtools/box2d_build.py, with the wheel's float behaviour: no FMA, no fast-math, the system
libm), the same creation and destruction order of bodies and fixtures (LunarLander: a new
world per reset; BipedalWalker: one world per env for its lifetime, as gymnasium's), pybox2d's
Python-side defaults (a revolute joint's referenceAngle), gymnasium's Python-double arithmetic
(and numpy float32 arithmetic where NEP 50 gives it: BipedalWalker's reward with float32
actions) and its numpy draws. Stepping needs no pybox2d and no SWIG.

Actions: LunarLanderContinuous takes NaN and inf (gymnasium clips them: inf is full power,
NaN fires no engine); BipedalWalker takes inf (full torque) and refuses NaN (gymnasium would
set NaN motor speeds); out-of-range discrete actions are refused before any env moves.

CarRacing's observation is its 96 x 96 frame, drawn in the kernel by cypool's own
rasterisers of the pygame-ce calls gymnasium makes (_cr_gfx.h, _cr_draw.h, _cr_text.h,
_cr_smoothscale.h; docs/box2d.md), on a canvas per thread slot; NaN actions are refused,
infinite ones taken (gymnasium clips gas; steering and braking saturate).

Rendering: ``render_mode="rgb_array"`` frames are gymnasium's: its own ``render()`` draws a
stand-in fed each env's state (:mod:`cypool.box2d._render`; LunarLander's particles are made
in the pools' worlds when a render mode is set, as gymnasium makes them). It needs pygame and,
for gymnasium's renderer module, pybox2d (``gymnasium[box2d]``). ``"human"`` is not offered.

Not offered: saving an env's state (get_state, pickling, deepcopy: a TypeError says why: a
Box2D world has no exact serialisation).
"""
