"""env.xla()'s errors: a failing env inside a jitted step, closed and collected envs, bad
actions (refused at trace time, before any env moves), and no jax installed."""
import gc
import os
import subprocess
import sys

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cypool
from cypool.xla import XlaCallError, _build

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _env(n=4, **kw):
    env = cypool.make_vec("CartPole-v1", num_envs=n, num_threads=1, **kw)
    env.reset(seed=0)
    return env


def _same_as_fresh(env, steps_taken=0):
    """env's next step equals a fresh env's after steps_taken steps of action 0: nothing
    else moved it."""
    ref = _env(env.num_envs)
    a = np.zeros(env.num_envs, np.int32)
    for _ in range(steps_taken):
        ref.step(a)
    assert np.array_equal(env.step(a)[0], ref.step(a)[0])
    ref.close()


def test_engine_failure_in_jitted_step_names_env(tmp_path):
    src = open(os.path.join(os.path.dirname(gym.__file__), "envs/mujoco/assets/ant.xml")).read()
    xml = tmp_path / "ant.xml"
    xml.write_text(src.replace('<mujoco model="ant">', '<mujoco model="ant"><size memory="12K"/>'))
    env = cypool.make_vec("Ant-v5", 3, num_threads=2, xml_file=str(xml))
    env.reset(seed=0)
    handle, recv, send, step = env.xla()
    run = jax.jit(lambda h: jax.lax.scan(lambda h, a: step(h, a), h,
                                         jnp.zeros((50, 3, 8), jnp.float32)))
    with pytest.raises(jax.errors.JaxRuntimeError) as err:
        jax.block_until_ready(run(handle))
    msg = str(err.value)
    assert "Ant-v5.step()" in msg and "EngineError" in msg and "env(s) [" in msg
    assert "stack" in msg
    assert isinstance(step.adapter.last_error, cypool.EngineError)
    obs, _ = env.reset(seed=0)              # the pool recovers, as on the Python path
    assert np.isfinite(obs).all()
    env.close()


def test_closed_env():
    env = _env()
    handle, recv, send, step = env.xla()
    run = jax.jit(lambda h: step(h, jnp.zeros(4, jnp.int32)))
    jax.block_until_ready(run(handle))                    # compiled while open
    env.close()
    with pytest.raises(cypool.ClosedEnvError, match="closed"):
        env.xla()
    with pytest.raises(cypool.ClosedEnvError, match="closed"):   # tracing anew
        jax.jit(lambda h: step(h, jnp.ones(4, jnp.int32)))(handle)
    with pytest.raises(jax.errors.JaxRuntimeError, match="CartPole-v1 env is closed"):
        jax.block_until_ready(run(handle))                # the compiled function


def test_collected_env():
    env = _env()
    handle, recv, send, step = env.xla()
    run = jax.jit(lambda h: step(h, jnp.zeros(4, jnp.int32))[0])
    jax.block_until_ready(run(handle))
    env.close()
    del env
    gc.collect()
    with pytest.raises(jax.errors.JaxRuntimeError, match="garbage-collected"):
        jax.block_until_ready(run(handle))


@pytest.mark.parametrize("action,exc,match", [
    (np.zeros(3, np.int32), ValueError, r"shape \(4,\)"),
    (np.zeros((4, 1), np.int32), ValueError, r"shape \(4,\)"),
    (np.zeros(4, np.float32), TypeError, "integers"),
])
def test_bad_action_refused_at_trace_time(action, exc, match):
    env = _env()
    handle, recv, send, step = env.xla()
    for fn in (lambda h: step(h, action), lambda h: send(h, action)):
        with pytest.raises(exc, match=match):
            jax.jit(fn)(handle)
        with pytest.raises(exc, match=match):
            fn(handle)                                    # eager too
    _same_as_fresh(env)
    env.close()


def test_bad_box_action_dtype_and_env_id():
    env = cypool.make_vec("Hopper-v5", 2, num_threads=1)
    env.reset(seed=0)
    handle, recv, send, step = env.xla()
    with pytest.raises(TypeError, match="float32 or float64"):
        jax.jit(lambda h: step(h, jnp.zeros((2, 3), jnp.int32)))(handle)
    with pytest.raises(TypeError, match="float32 or float64"):
        jax.jit(lambda h: step(h, jnp.zeros((2, 3), jnp.bfloat16)))(handle)
    with pytest.raises(ValueError, match="sync mode env_id must name all 2"):
        jax.jit(lambda h: step(h, jnp.zeros((1, 3)), jnp.array([0])))(handle)
    with pytest.raises(TypeError, match="handle"):
        step(jnp.zeros(4, jnp.int32), jnp.zeros((2, 3)))
    env.close()


def test_out_of_range_action_fails_without_moving():
    env = _env()
    handle, recv, send, step = env.xla()
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"CartPole-v1.step\(\).*ValueError"):
        jax.block_until_ready(jax.jit(lambda h: step(h, jnp.full(4, 7, jnp.int32)))(handle))
    _same_as_fresh(env)
    env.close()


def test_same_step_autoreset_refused():
    env = cypool.make_vec("CartPole-v1", 2, autoreset_mode="same_step")
    with pytest.raises(ValueError, match="same_step"):
        env.xla()
    env.close()


def test_jax_version_check(monkeypatch):
    monkeypatch.setattr(jax, "__version__", "0.4.20")
    with pytest.raises(RuntimeError, match=r'jax >= 0\.5\.0 and < 0\.11\.0.*cypool\[jax\]'):
        _build.import_jax()
    monkeypatch.setattr(jax, "__version__", "0.11.0")
    with pytest.raises(RuntimeError, match="0.11.0 is installed"):
        _build.import_jax()
    monkeypatch.setenv("CYPOOL_XLA_ANY_JAX", "1")
    assert _build.import_jax() is jax


def _python(code, **env):
    e = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e,
                          timeout=300)


def test_without_jax_import_works_and_xla_says_how_to_install():
    code = ("import sys; sys.modules['jax'] = None; sys.modules['jaxlib'] = None\n"
            "import cypool, cypool.envpool\n"
            "env = cypool.make_vec('CartPole-v1', 2); env.reset(seed=0)\n"
            "for e in (env, cypool.envpool.make('CartPole-v1', 'gym', num_envs=2)):\n"
            "    try:\n"
            "        e.xla()\n"
            "    except ImportError as exc:\n"
            "        print('IMPORTERROR', exc)\n"
            "assert 'jax' not in [m.split('.')[0] for m in sys.modules if sys.modules[m]]\n")
    r = _python(code)
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("IMPORTERROR")]
    assert len(lines) == 2 and all('pip install "cypool[jax]"' in ln for ln in lines)


def test_no_compiler_message(tmp_path):
    code = ("import cypool\n"
            "env = cypool.make_vec('CartPole-v1', 2)\n"
            "try:\n"
            "    env.xla()\n"
            "except RuntimeError as exc:\n"
            "    print('ERR', exc)\n")
    r = _python(code, CXX=str(tmp_path / "no-such-c++"), CYPOOL_CACHE_DIR=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "ERR" in r.stdout and "no C++ compiler was found" in r.stdout


def test_handler_built_into_cache_keyed_by_jaxlib(tmp_path):
    code = ("import cypool, numpy as np\n"
            "env = cypool.make_vec('CartPole-v1', 2); env.reset(seed=0)\n"
            "h, recv, send, step = env.xla()\n"
            "print(np.asarray(step(h, np.zeros(2, np.int32))[1][0]).shape)\n")
    r = _python(code, CYPOOL_CACHE_DIR=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "(2, 4)" in r.stdout
    import jaxlib
    built = os.listdir(tmp_path / "xla")
    assert len(built) == 1 and f"jaxlib{jaxlib.__version__}" in built[0]


def test_fast_route_bound_and_its_refusals():
    # a plain sync Discrete env steps on the handler's fast route (no Python frame); what it
    # declines (no reset yet, a send() waiting) still raises the Python path's error
    from cypool.xla import _native
    env = cypool.make_vec("CartPole-v1", num_envs=4, num_threads=1)
    handle, recv, send, step = env.xla()
    assert any(v is step.adapter.native for v in _native._bound_values())
    run = jax.jit(lambda h: step(h, jnp.zeros(4, jnp.int32)))
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"call reset\(\)"):
        jax.block_until_ready(run(handle))
    env.reset(seed=0)
    env.send(np.zeros(4, np.int32))
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"step\(\) while results of send"):
        jax.block_until_ready(run(handle))
    env.recv()
    jax.block_until_ready(run(handle))
    ref = _env()
    ref.step(np.zeros(4, np.int32)), ref.step(np.zeros(4, np.int32))
    a = np.ones(4, np.int32)
    assert np.array_equal(env.step(a)[0], ref.step(a)[0])
    env.close(), ref.close()
