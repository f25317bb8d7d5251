"""Classic control is built only on cypool's public env API: its modules import nothing private
from cypool, and what the API gives every env works for it too (per-member kwargs of
populations and set_attr, each env reading its own parameters), bit for bit against
gymnasium.make_vec(id, n, vectorization_mode="sync") built with each member's kwargs."""
import pathlib
import re
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import cypool

CLASSIC = pathlib.Path(cypool.__file__).parent / "classic"
ALLOWED = {"cypool.api"}

# `from M import a, b` / `from M cimport (a, b)` / `import M, N as n` / `cimport M`
_FROM = re.compile(r"^\s*from\s+(\.*[\w.]*)\s+c?import\s+(\([^)]*\)|[^\n#]+)", re.M)
_IMPORT = re.compile(r"^\s*c?import\s+([^\n#]+)", re.M)


def cypool_imports(source: str) -> list[str]:
    """Every cypool module (or relative one, as written) an import/cimport line names."""
    mods = []
    for m in _FROM.finditer(source):
        mod, names = m.group(1), m.group(2)
        if mod.startswith("."):
            mods.append(mod)
        elif mod == "cypool":               # from cypool import x: module cypool.x
            for name in re.split(r"[\s,()]+", names):
                if name and name != "as" and re.fullmatch(r"\w+", name):
                    mods.append(f"cypool.{name}")
            names_as = re.findall(r"\bas\s+(\w+)", names)     # drop the `as` targets
            for alias in names_as:
                mods.remove(f"cypool.{alias}")
        elif mod.split(".")[0] == "cypool":
            mods.append(mod)
    for m in _IMPORT.finditer(source):
        for part in m.group(1).split(","):
            mod = part.split(" as ")[0].strip()
            if mod == "cypool" or mod.startswith("cypool."):
                mods.append(mod)
    return mods


def private_imports(source: str) -> list[str]:
    return [m for m in cypool_imports(source) if m not in ALLOWED]


def test_the_import_check_catches_private_imports():
    """The check below would fail on classic control as it was (its pools cimported the
    engine itself, its family module the private validators)."""
    assert private_imports("from cypool._core._engine cimport Engine, EnvRow, ST_OK\n") == [
        "cypool._core._engine"]
    assert private_imports("from cypool._validate import is_number\n") == ["cypool._validate"]
    assert private_imports("from cypool import families, api\n") == ["cypool.families"]
    assert private_imports("    import cypool.errors as e, numpy\n") == ["cypool.errors"]
    assert private_imports("cimport cypool._core._engine\n") == ["cypool._core._engine"]
    assert private_imports("from .._core import _engine\n") == [".._core"]
    assert private_imports("from cypool.api cimport Engine, EnvRow, ST_OK\n"
                           "from cypool.api import register_env\nimport numpy as np\n") == []


def test_classic_control_imports_only_the_public_api():
    files = sorted(CLASSIC.glob("*.py")) + sorted(CLASSIC.glob("*.pyx")) + sorted(
        CLASSIC.glob("*.pxd"))
    assert any(f.suffix == ".pyx" for f in files) and (CLASSIC / "__init__.py") in files
    offenders = {f.name: bad for f in files if (bad := private_imports(f.read_text()))}
    assert not offenders, f"cypool/classic imports private cypool modules: {offenders}"
    for f in files:
        if f.suffix == ".pyx":
            assert "cypool.api" in cypool_imports(f.read_text()), f.name


def test_importing_cypool_registers_classic_control_lazily():
    """import cypool registers the six ids through cypool.classic, without loading a pool."""
    code = ("import sys, cypool, gymnasium as gym\n"
            "ids = ['CartPole-v0', 'CartPole-v1', 'MountainCar-v0', 'Pendulum-v1',"
            " 'Acrobot-v1', 'MountainCarContinuous-v0']\n"
            "assert [i for i in cypool.list_envs() if i in ids] == ids\n"
            "assert all(gym.registry['cypool/' + i].max_episode_steps == n for i, n in"
            " zip(ids, [200, 500, 200, 200, 500, 999]))\n"
            "assert 'cypool.classic' in sys.modules\n"
            "print(sorted(m for m in sys.modules if m.startswith('cypool.classic.')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("env_id,fps", [("CartPole-v1", 50), ("Acrobot-v1", 15),
                                        ("Pendulum-v1", 30), ("MountainCar-v0", 30)])
def test_metadata_and_spaces(env_id, fps):
    env = cypool.make_vec(env_id, 2)
    ref = gym.make_vec(env_id, 2, vectorization_mode="sync")
    try:
        assert env.metadata["render_fps"] == fps
        assert env.single_observation_space == ref.single_observation_space
        assert env.single_action_space == ref.single_action_space
    finally:
        env.close()
        ref.close()


def _member_refs(env_id, members, E, seed):
    """gymnasium's sync vector env of each member, reset with the seeds its rows get in
    parity mode (env i of the population: seed + i)."""
    refs, obs = [], []
    for k, kw in enumerate(members):
        ref = gym.make_vec(env_id, E, vectorization_mode="sync", **kw)
        obs.append(ref.reset(seed=seed + k * E)[0])
        refs.append(ref)
    return refs, obs


def _check_members(got, refs, acts):
    for k, ref in enumerate(refs):
        want = ref.step(acts[k])
        for x, y in zip(got[:4], want[:4]):
            assert x[k].dtype == y.dtype and np.array_equal(x[k], y), k
    return got


def test_pendulum_population_with_per_member_g():
    gs = [10.0, 9.81, 3.7]
    members = [{"g": g} for g in gs]
    P, E, seed = len(gs), 3, 11
    pop = cypool.make_population("Pendulum-v1", P, E, member_kwargs=members, seed=seed,
                                 seed_mode="parity", num_threads=2)
    refs, want_obs = _member_refs("Pendulum-v1", members, E, seed)
    try:
        obs, info = pop.reset()
        for k in range(P):
            assert np.array_equal(obs[k], want_obs[k])
        assert np.array_equal(info["g"], np.repeat(np.array(gs)[:, None], E, 1))
        rng = np.random.default_rng(4)
        truncs = 0
        for t in range(420):
            dtype = np.float32 if t % 3 else np.float64
            a = rng.uniform(-2.5, 2.5, (P, E, 1)).astype(dtype)
            if t == 250:               # a member's g changed at run time, from its next step
                pop.set_member_kwargs(2, g=12.5)
                for e in refs[2].envs:
                    e.unwrapped.g = 12.5
            got = _check_members(pop.step(a), refs, a)
            truncs += int(got[3].sum())
        assert truncs >= 2 * P * E                 # 200-step episodes, auto-resets
        assert pop.member_kwargs(2)["g"] == 12.5
        assert pop.vec.pool.engine.g.tolist() == [10.0] * E + [9.81] * E + [12.5] * E
    finally:
        pop.close()
        for r in refs:
            r.close()


def test_cartpole_population_with_per_member_sutton_barto_reward():
    members = [{"sutton_barto_reward": False}, {"sutton_barto_reward": True}, {}]
    P, E, seed = len(members), 4, 3
    pop = cypool.make_population("CartPole-v1", P, E, member_kwargs=members, seed=seed,
                                 seed_mode="parity", num_threads=2)
    refs, want_obs = _member_refs("CartPole-v1", members, E, seed)
    try:
        obs, _ = pop.reset()
        for k in range(P):
            assert np.array_equal(obs[k], want_obs[k])
        rng = np.random.default_rng(0)
        terms = np.zeros(P, np.int64)
        for t in range(300):
            a = rng.integers(0, 2, (P, E))
            got = _check_members(pop.step(a), refs, a)
            terms += got[2].sum(axis=1)
        assert (terms >= E).all()                  # every member terminated and reset
        assert pop.vec.pool.engine.sutton_barto_reward.tolist() == [0] * E + [1] * E + [0] * E
    finally:
        pop.close()
        for r in refs:
            r.close()


def test_mountain_car_continuous_goal_velocity_types_per_member():
    """goal_velocity's type is its own per env: np.float64(0.03) equals 0.03 yet numpy
    compares a float32 velocity with it in float64, with 0.03 in float32."""
    members = [{"goal_velocity": 0.03}, {"goal_velocity": np.float64(0.03)},
               {"goal_velocity": np.float32(0.03)}, {}]
    pop = cypool.make_population("MountainCarContinuous-v0", len(members), 1,
                                 member_kwargs=members, goal_velocity=0.03, seed=0)
    try:
        eng = pop.vec.pool.engine
        assert eng.goal_type.tolist() == [2, 0, 1, 2]         # TPY, T64, T32, TPY
        assert eng.goal_velocity.tolist() == [0.03, 0.03, float(np.float32(0.03)), 0.03]
    finally:
        pop.close()
    env = cypool.make_vec("MountainCarContinuous-v0", 2)
    try:
        assert env.get_attr("goal_velocity") == (0, 0)         # gymnasium's default, an int
        assert env.pool.engine.goal_type.tolist() == [2, 2]
        env.set_attr("goal_velocity", [np.float32(0.25), 0.5])
        assert env.get_attr("goal_velocity") == (np.float32(0.25), 0.5)
        assert env.pool.engine.goal_type.tolist() == [1, 2]
        assert env.pool.engine.goal_velocity.tolist() == [0.25, 0.5]
        with pytest.raises(TypeError, match="goal_velocity"):
            env.set_attr("goal_velocity", "fast")
        assert env.pool.engine.goal_velocity.tolist() == [0.25, 0.5]
    finally:
        env.close()


def test_set_attr_changes_one_envs_parameter():
    n, seed = 3, 5
    env = cypool.make_vec("Pendulum-v1", n, num_threads=2)
    ref = gym.make_vec("Pendulum-v1", n, vectorization_mode="sync")
    try:
        assert np.array_equal(env.reset(seed=seed)[0], ref.reset(seed=seed)[0])
        env.set_attr("g", [4.0], env_ids=[1])
        ref.envs[1].unwrapped.g = 4.0
        assert env.get_attr("g") == (10.0, 4.0, 10.0)
        rng = np.random.default_rng(1)
        for _ in range(60):
            a = rng.uniform(-2, 2, (n, 1)).astype(np.float32)
            x, y = env.step(a), ref.step(a)
            for u, v in zip(x[:4], y[:4]):
                assert u.dtype == v.dtype and np.array_equal(u, v)
    finally:
        env.close()
        ref.close()


def test_box_actions_are_kept_per_env_in_their_dtype():
    env = cypool.make_vec("MountainCarContinuous-v0", 3)
    try:
        env.reset(seed=0)
        eng = env.pool.engine
        assert eng.actions.shape == (3, 1) and eng.actions.dtype == np.float64
        env.step(np.array([[0.5], [-0.25], [1.0]], np.float64))
        assert eng.act_f32.tolist() == [0, 0, 0]
        env.pool.family.load_actions(np.array([[0.1]], np.float32), env_ids=[2])
        assert eng.act_f32.tolist() == [0, 0, 1]
        assert eng.actions[:, 0].tolist() == [0.5, -0.25, float(np.float32(0.1))]
        before = eng.actions.copy(), eng.act_f32.copy()
        with pytest.raises(ValueError, match="overflow"):
            env.step(np.array([[0.0], [1e200], [0.0]]))
        assert np.array_equal(eng.actions, before[0]) and np.array_equal(eng.act_f32, before[1])
    finally:
        env.close()
