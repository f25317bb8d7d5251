"""cypool.envpool envs' xla(): EnvPool's (handle, recv, send, step) contract (env_type "gym"
and "gymnasium" are one class in EnvPool 1.2.5, both the 5-tuple), bit-identical to the
mirror's own Python step, in sync and async mode."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cypool.envpool as ep
from _xla_helpers import assert_same, x64


def _actions(env, rng, t):
    sp = env.action_space
    if sp.dtype.kind == "f":
        return rng.uniform(-1, 1, (t, env.num_envs) + sp.shape).astype(sp.dtype)
    return rng.integers(0, sp.n, (t, env.num_envs)).astype(np.int32)


@pytest.mark.parametrize("task,env_type", [("CartPole-v1", "gym"), ("Pong-v5", "gymnasium"),
                                           ("Hopper-v5", "gym")])
def test_envpool_sync_scan_matches_python(task, env_type):
    with x64():             # EnvPool's MuJoCo actions and observations are float64
        env = ep.make(task, env_type, num_envs=3, seed=5, num_threads=2)
        ref = ep.make(task, env_type, num_envs=3, seed=5, num_threads=2)
        env.reset(), ref.reset()
        acts = _actions(env, np.random.default_rng(0), 50)
        handle, recv, send, step = env.xla()

        def body(h, a):
            return step(h, a)
        _, outs = jax.jit(lambda h, A: jax.lax.scan(body, h, A))(handle, acts)
        outs = jax.device_get(outs)
        py = [ref.step(a) for a in acts]
        assert_same(outs, py)
        # EnvPool's keys, no masks (and MuJoCo's warning count, which only some steps have)
        assert set(outs[4]) - {"mujoco_warnings"} == set(py[0][4])
        assert np.array_equal(outs[4]["players"]["env_id"][0], np.arange(3))
        env.close(), ref.close()


def test_envpool_async_recv_send_loop():
    # EnvPool's documented loop: async_reset, recv, then send with info["env_id"]
    env = ep.make("CartPole-v1", "gym", num_envs=6, batch_size=3, num_threads=1, seed=0)
    ref = ep.make("CartPole-v1", "gym", num_envs=6, batch_size=3, num_threads=1, seed=0)
    handle, recv, send, step = env.xla()
    env.async_reset(), ref.async_reset()

    @jax.jit
    def loop(h):
        h, (o, r, te, tr, info) = recv(h)

        def body(c, _):
            h, ids = c
            h = send(h, (ids % 2).astype(jnp.int32), ids)
            h, (o, r, te, tr, info) = recv(h)
            return (h, info["env_id"]), (o, r, te, tr, info["env_id"])
        return jax.lax.scan(body, (h, info["env_id"]), None, length=40)[1]
    o, r, te, tr, ids = jax.device_get(loop(handle))
    # one worker thread and a fixed send order: the arrival order is the Python path's too
    _, _, _, _, info = ref.recv()
    pid = info["env_id"]
    for t in range(40):
        ref.send((pid % 2).astype(np.int32), pid)
        po, pr, pte, ptr, info = ref.recv()
        pid = info["env_id"]
        if not np.array_equal(pid, ids[t]):
            pytest.fail(f"arrival order differs at step {t}: {pid} vs {ids[t]}")
        assert np.array_equal(po.astype(np.float32), o[t]) and np.array_equal(pr, r[t])
        assert np.array_equal(pte, te[t]) and np.array_equal(ptr, tr[t])
    env.close(), ref.close()
