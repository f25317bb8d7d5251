"""env.xla() on CartPole-v1 (sync): a jitted lax.scan / fori_loop of step, send and recv is
bit-identical to the Python path, and the handle orders every call."""
import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cypool
from _xla_helpers import assert_same, python_steps, scan_steps

T = 120      # CartPole episodes end (and autoreset) within this many random steps


def _pair(num_envs, num_threads, seed, **kw):
    env = cypool.make_vec("CartPole-v1", num_envs=num_envs, num_threads=num_threads, **kw)
    ref = cypool.make_vec("CartPole-v1", num_envs=num_envs, num_threads=num_threads, **kw)
    env.reset(seed=seed)
    ref.reset(seed=seed)
    return env, ref


@pytest.mark.parametrize("num_envs,num_threads,seed", [(4, 1, 0), (16, 2, 7), (3, 2, 123)])
def test_cartpole_scan_step_matches_python(num_envs, num_threads, seed):
    env, ref = _pair(num_envs, num_threads, seed)
    acts = np.random.default_rng(seed).integers(0, 2, (T, num_envs)).astype(np.int32)
    handle, recv, send, step = env.xla()
    outs = scan_steps(step, handle, acts)
    py = python_steps(ref, acts)
    assert any(np.any(p[2]) for p in py)          # episodes ended, so autoreset was covered
    assert_same(outs, py)
    assert np.array_equal(outs[4]["env_id"][5], np.arange(num_envs))
    # the env stays usable from Python, in step with the reference
    a = acts[0]
    assert np.array_equal(env.step(a)[0], ref.step(a)[0])
    env.close(), ref.close()


def test_cartpole_send_recv_in_scan_and_fori_loop():
    env, ref = _pair(5, 2, 3)
    acts = np.random.default_rng(1).integers(0, 2, (60, 5)).astype(np.int32)
    handle, recv, send, step = env.xla()

    def body(h, a):
        h = send(h, a)
        return recv(h)
    _, outs = jax.jit(lambda h, A: jax.lax.scan(body, h, A))(handle, acts)
    assert_same(jax.device_get(outs), python_steps(ref, acts))

    # fori_loop carrying only the handle and an accumulator: every step still runs
    def loop(h):
        def f(t, c):
            h, s = c
            h, (o, r, te, tr, info) = step(h, jnp.asarray(acts)[t])
            return h, s + r.sum()
        return jax.lax.fori_loop(0, 60, f, (h, 0.0))
    h, total = jax.jit(loop)(handle)
    py = python_steps(ref, acts)
    assert float(total) == pytest.approx(sum(float(p[1].sum()) for p in py))
    assert np.array_equal(env.step(acts[0])[0], ref.step(acts[0])[0])
    env.close(), ref.close()


def test_unused_results_still_step():
    # results thrown away: XLA must neither drop (DCE) nor merge (CSE) the calls
    env, ref = _pair(4, 1, 0)
    handle, recv, send, step = env.xla()
    a = np.ones(4, np.int32)

    @jax.jit
    def three(h):
        h, _ = step(h, a)
        h, _ = step(h, a)
        h, _ = step(h, a)
        return h
    jax.block_until_ready(three(handle))
    for _ in range(3):
        ref.step(a)
    assert np.array_equal(env.step(a)[0], ref.step(a)[0])
    env.close(), ref.close()


def test_eager_calls_match_python():
    env, ref = _pair(4, 2, 9)
    handle, recv, send, step = env.xla()
    a = np.array([0, 1, 1, 0], np.int32)
    h, (o, r, te, tr, info) = step(handle, a)
    po, pr, pte, ptr, pinfo = ref.step(a)
    assert np.array_equal(np.asarray(o), po) and np.array_equal(np.asarray(r), pr)
    assert np.array_equal(np.asarray(te), pte) and np.array_equal(np.asarray(tr), ptr)
    assert np.array_equal(np.asarray(info["env_id"]), np.arange(4))
    assert np.asarray(h).dtype == np.uint8 and np.asarray(h).shape == (8,)
    env.close(), ref.close()


def test_two_envs_two_handles_do_not_mix():
    a_env, a_ref = _pair(3, 1, 1)
    b_env, b_ref = _pair(3, 1, 2)
    ha, _, _, step_a = a_env.xla()
    hb, _, _, step_b = b_env.xla()
    acts = np.random.default_rng(5).integers(0, 2, (30, 3)).astype(np.int32)

    def body(c, a):
        ha, hb = c
        ha, oa = step_a(ha, a)
        hb, ob = step_b(hb, 1 - a)
        return (ha, hb), (oa, ob)
    _, (oa, ob) = jax.jit(lambda c, A: jax.lax.scan(body, c, A))((ha, hb), acts)
    assert_same(jax.device_get(oa), python_steps(a_ref, acts))
    assert_same(jax.device_get(ob), python_steps(b_ref, 1 - acts))
    for e in (a_env, a_ref, b_env, b_ref):
        e.close()


def test_native_and_python_routes_agree():
    # step without env_id takes the native nogil step; with env_id (here every env, in
    # order) the env's Python step: both equal the Python path
    env, ref = _pair(6, 2, 4)
    handle, recv, send, step = env.xla()
    assert step.adapter.native is not None
    acts = np.random.default_rng(3).integers(0, 2, (80, 6)).astype(np.int32)
    ids = jnp.arange(6, dtype=jnp.int32)

    def body(h, a):
        h, o1 = step(h, a)
        h, o2 = step(h, 1 - a, ids)
        return h, (o1, o2)
    _, (o1, o2) = jax.jit(lambda h, A: jax.lax.scan(body, h, A))(handle, acts)
    py1, py2 = [], []
    for a in acts:
        py1.append(ref.step(a))
        py2.append(ref.step(1 - a, np.arange(6)))
    assert_same(jax.device_get(o1), py1)
    assert_same(jax.device_get(o2), py2)
    env.close(), ref.close()


@pytest.mark.parametrize("env_id", ["Pendulum-v1", "MountainCarContinuous-v0", "Taxi-v4"])
def test_other_families_python_route(env_id):
    # Box envs outside MuJoCo check more in set_actions: they take the Python route
    env = cypool.make_vec(env_id, 4, num_threads=2)
    ref = cypool.make_vec(env_id, 4, num_threads=2)
    env.reset(seed=2), ref.reset(seed=2)
    sp = env.single_action_space
    rng = np.random.default_rng(0)
    if isinstance(sp, gym.spaces.Discrete):
        acts = rng.integers(0, sp.n, (60, 4)).astype(np.int32)
    else:
        acts = rng.uniform(sp.low, sp.high, (60, 4) + sp.shape).astype(np.float32)
    handle, recv, send, step = env.xla()
    assert_same(scan_steps(step, handle, acts), python_steps(ref, acts), cast=True)
    env.close(), ref.close()
