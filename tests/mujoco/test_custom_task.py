"""A user's own MuJoCo task (tests/mujoco/custom/point_mass.pyx): built by the test suite with
cypool.mujoco.extension_kwargs(), registered with cypool.mujoco.register_task, and stepped by
cypool bit for bit as the same task written as a gymnasium MujocoEnv; sync, async, autoreset
modes and populations come from cypool."""
import os
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.mujoco import MujocoEnv

import cypool
import cypool.mujoco

HERE = Path(__file__).parent / "custom"
sys.path.insert(0, str(Path(__file__).parent.parent))
from _buildext import build_extension  # noqa: E402
from _ray_ref import real_ray, start_local_ray  # noqa: E402
XML = """<mujoco><option timestep="0.01"/><worldbody>
<body name="p" pos="0 0 0.1"><joint name="x" type="slide" axis="1 0 0"/>
<joint name="y" type="slide" axis="0 1 0"/><geom type="sphere" size="0.05" mass="1"/></body>
</worldbody><actuator><motor joint="x" ctrlrange="-1 1" ctrllimited="true"/>
<motor joint="y" ctrlrange="-1 1" ctrllimited="true"/></actuator></mujoco>"""


def build_task(name):
    """Compile tests/mujoco/custom/<name>.pyx with cypool.mujoco.extension_kwargs() (cached in
    ~/.cache/cypool) and put it on sys.path; returns the directory."""
    out = build_extension(name, HERE / f"{name}.pyx", cypool.mujoco.extension_kwargs(),
                          Path.home() / ".cache" / "cypool" / f"test-{name}",
                          # rebuilt when the task interface or the MuJoCo it links changes
                          key_extra=Path(cypool.mujoco.__file__).read_bytes()
                          + (Path(cypool.mujoco.__file__).parent / "_task.pxd").read_bytes()
                          + repr(cypool.mujoco.extension_kwargs()).encode())
    sys.path.insert(0, str(out))
    return str(out)


@pytest.fixture(scope="module")
def point_mass(tmp_path_factory):
    out = build_task("point_mass")
    xml = tmp_path_factory.mktemp("pm") / "point_mass.xml"
    xml.write_text(XML)
    cypool.mujoco.register_task("PointMass-v0", "point_mass")
    yield str(xml)
    cypool.mujoco.unregister_task("PointMass-v0")
    sys.path.remove(out)


class PointMassEnv(MujocoEnv):
    """The same task in gymnasium."""
    metadata = {"render_modes": ["human", "rgb_array", "depth_array", "rgbd_tuple"],
                "render_fps": 20}

    def __init__(self, xml_file, frame_skip=5, ctrl_cost_weight=0.1, reset_noise_scale=0.1):
        MujocoEnv.__init__(self, xml_file, frame_skip,
                           observation_space=gym.spaces.Box(-np.inf, np.inf, (4,), np.float64))
        self._w, self._s = ctrl_cost_weight, reset_noise_scale

    def _get_obs(self):
        return np.concatenate([self.data.qpos, self.data.qvel])

    def step(self, action):
        self.do_simulation(action, self.frame_skip)
        x, y = self.data.qpos[0], self.data.qpos[1]
        a = np.asarray(action, np.float64)
        ctrl = self._w * (a[0] * a[0] + a[1] * a[1])
        info = {"x_position": x, "reward_ctrl": -ctrl}
        return self._get_obs(), -(x * x + y * y) - ctrl, False, False, info

    def reset_model(self):
        s = self._s
        qpos = self.init_qpos + self.np_random.uniform(-s, s, self.model.nq)
        qvel = self.init_qvel + self.np_random.uniform(-s, s, self.model.nv)
        self.set_state(qpos, qvel)
        return self._get_obs()


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_a_users_task_matches_its_gymnasium_twin(point_mass, mode):
    n = 3
    env = cypool.make_vec("PointMass-v0", n, num_threads=2, autoreset_mode=mode,
                          max_episode_steps=20, xml_file=point_mass, ctrl_cost_weight=0.05)
    ref = gym.vector.SyncVectorEnv(
        [lambda: gym.wrappers.TimeLimit(PointMassEnv(point_mass, ctrl_cost_weight=0.05), 20)] * n,
        autoreset_mode=cypool.vector.parse_autoreset_mode(mode))
    try:
        assert "PointMass-v0" in cypool.list_envs()
        o, _ = env.reset(seed=2)
        r, _ = ref.reset(seed=2)
        assert np.array_equal(o, r)
        rng = np.random.default_rng(0)
        for t in range(50):
            a = rng.uniform(-1, 1, (n, 2))
            x, y = env.step(a), ref.step(a)
            for k in range(4):
                assert np.array_equal(x[k], y[k]), (t, k)
            assert sorted(x[4]) == sorted(y[4]), t
            for key in y[4]:
                if key not in ("final_obs", "final_info"):
                    assert np.array_equal(x[4][key], y[4][key]), (t, key)
    finally:
        env.close()
        ref.close()


def test_the_task_api_is_checked(point_mass):
    with pytest.raises(ValueError, match="already served"):
        cypool.mujoco.register_task("Hopper-v5", "point_mass")
    with pytest.raises(TypeError, match="lacks"):
        cypool.mujoco.register_task("Nothing-v0", "json")
    with pytest.raises(ValueError, match="2 slide joints"):
        cypool.make_vec("PointMass-v0", 1, xml_file=str(
            Path(gym.__file__).parent / "envs" / "mujoco" / "assets" / "hopper.xml"))
    pop = cypool.make_population("PointMass-v0", 2, 2, xml_file=point_mass,
                                 member_kwargs=[{"ctrl_cost_weight": 0.0}, {}])
    try:
        pop.reset(seed=0)
        _, rew, _, _, info = pop.step(np.ones((2, 2, 2)))
        assert (info["reward_ctrl"][0] == 0).all() and (info["reward_ctrl"][1] < 0).all()
    finally:
        pop.close()


def chain_xml(links):
    """A chain of `links` capsules hanging from a hinge each (axis y), one motor per hinge."""
    body = ""
    for k in reversed(range(links)):
        body = (f'<body name="l{k}" pos="0 0 -0.1"><joint name="j{k}" type="hinge" axis="0 1 0" '
                f'damping="0.05"/><geom type="capsule" fromto="0 0 0 0 0 -0.1" size="0.01" '
                f'mass="0.01"/>{body}</body>')
    motors = "".join(f'<motor joint="j{k}" ctrlrange="-1 1" ctrllimited="true" gear="0.01"/>'
                     for k in range(links))
    return (f'<mujoco><option timestep="0.005"/><worldbody><body name="root" pos="0 0 2">'
            f'{body}</body></worldbody><actuator>{motors}</actuator></mujoco>')


class ChainEnv(MujocoEnv):
    """Chain-v0 in gymnasium (the reference of tests/mujoco/custom/chain.pyx)."""
    metadata = {"render_modes": ["human", "rgb_array", "depth_array", "rgbd_tuple"],
                "render_fps": 100}

    def __init__(self, xml_file, frame_skip=2, ctrl_cost_weight=0.01, depth=7.8,
                 reset_noise_scale=0.1):
        import mujoco

        nq = mujoco.MjModel.from_xml_path(xml_file).nq
        MujocoEnv.__init__(self, xml_file, frame_skip, observation_space=gym.spaces.Box(
            -np.inf, np.inf, (2 * nq,), np.float64))
        self._w, self._depth, self._s = ctrl_cost_weight, depth, reset_noise_scale

    def _get_obs(self):
        return np.concatenate([self.data.qpos, self.data.qvel])

    def step(self, action):
        self.do_simulation(action, self.frame_skip)
        ctrl = 0.0
        for a in np.asarray(action, np.float64):     # summed in order, as the task's C loop
            ctrl = ctrl + a * a
        ctrl = self._w * ctrl
        z = self.data.xpos[-1, 2]
        info = {"tip_z": z, "reward_ctrl": -ctrl}
        return self._get_obs(), z - ctrl, bool(z > -self._depth), False, info

    def reset_model(self):
        s = self._s
        qpos = self.init_qpos + self.np_random.uniform(-s, s, self.model.nq)
        qvel = self.init_qvel + self.np_random.uniform(-s, s, self.model.nv)
        self.set_state(qpos, qvel)
        return self._get_obs()

    def _get_reset_info(self):
        return {"tip_z": self.data.xpos[-1, 2]}


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    out = build_task("chain")
    xml = tmp_path_factory.mktemp("chain") / "chain.xml"
    xml.write_text(chain_xml(100))
    cypool.mujoco.register_task("Chain-v0", "chain")
    yield str(xml)
    cypool.mujoco.unregister_task("Chain-v0")
    sys.path.remove(out)


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_a_task_over_a_100_link_model_matches_its_gymnasium_twin(chain, mode):
    import mujoco

    m = mujoco.MjModel.from_xml_path(chain)
    assert m.nq == m.nv == m.nu == 100 and m.nbody == 102      # far over the old 64 cap
    n, limit = 3, 40
    kw = dict(xml_file=chain, depth=7.85, ctrl_cost_weight=0.02)
    env = cypool.make_vec("Chain-v0", n, num_threads=2, autoreset_mode=mode,
                          max_episode_steps=limit, **kw)
    ref = gym.vector.SyncVectorEnv(
        [lambda: gym.wrappers.TimeLimit(ChainEnv(**kw), limit)] * n,
        autoreset_mode=cypool.vector.parse_autoreset_mode(mode))
    try:
        o, oi = env.reset(seed=7)
        r, ri = ref.reset(seed=7)
        assert o.shape == (n, 200) and np.array_equal(o, r)
        assert np.array_equal(oi["tip_z"], ri["tip_z"])
        rng = np.random.default_rng(1)
        ends = np.zeros(2, np.int64)
        for t in range(100):
            a = rng.uniform(-1, 1, (n, 100))
            x, y = env.step(a), ref.step(a)
            for k in range(4):
                assert np.array_equal(x[k], y[k]), (t, k)
            assert sorted(x[4]) == sorted(y[4]), t
            for key in y[4]:
                if key == "final_obs":
                    for u, v in zip(x[4][key], y[4][key]):
                        assert (u is None and v is None) or np.array_equal(u, v), t
                elif key != "final_info":
                    assert np.array_equal(x[4][key], y[4][key]), (t, key)
            ends += [int(np.sum(y[2])), int(np.sum(y[3]))]
        assert ends.min() >= 1, ends   # episodes terminated and were truncated, and auto-reset
    finally:
        env.close()
        ref.close()


def test_a_users_task_on_ray_matches_the_local_pool(point_mass):
    """Ray actors register the task again from its module (importable on their path)."""
    real_ray()   # skips under tools/sanitize.sh (tests/_ray_ref.py says why)
    path = os.pathsep.join([build_task("point_mass"), os.environ.get("PYTHONPATH", "")])
    ray = start_local_ray(runtime_env={"env_vars": {"PYTHONPATH": path}})
    env = local = None
    try:
        kw = dict(xml_file=point_mass, max_episode_steps=15, autoreset_mode="same_step")
        env = cypool.make_vec("PointMass-v0", 4, backend="ray", num_workers=2, num_threads=1,
                              num_cpus_per_worker=0.5, **kw)
        local = cypool.make_vec("PointMass-v0", 4, num_threads=2, **kw)
        assert np.array_equal(env.reset(seed=3)[0], local.reset(seed=3)[0])
        for a in np.random.default_rng(2).uniform(-1, 1, (30, 4, 2)):
            got, want = env.step(a), local.step(a)
            for k in range(4):
                assert np.array_equal(got[k], want[k])
            assert sorted(got[4]) == sorted(want[4])
            for key in want[4]:
                if key not in ("final_obs", "final_info"):
                    assert np.array_equal(got[4][key], want[4][key]), key
    finally:
        for e in (env, local):
            if e is not None:
                e.close()
        ray.shutdown()


def test_a_users_task_through_cypool_envpool(point_mass):
    """cypool.envpool.make serves a task added with register_task (it raised KeyError: its
    EnvPool tables listed only the built-in tasks) and steps it as make_vec does."""
    import cypool.envpool as envpool

    env = envpool.make_gymnasium("PointMass-v0", num_envs=2, seed=3, xml_file=point_mass)
    ref = cypool.make_vec("PointMass-v0", 2, seed=3, xml_file=point_mass)
    try:
        assert env.spec.config.reward_threshold is None
        obs, _ = env.reset()
        ref_obs, _ = ref.reset()
        assert np.array_equal(obs, ref_obs)
        a = np.full((2, 2), 0.3)
        for _ in range(3):
            out, ref_out = env.step(a), ref.step(a)
            for x, y in zip(out[:4], ref_out[:4]):
                assert np.array_equal(x, y.astype(x.dtype))   # EnvPool: float32 rewards
    finally:
        env.close()
        ref.close()
