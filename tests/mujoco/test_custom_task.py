"""A user's own MuJoCo task (tests/mujoco/custom/point_mass.pyx): built by the test suite with
cypool.mujoco.extension_kwargs(), registered with cypool.mujoco.register_task, and stepped by
cypool bit for bit as the same task written as a gymnasium MujocoEnv; sync, async, autoreset
modes and populations come from cypool."""
import hashlib
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.mujoco import MujocoEnv

import cypool
import cypool.mujoco

HERE = Path(__file__).parent / "custom"
XML = """<mujoco><option timestep="0.01"/><worldbody>
<body name="p" pos="0 0 0.1"><joint name="x" type="slide" axis="1 0 0"/>
<joint name="y" type="slide" axis="0 1 0"/><geom type="sphere" size="0.05" mass="1"/></body>
</worldbody><actuator><motor joint="x" ctrlrange="-1 1" ctrllimited="true"/>
<motor joint="y" ctrlrange="-1 1" ctrllimited="true"/></actuator></mujoco>"""


@pytest.fixture(scope="module")
def point_mass(tmp_path_factory):
    from Cython.Build import cythonize
    from setuptools import Distribution, Extension

    src = (HERE / "point_mass.pyx").read_bytes()
    key = hashlib.sha256(src + Path(cypool.mujoco.__file__).read_bytes()).hexdigest()[:16]
    out = Path.home() / ".cache" / "cypool" / "test-point-mass" / key
    if not list(out.glob("point_mass*.so")):
        out.mkdir(parents=True, exist_ok=True)
        (out / "point_mass.pyx").write_bytes(src)
        kw = cypool.mujoco.extension_kwargs()
        ext = Extension("point_mass", [str(out / "point_mass.pyx")], **kw)
        dist = Distribution({"ext_modules": cythonize(
            [ext], include_path=kw["include_dirs"], quiet=True, build_dir=str(out / "c"),
            compiler_directives=dict(language_level=3, boundscheck=False, wraparound=False))})
        cmd = dist.get_command_obj("build_ext")
        cmd.build_lib, cmd.build_temp = str(out), str(out / "tmp")
        cmd.ensure_finalized()
        cmd.run()
    sys.path.insert(0, str(out))
    xml = tmp_path_factory.mktemp("pm") / "point_mass.xml"
    xml.write_text(XML)
    cypool.mujoco.register_task("PointMass-v0", "point_mass")
    yield str(xml)
    cypool.mujoco.unregister_task("PointMass-v0")
    sys.path.remove(str(out))


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
