"""MUJOCO_GL as gymnasium reads it: "osmesa" renders through libOSMesa, bit for bit as
gymnasium renders under MUJOCO_GL=osmesa (render() and from_pixels, on two worker threads
too); unset tries EGL, then OSMesa when EGL has no driver; "egl" is EGL only; "glfw" and
anything else are a clear ValueError; no GL library at all is a clear RuntimeError naming the
packages to install, never an abort; one backend per process (MuJoCo resolves its GL
functions once per process), a second one is refused. A GL context that would not fit under
the address-space limit or in the available memory is a clean MemoryError, never a crash
inside Mesa; MUJOCO_GL cannot break ``import cypool`` or pools that do not render.

gymnasium picks its backend when it first renders and MuJoCo fixes its GL functions for the
whole process, so every case runs in a fresh interpreter with the variable set."""
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import cypool

SLOW = 4 if os.environ.get("CYPOOL_SANITIZER") else 1

PRELUDE = textwrap.dedent(r"""
    import json, os, threading
    import numpy as np, gymnasium as gym
    from gymnasium.wrappers import AddRenderObservation
    import cypool
    from cypool.mujoco import _pool

    def expect(exc, match, call):
        try:
            call()
        except exc as e:
            return match in str(e), str(e)
        return False, "raised nothing"
""")


def _run(body, gl="osmesa", extra_env=None, timeout=600):
    env = dict(os.environ)
    env.pop("MUJOCO_GL", None)
    env.pop("PYOPENGL_PLATFORM", None)
    if gl is not None:
        env["MUJOCO_GL"] = gl
    env.update(extra_env or {})
    out = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], env=env,
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    # PyOpenGL may print at interpreter exit (gymnasium's OSMesa contexts are freed then)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
    assert len(lines) == 1, out.stdout[-3000:] + out.stderr[-3000:]
    return json.loads(lines[0][len("RESULT "):])


def test_osmesa_frames_equal_gymnasiums_osmesa_render():
    res = _run(r"""
        out = {}
        cases = [("Hopper-v5", dict(width=64, height=48)),
                 ("Ant-v5", dict(width=40, height=40)),
                 ("Walker2d-v5", dict(width=32, height=48, camera_name="track"))]
        for task, kw in cases:
            env = cypool.make_vec(task, 2, num_threads=2, render_mode="rgb_array",
                                  autoreset_mode="disabled", **kw)
            space = env.single_action_space
            rng = np.random.default_rng(3)
            acts = rng.uniform(space.low, space.high, (3, 2) + space.shape).astype(np.float32)
            env.reset(seed=11)
            got = []
            env.step(acts[0])
            got.append(np.stack(env.render()))       # the FREE camera's lookat is set here
            env.step(acts[1])
            got.append(np.stack(env.render()))
            env.reset()
            env.step(acts[2])
            got.append(np.stack(env.render()))
            assert env.pool.engine.render_backend == "osmesa"
            env.close()
            ok = True
            for i in range(2):                      # one gymnasium env at a time, alone
                ref = gym.make(task, render_mode="rgb_array", **kw)
                ref.reset(seed=11 + i)
                want = []
                ref.step(acts[0][i])
                want.append(ref.render())
                ref.step(acts[1][i])
                want.append(ref.render())
                ref.reset()
                ref.step(acts[2][i])
                want.append(ref.render())
                ref.close()
                ok &= all(np.array_equal(g[i], w) for g, w in zip(got, want))
                ok &= all(w.any() for w in want)
            out[task] = bool(ok)
        # a gymnasium env's context stays current on its thread across cypool's renders
        # (gymnasium never makes it current again)
        ref = gym.make("Hopper-v5", render_mode="rgb_array", width=24, height=24)
        ref.reset(seed=2)
        before = ref.render()
        pool = cypool.make_vec("Hopper-v5", 1, render_mode="rgb_array", width=24, height=24)
        pool.reset(seed=2)
        mine = pool.render()[0]
        after = ref.render()
        out["coresident"] = bool(before.any() and np.array_equal(before, after)
                                 and np.array_equal(mine, after))
        out["backend"] = _pool.gl_backend()
        print("RESULT", json.dumps(out))
    """)
    assert res == {"Hopper-v5": True, "Ant-v5": True, "Walker2d-v5": True,
                   "coresident": True, "backend": "osmesa"}


def test_osmesa_pixel_observations_on_two_worker_threads():
    """OSMesa binds a context to the calling thread: each worker has its own. Sync with the
    caller and two workers, async on two workers, channels-first too; every frame equals
    AddRenderObservation's under MUJOCO_GL=osmesa, final_obs included."""
    res = _run(r"""
        SIZE = dict(width=40, height=32)
        LIMIT = 3
        n, steps = 3, 7

        def reference(seed, actions):
            base = gym.make("Hopper-v5", render_mode="rgb_array", max_episode_steps=LIMIT,
                            **SIZE)
            base.reset(seed=seed)
            env = AddRenderObservation(base, render_only=True)
            obs, _ = env.reset(seed=seed)
            out = [(obs, None)]
            for a in actions:
                obs, r, te, tr, _ = env.step(a)
                final = None
                if te or tr:
                    final, (obs, _) = obs, env.reset()
                out.append((obs, final))
            env.close()
            return out

        rng = np.random.default_rng(5)
        actions = rng.uniform(-1, 1, (steps, n, 3)).astype(np.float32)
        refs = [reference(20 + i, actions[:, i]) for i in range(n)]
        res = {}
        for chw in (False, True):
            env = cypool.make_vec("Hopper-v5", n, num_threads=3, from_pixels=True,
                                  channels_first=chw, autoreset_mode="same_step",
                                  max_episode_steps=LIMIT, **SIZE)
            slots = env.pool.engine.num_slots
            obs, _ = env.reset(seed=20)
            got = [(obs, {})]
            for a in actions:
                obs, _, _, _, info = env.step(a)
                got.append((obs, info))
            env.close()
            ok, finals = True, 0
            for i in range(n):
                for (o, info), (r_obs, r_final) in zip(got, refs[i]):
                    if chw:
                        r_obs = r_obs.transpose(2, 0, 1)
                    ok &= np.array_equal(o[i], r_obs)
                    if r_final is not None:
                        finals += 1
                        f = info["final_obs"][i]
                        ok &= bool(info["_final_obs"][i]) and np.array_equal(
                            f, r_final.transpose(2, 0, 1) if chw else r_final)
            res[f"sync chw={chw}"] = [bool(ok), slots, finals]
        # async: two workers render, the caller none
        env = cypool.make_vec("Hopper-v5", 4, num_threads=2, batch_size=2, from_pixels=True,
                              **SIZE)
        env.async_reset(seed=20)
        first = {}
        while len(first) < 4:
            o, _, _, _, info = env.recv(timeout=120)
            for r, i in enumerate(info["env_id"]):
                first[int(i)] = o[r]
        res["async"] = [all(np.array_equal(first[i], refs[i][0][0]) for i in range(3)),
                        env.pool.engine.num_slots]
        env.close()
        res["backend"] = _pool.gl_backend()
        print("RESULT", json.dumps(res))
    """)
    assert res["backend"] == "osmesa"
    for chw in (False, True):
        ok, slots, finals = res[f"sync chw={chw}"]
        assert ok and slots == 3 and finals > 0, res
    assert res["async"] == [True, 3], res


def test_osmesa_pools_render_from_several_threads_at_once():
    res = _run(r"""
        pools = [cypool.make_vec(t, 2, num_threads=1, render_mode="rgb_array", width=32,
                                 height=32) for t in ("Hopper-v5", "Ant-v5")]
        for p in pools:
            p.reset(seed=0)
        alone = [np.stack(p.render()) for p in pools]
        out = [[], []]

        def work(k):
            for _ in range(3):
                out[k].append(np.stack(pools[k].render()))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        ok = all(len(out[k]) == 3 and all(np.array_equal(f, alone[k]) for f in out[k])
                 for k in range(2))
        print("RESULT", json.dumps([ok, bool(alone[0].any()), _pool.gl_backend()]))
    """)
    assert res == [True, True, "osmesa"]


def test_unset_mujoco_gl_falls_back_to_osmesa_when_egl_has_no_driver():
    """glvnd's libEGL with no vendor library: no EGL display, so OSMesa renders; the frames
    are OSMesa's (gymnasium's under MUJOCO_GL=osmesa)."""
    res = _run(r"""
        env = cypool.make_vec("Hopper-v5", 1, render_mode="rgb_array", width=32, height=32)
        env.reset(seed=1)
        frame = env.render()[0]
        px = cypool.make_vec("Hopper-v5", 1, from_pixels=True, width=32, height=32)
        obs, _ = px.reset(seed=1)
        backend = [_pool.gl_backend(), env.pool.engine.render_backend,
                   px.pool.engine.render_backend]
        os.environ["MUJOCO_GL"] = "osmesa"          # gymnasium's reference
        ref = gym.make("Hopper-v5", render_mode="rgb_array", width=32, height=32)
        ref.reset(seed=1)
        want = ref.render()
        print("RESULT", json.dumps([backend, np.array_equal(frame, want), np.array_equal(obs[0], want)]))
    """, gl=None, extra_env={"__EGL_VENDOR_LIBRARY_FILENAMES": "/nonexistent/egl_vendor.json"})
    assert res == [["osmesa"] * 3, True, True]


def test_egl_only_does_not_fall_back():
    res = _run(r"""
        env = cypool.make_vec("Hopper-v5", 1, render_mode="rgb_array", width=16, height=16)
        env.reset(seed=0)
        ok, msg = expect(RuntimeError, "EGL", env.render)
        ok2, msg2 = expect(RuntimeError, "libegl1 libegl-mesa0 libgl1-mesa-dri",
                           lambda: cypool.make_vec("Hopper-v5", 1, from_pixels=True))
        print("RESULT", json.dumps([ok and "libosmesa6" in msg and "MUJOCO_GL" in msg, ok2,
                          _pool.gl_backend(), msg]))
    """, gl="egl", extra_env={"__EGL_VENDOR_LIBRARY_FILENAMES": "/nonexistent/egl_vendor.json"})
    assert res[:3] == [True, True, None], res[3]


@pytest.mark.parametrize("gl", [None, "egl", "osmesa"])
def test_no_gl_library_is_a_clear_error(gl):
    """No libEGL and no libOSMesa (their names point nowhere): render() and from_pixels raise
    a RuntimeError naming the apt packages and MUJOCO_GL; the process goes on (and exits 0)."""
    res = _run(r"""
        _pool._set_gl_libraries("libEGL-cypool-missing.so.1", "libOSMesa-cypool-missing.so")
        env = cypool.make_vec("Hopper-v5", 1, render_mode="rgb_array", width=16, height=16)
        env.reset(seed=0)
        results = []
        for call in (env.render, lambda: cypool.make_vec("Hopper-v5", 2, num_threads=2,
                                                         from_pixels=True)):
            ok, msg = expect(RuntimeError, "no OpenGL backend could make a context", call)
            results.append([ok, msg])
        env.step(np.zeros((1, 3)))                 # the pool still works
        print("RESULT", json.dumps(results))
    """, gl=gl)
    for ok, msg in res:
        assert ok, msg
        for word in ("apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri", "libosmesa6",
                     "MUJOCO_GL"):
            assert word in msg, msg
        if gl != "osmesa":
            assert "libEGL-cypool-missing.so.1" in msg
        if gl != "egl":
            assert "libOSMesa-cypool-missing.so" in msg


def test_one_backend_per_process():
    res = _run(r"""
        env = cypool.make_vec("Hopper-v5", 1, render_mode="rgb_array", width=16, height=16)
        env.reset(seed=0)
        env.render()
        os.environ["MUJOCO_GL"] = "osmesa"
        other = cypool.make_vec("Hopper-v5", 1, render_mode="rgb_array", width=16, height=16)
        other.reset(seed=0)
        refused = expect(RuntimeError, "already renders MuJoCo through EGL", other.render)
        pixels = expect(RuntimeError, "already renders MuJoCo through EGL",
                        lambda: cypool.make_vec("Hopper-v5", 1, from_pixels=True))
        del os.environ["MUJOCO_GL"]                 # unset: the process's backend
        other.render()
        print("RESULT", json.dumps([refused[0], pixels[0], other.pool.engine.render_backend,
                          refused[1]]))
    """, gl="egl")
    assert res[:3] == [True, True, "egl"], res[3]


@pytest.mark.parametrize("value, match", [
    ("glfw", "not supported: cypool renders MuJoCo offscreen"),
    ("bogus", "MUJOCO_GL must be 'egl' or 'osmesa'"),
    ("EGL", "MUJOCO_GL must be 'egl' or 'osmesa'"),     # gymnasium's names are lower case
])
def test_other_mujoco_gl_values_are_a_value_error(monkeypatch, value, match):
    env = cypool.make_vec("Hopper-v5", 1, render_mode="rgb_array", width=16, height=16)
    try:
        env.reset(seed=0)
        monkeypatch.setenv("MUJOCO_GL", value)
        with pytest.raises(ValueError, match=match):
            env.render()
        with pytest.raises(ValueError, match=match):
            cypool.make_vec("Hopper-v5", 1, from_pixels=True, width=16, height=16)
    finally:
        env.close()


# ---------------------------------------------------------------------- scripts without RESULT
# a fresh interpreter without MUJOCO_GL and PYOPENGL_PLATFORM but for `env`'s; `pre` runs
# before cypool is imported
SCRIPT_PRELUDE = textwrap.dedent(r"""
    import os, signal, sys, time
    import numpy as np
    import cypool
""")


def _run_script(body, env=None, timeout=120 * SLOW, pre=""):
    full = dict(os.environ)
    full.pop("MUJOCO_GL", None)
    full.pop("PYOPENGL_PLATFORM", None)
    full.update(env or {})
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(pre) + SCRIPT_PRELUDE +
                          textwrap.dedent(body)], env=full,
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout



# ---------------------------------------------------------------------- memory pressure
MEMORY_SCRIPT = textwrap.dedent(r"""
    import resource, sys
    limit = int(float(sys.argv[1]) * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import numpy as np
    import cypool
    try:
        pix = cypool.make_vec("Hopper-v5", 4, from_pixels=True, width=84, height=84,
                              num_threads=2)
        pix.reset(seed=0)
        pix.step(np.zeros((4, 3)))
        env = cypool.make_vec("Hopper-v5", 2, num_threads=1, render_mode="rgb_array")
        env.reset(seed=0)
        env.render()
        print("RESULT ok", flush=True)
    except MemoryError as e:
        assert "memory" in str(e) and "GL context" in str(e), e
        print("RESULT clean", flush=True)
""")


@pytest.mark.skipif(os.environ.get("CYPOOL_SANITIZER") == "asan",
                    reason="AddressSanitizer reserves terabytes of address space for its shadow "
                           "memory: a process under RLIMIT_AS cannot start with it")
def test_gl_contexts_under_an_address_space_limit_never_crash():
    """Under RLIMIT_AS values spanning the range where Mesa used to die (SIGSEGV in
    mjr_makeContext, SIGABRT from LLVM), each run works or raises cypool's MemoryError;
    with room enough it works."""
    limits = ["0.8", "1.0", "1.1", "1.2", "1.3", "1.5", "2.0"] * 2
    procs = [(lim, subprocess.Popen([sys.executable, "-c", MEMORY_SCRIPT, lim],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)) for lim in limits[:7]]
    results = []
    for rnd in range(2):
        for lim, p in procs:
            try:
                out, err = p.communicate(timeout=180 * SLOW)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
                pytest.fail(f"RLIMIT_AS {lim} GB: hung")
            assert p.returncode >= 0, (f"RLIMIT_AS {lim} GB: killed by "
                                       f"{signal.Signals(-p.returncode).name}\n{err[-2000:]}")
            assert p.returncode == 0, f"RLIMIT_AS {lim} GB:\n{out}{err[-2000:]}"
            results.append((lim, out.split("RESULT ")[-1].strip()))
        if rnd == 0:
            procs = [(lim, subprocess.Popen([sys.executable, "-c", MEMORY_SCRIPT, lim],
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            text=True)) for lim in limits[7:]]
    assert all(r in ("ok", "clean") for _, r in results), results
    assert [r for lim, r in results if lim == "2.0"] == ["ok", "ok"], results
    assert [r for lim, r in results if lim == "0.8"] == ["clean", "clean"], results


# ---------------------------------------------------------------------- MUJOCO_GL at import
# a machine without libOSMesa, as PyOpenGL (which mujoco's import uses) sees it
NO_OSMESA = r"""
    import ctypes
    _cdll_init = ctypes.CDLL.__init__
    def _no_osmesa(self, name, *args, **kwargs):
        if name and "OSMesa" in str(name):
            raise OSError(f"{name}: cannot open shared object file (simulated)")
        _cdll_init(self, name, *args, **kwargs)
    ctypes.CDLL.__init__ = _no_osmesa
"""


@pytest.mark.parametrize("gl", ["bogus", "osmesa", "osmesa-no-lib", "glfw", "egl"])
def test_mujoco_gl_cannot_break_import_or_pools_that_do_not_render(gl):
    """Whatever MUJOCO_GL says (a bad value; osmesa where libOSMesa is missing), import
    cypool and making and stepping CartPole, Atari and MuJoCo pools work; the first MuJoCo
    render gives cypool's clear error for a bad value."""
    pre = NO_OSMESA if gl == "osmesa-no-lib" else ""
    gl = gl.replace("-no-lib", "")
    out = _run_script(r"""
        import gymnasium
        gl = os.environ["MUJOCO_GL"]
        cp = cypool.make_vec("CartPole-v1", 2, num_threads=1)
        cp.reset(seed=0)
        cp.step(np.zeros(2, np.int64))
        try:
            pong = cypool.make_vec("Pong-v5", 2, num_threads=1)
        except ImportError:          # cypool built without ALE
            pass
        else:
            pong.reset(seed=0)
            pong.step(np.zeros(2, np.int64))
        hop = cypool.make_vec("Hopper-v5", 2, num_threads=1, render_mode="rgb_array")
        hop.reset(seed=0)
        hop.step(np.zeros((2, 3)))
        cypool.make_population("Hopper-v5", 2, 1, num_threads=1).reset(seed=0)
        cypool.show_config(file=open(os.devnull, "w"))
        try:
            hop.render()
        except ValueError as e:
            assert gl in ("bogus", "glfw") and "MUJOCO_GL" in str(e), e
        except RuntimeError as e:
            assert gl in ("osmesa", "egl") and "cannot render MuJoCo" in str(e), e
        else:
            assert gl in ("osmesa", "egl"), gl
        print("ok")
    """, env={"MUJOCO_GL": gl}, pre=pre)
    assert out.strip().endswith("ok"), out
