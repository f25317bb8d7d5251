"""cypool.envpool.make_dm (issue #45 item 6): EnvPool 1.2.5's dm_env interface, checked
against the installed EnvPool (field names, dtypes, shapes, StepType and discount rules),
its values those of the same cypool.envpool gymnasium env, and the three functions of
EnvPool's examples/xla_step.py run through cypool.envpool."""
import sys
from pathlib import Path

import numpy as np
import pytest

import cypool.envpool as cep

sys.path.insert(0, str(Path(__file__).parent))
from _envpool_ref import real_envpool  # noqa: E402

dm_env = pytest.importorskip("dm_env")


def _leaves(tree, path="ts"):
    """{path: (dtype, shape)} of a TimeStep's leaves, namedtuple field names in order."""
    if hasattr(tree, "_fields"):
        out = {f"{path}:{type(tree).__name__}": tuple(tree._fields)}
        for f in tree._fields:
            out.update(_leaves(getattr(tree, f), f"{path}.{f}"))
        return out
    a = np.asarray(tree)
    return {path: (a.dtype, a.shape)}


def _spec_leaves(spec, path="spec"):
    if hasattr(spec, "_fields"):
        out = {f"{path}:{type(spec).__name__}": tuple(spec._fields)}
        for f in spec._fields:
            out.update(_spec_leaves(getattr(spec, f), f"{path}.{f}"))
        return out
    # the spec class for the observation and action (Box: BoundedArray, Discrete:
    # DiscreteArray); an info key's is a BoundedArray of its dtype's range (EnvPool's Atari
    # "terminated" is a DiscreteArray(2): cypool's info keys carry no such bounds)
    kind = type(spec).__name__ if path.endswith((".obs", "spec", ".position",
                                                 ".velocity")) else ""
    return {path: (kind, spec.name, spec.dtype, tuple(spec.shape))}


def eval_path(ts, path):
    """The leaf of a TimeStep at a _leaves() path ("ts.observation.obs")."""
    for f in path.split(".")[1:]:
        ts = getattr(ts, f)
    return ts


def _zeros(env, n):
    spec = env.action_spec()
    return np.zeros((n,) + spec.shape, spec.dtype)


@pytest.mark.parametrize("task", ["CartPole-v1", "Pong-v5", "CheetahRun-v1", "Taxi-v3"])
def test_the_layout_of_envpools_timesteps(task):
    ours = cep.make_dm(task, num_envs=3)
    theirs = real_envpool().make_dm(task, num_envs=3)
    try:
        assert isinstance(ours, dm_env.Environment)
        assert "DMEnvPool(" in repr(ours)
        assert len(ours) == len(theirs) == 3 and ours.is_async == theirs.is_async
        assert np.array_equal(ours.all_env_ids, theirs.all_env_ids)
        assert _spec_leaves(ours.observation_spec()) == _spec_leaves(theirs.observation_spec())
        assert _spec_leaves(ours.action_spec()) == _spec_leaves(theirs.action_spec())
        for a, b in ((ours.reset(), theirs.reset()),
                     (ours.step(_zeros(ours, 3)), theirs.step(_zeros(theirs, 3))),
                     (ours.reset(np.array([2, 0])), theirs.reset(np.array([2, 0])))):
            assert isinstance(a, dm_env.TimeStep)
            assert _leaves(a) == _leaves(b)
            for x, y in ((a.step_type, b.step_type), (a.discount, b.discount),
                         (a.observation.env_id, b.observation.env_id),
                         (a.observation.players.env_id, b.observation.players.env_id)):
                assert np.array_equal(x, y)
    finally:
        ours.close(), theirs.close()


def _rule(ts, term, trunc, first, truncation_discount):
    """EnvPool's step_type and discount from the gym flags of the same step."""
    want_type = np.where(first, 0, np.where(term | trunc, 2, 1))
    want_disc = np.where(term, 0.0, np.where(trunc, truncation_discount, 1.0))
    return np.array_equal(ts.step_type, want_type) and np.array_equal(ts.discount, want_disc)


@pytest.mark.parametrize("task,trunc_discount,limit,steps",
                         [("CartPole-v1", 0.0, 12, 30), ("CheetahRun-v1", 1.0, 4, 10),
                          ("Hopper-v5", 0.0, 25, 50)])
def test_step_type_and_discount_follow_envpools_rule(task, trunc_discount, limit, steps):
    """The rule holds on real EnvPool's make_dm vs its make_gym, and on cypool's (whose
    values are those of its gymnasium env, bit for bit)."""
    rng = np.random.default_rng(1)
    ep = real_envpool()
    for mod in (ep, cep):
        dm = mod.make_dm(task, num_envs=4, max_episode_steps=limit, seed=3)
        gy = mod.make_gymnasium(task, num_envs=4, max_episode_steps=limit, seed=3)
        try:
            ts, (obs, info) = dm.reset(), gy.reset()
            no = np.zeros(4, bool)
            assert _rule(ts, no, no, ~no, trunc_discount)
            spec = dm.action_spec()
            seen = set()
            for _ in range(steps):
                if spec.dtype.kind == "i":
                    a = rng.integers(0, spec.num_values, 4).astype(spec.dtype)
                    a[0] = 1                # pushed one way: CartPole falls (terminates)
                else:
                    a = rng.uniform(-1, 1, (4,) + spec.shape).astype(spec.dtype)
                ts = dm.step(a)
                obs, rew, term, trunc, info = gy.step(a)
                assert _rule(ts, term, trunc, info["elapsed_step"] == 0, trunc_discount)
                seen |= {(bool(x), bool(y)) for x, y in zip(term, trunc)}
                assert np.array_equal(ts.reward, rew) and ts.reward.dtype == np.float32
                if mod is cep:      # the same engine and seeds: the same numbers
                    if isinstance(obs, dict):
                        for k in obs:
                            assert np.array_equal(getattr(ts.observation, k), obs[k])
                    else:
                        assert np.array_equal(ts.observation.obs, obs)
                    for k in info:
                        if k not in ("players", "elapsed_step"):
                            assert np.array_equal(getattr(ts.observation, k), info[k]), k
            assert (False, True) in seen        # a truncation was checked
            if task != "CheetahRun-v1":
                assert (True, False) in seen
        finally:
            dm.close(), gy.close()


def test_async_send_recv_and_make_env_type_dm():
    env = cep.make("CartPole-v1", env_type="dm", num_envs=4, batch_size=2)
    ref = real_envpool().make("CartPole-v1", env_type="dm", num_envs=4, batch_size=2)
    try:
        assert env.is_async
        for e in (env, ref):
            e.async_reset()
        a, b = env.recv(), ref.recv()
        assert _leaves(a) == _leaves(b) and np.array_equal(a.step_type, [0, 0])
        env.send(np.zeros(2, np.int32), a.observation.env_id)
        a = env.recv()
        assert a.observation.env_id.shape == (2,) and set(a.step_type.tolist()) <= {0, 1}
    finally:
        env.close(), ref.close()


def test_make_dm_refuses_what_make_gymnasium_refuses():
    with pytest.raises(TypeError, match="unexpected keyword"):
        cep.make_dm("CartPole-v1", bogus=1)
    with pytest.raises(ValueError):
        cep.make_dm("NotAnEnv-v9")
    with pytest.raises(ValueError, match="env_type"):
        cep.make("CartPole-v1", env_type="dmx")


# ---------------------------------------------------------------- examples/xla_step.py
# EnvPool's example's three functions (read from its repository; written here against
# `envpool` = cypool.envpool), run as the example runs them: jitted fori_loops of 100 steps.
def _policy(jnp, states):
    return jnp.zeros(states.shape[0], dtype=jnp.int32)


def test_xla_step_example_dm_sync_step():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    env = cep.make_dm("Pong-v5", num_envs=4)
    handle, recv, send, step = env.xla()

    def actor_step(i, loop_var):
        handle0, states = loop_var
        handle1, new_states = step(handle0, _policy(jnp, states.observation.obs))
        return handle1, new_states

    states = env.reset()
    handle, out = jax.jit(lambda n, v: jax.lax.fori_loop(0, n, actor_step, v))(
        100, (handle, states))
    assert isinstance(out, dm_env.TimeStep) and type(out.observation).__name__ == "State"
    ref = real_envpool().make_dm("Pong-v5", num_envs=4)
    rh, _, _, rstep = ref.xla()
    _, rout = rstep(rh, jnp.zeros(4, jnp.int32))
    assert _leaves(out) == _leaves(rout)        # EnvPool's xla() layout (jax's dtypes)
    # and the values of the same env stepped in Python
    twin = cep.make_dm("Pong-v5", num_envs=4)
    twin.reset()
    for _ in range(100):
        want = twin.step(np.zeros(4, np.int32))
    jax.block_until_ready(out)
    for k in _leaves(want):
        if ":" not in k:
            assert np.array_equal(np.asarray(eval_path(out, k)), eval_path(want, k)), k
    env.close(), twin.close(), ref.close()


def test_xla_step_example_async_step():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    env = cep.make_dm("Pong-v5", num_envs=8, batch_size=4)
    handle, recv, send, step = env.xla()

    def actor_step(i, loop_var):
        handle0, states = loop_var
        action = _policy(jnp, states.observation.obs)
        handle1 = send(handle0, action, states.observation.env_id)
        handle1, new_states = recv(handle0)
        return handle1, new_states

    env.async_reset()
    handle, states = recv(handle)
    assert np.array_equal(states.step_type, [0, 0, 0, 0])
    handle, out = jax.jit(lambda n, v: jax.lax.fori_loop(0, n, actor_step, v))(
        100, (handle, states))
    ids = np.asarray(out.observation.env_id)
    assert ids.shape == (4,) and len(set(ids.tolist())) == 4 and ids.max() < 8
    assert set(np.asarray(out.step_type).tolist()) <= {0, 1, 2}
    env.close()


def test_xla_step_example_gym_sync_step():
    """The example's gym function is written for EnvPool's old gym API (reset() -> obs,
    a 4-tuple step): it fails on EnvPool 1.2.5 itself, and on cypool.envpool the same way;
    with 1.2.5's (obs, info) reset and 5-tuple step it runs."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    results = []
    for mod in (real_envpool(), cep):
        env = mod.make_gym("Pong-v5", num_envs=4)
        handle, recv, send, step = env.xla()
        with pytest.raises(AttributeError, match="'tuple' object has no attribute 'shape'"):
            _policy(jnp, env.reset())               # the example's `policy(env.reset())`

        def actor_step(i, loop_var):
            handle0, states = loop_var
            handle1, (new_states, rew, term, trunc, info) = step(handle0,
                                                                  _policy(jnp, states))
            return handle1, new_states

        states, _ = env.reset()
        _, out = jax.jit(lambda n, v: jax.lax.fori_loop(0, n, actor_step, v))(
            100, (handle, states))
        results.append(np.asarray(out))
        env.close()
    assert results[0].shape == results[1].shape and results[0].dtype == results[1].dtype


# one id of each kind of env cypool.envpool serves: MuJoCo v5/v4, Atari, classic control,
# toy text (Discrete and Blackjack's Box observations), Box2D, dm_control (Dict observations)
KINDS = ["Hopper-v5", "Ant-v4", "Breakout-v5", "CartPole-v0", "MountainCarContinuous-v0",
         "Acrobot-v1", "FrozenLake8x8-v1", "tabular/CliffWalking-v0", "Blackjack-v1",
         "LunarLanderContinuous-v2", "CarRacing-v2", "WalkerWalk-v1", "FishSwim-v1"]


@pytest.mark.parametrize("task", KINDS)
def test_every_kind_of_id_converts_its_gymnasium_env(task):
    """State = env_id, players, the observation (or a Dict's keys), the gymnasium env's
    info keys less elapsed_step; every value that env's for the same seed and actions;
    observation_spec() describes one row of each."""
    dm = cep.make_dm(task, num_envs=2, seed=7)
    gy = cep.make_gymnasium(task, num_envs=2, seed=7)
    try:
        spec = dm.action_spec()
        space = gy.action_space
        if hasattr(space, "n"):         # EnvPool's int32 DiscreteArray
            assert spec.num_values == space.n and spec.dtype == np.int32
        else:
            assert spec.shape == space.shape and spec.dtype == space.dtype
        outs = [(dm.reset(), gy.reset())]
        a = np.zeros((2,) + spec.shape, spec.dtype)
        outs += [(dm.step(a), gy.step(a)) for _ in range(2)]
        for ts, res in outs:
            obs, info = res[0], res[-1]
            keys = list(obs) if isinstance(obs, dict) else ["obs"]
            extra = [k for k in info if k not in ("env_id", "players", "elapsed_step")]
            assert ts.observation._fields == ("env_id", "players", *keys, *extra)
            got = ts.observation
            for k in keys:
                assert np.array_equal(getattr(got, k), obs[k] if keys != ["obs"] else obs)
            for k in extra + ["env_id"]:
                assert np.array_equal(getattr(got, k), info[k])
            assert np.array_equal(got.players.env_id, info["players"]["env_id"])
            if len(res) == 5:
                assert np.array_equal(ts.reward, res[1])
            ospec = dm.observation_spec()
            for f in ospec._fields:
                if f == "players":
                    continue
                v, s = np.asarray(getattr(got, f)), getattr(ospec, f)
                assert v.dtype == s.dtype and v.shape[1:] == tuple(s.shape), f
    finally:
        dm.close(), gy.close()


@pytest.mark.parametrize("task,limit", [("WalkerWalk-v1", 3), ("CartPole-v1", 4)])
def test_xla_timesteps_are_the_python_paths(task, limit):
    """xla()'s step through a jitted scan, across truncations (dm_control's discount 1,
    EnvPool's 0), equals make_dm's Python step (values cast to jax's 32-bit dtypes)."""
    jax = pytest.importorskip("jax")
    env = cep.make_dm(task, num_envs=2, max_episode_steps=limit)
    twin = cep.make_dm(task, num_envs=2, max_episode_steps=limit)
    try:
        handle, recv, send, step = env.xla()
        env.reset(), twin.reset()
        spec = env.action_spec()
        acts = np.zeros((2 * limit + 1, 2) + spec.shape, spec.dtype)

        def body(h, a):
            return step(h, a)
        _, outs = jax.jit(lambda h, A: jax.lax.scan(body, h, A))(handle, acts)
        outs = jax.device_get(jax.block_until_ready(outs))
        assert isinstance(outs, dm_env.TimeStep)
        assert type(outs.observation).__name__ == "State"
        for t, a in enumerate(acts):
            want = twin.step(a)
            flat_w = _leaves(want)
            for path in flat_w:
                if ":" in path:
                    continue
                got = np.asarray(eval_path(outs, path))[t]
                w = np.asarray(eval_path(want, path))
                assert np.array_equal(got, w.astype(got.dtype)), (t, path)
        last = np.asarray(outs.step_type) == 2
        assert last.any()
        disc = 1.0 if task.startswith("Walker") else 0.0
        assert (np.asarray(outs.discount)[last] == disc).all()
    finally:
        env.close(), twin.close()


def test_without_dm_env_make_dm_says_what_to_install(monkeypatch):
    import cypool._envpool_dm as dm_mod
    monkeypatch.setattr(dm_mod, "_CLASS", None)
    monkeypatch.setitem(sys.modules, "dm_env", None)        # `import dm_env` fails
    with pytest.raises(ImportError, match="pip install dm-env"):
        cep.make_dm("CartPole-v1")
    cep.make_gymnasium("CartPole-v1").close()               # the gymnasium API needs none
