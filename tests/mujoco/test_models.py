"""Users' own models and hostile kwargs: every case matches gymnasium or raises a clean Python
exception before any env moves; nothing writes out of bounds (run under tools/sanitize.sh).

Models are edited with MuJoCo's own MjSpec (joints, actuators, bodies and sites removed or
renamed) and written to temporary XML files, which both gymnasium and cypool load.
"""
import os
import subprocess
import sys
import textwrap

import gymnasium as gym
import mujoco
import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck, strategies as st

import cypool
from cypool.mujoco.family import ASSETS, TASKS

CLEAN = (ValueError, KeyError, IndexError, TypeError, OverflowError)
XML = {task: os.path.join(ASSETS, cypool.mujoco.family.task_module(task).DEFAULTS["xml_file"])
       for task in TASKS}


def write(spec, tmp_path, name="model.xml"):
    path = os.path.join(tmp_path, name)
    spec.compile()
    with open(path, "w") as f:
        f.write(spec.to_xml())
    return path


def drop_joints(task, keep):
    """The task's model with only its first `keep` joints (and the actuators that drive them)."""
    spec = mujoco.MjSpec.from_file(XML[task])
    for t in list(spec.tendons):       # Humanoid's tendons name joints
        spec.delete(t)
    for j in list(spec.joints)[keep:]:
        for a in [a for a in spec.actuators if a.target == j.name]:
            spec.delete(a)
        spec.delete(j)
    return spec


def gym_outcome(task, steps=5, **kwargs):
    """gymnasium's observations and rewards for a few steps, or the exception it raised."""
    try:
        env = gym.make(task, disable_env_checker=True, **kwargs)
        obs, _ = env.reset(seed=3)
        rng = np.random.default_rng(0)
        out = [obs]
        for _ in range(steps):
            a = rng.uniform(-1, 1, env.action_space.shape)
            o, r, term, trunc, _ = env.step(a)
            out += [o, np.float64(r), term]
            if term or trunc:
                break
        env.close()
        return out
    except Exception as exc:  # noqa: BLE001 - the reference's outcome, whatever it is
        return exc


def cypool_outcome(task, steps=5, **kwargs):
    try:
        env = cypool.make_vec(task, 1, **kwargs)
    except CLEAN as exc:
        return exc
    try:
        obs, _ = env.reset(seed=3)
        rng = np.random.default_rng(0)
        out = [obs[0]]
        for _ in range(steps):
            a = rng.uniform(-1, 1, (1,) + env.single_action_space.shape)
            o, r, term, trunc, info = env.step(a)
            out += [info["final_obs"][0] if "final_obs" in info else o[0], r[0], term[0]]
            if term[0] or trunc[0]:
                break
        return out
    finally:
        env.close()


def assert_matches_or_clean(task, **kwargs):
    ref, got = gym_outcome(task, **kwargs), cypool_outcome(task, **kwargs)
    if isinstance(ref, Exception):
        assert isinstance(got, CLEAN), f"gymnasium raised {ref!r}, cypool returned values"
        return got
    assert not isinstance(got, Exception), f"gymnasium runs this model, cypool raised {got!r}"
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert np.array_equal(np.asarray(g), np.asarray(r), equal_nan=True)
    return None


# ---------------------------------------------------------------- models too small for a task
@pytest.mark.parametrize("task,keep", [
    ("Pusher-v5", 1), ("Reacher-v5", 1), ("Ant-v5", 0), ("Hopper-v5", 1),
    ("Walker2d-v5", 2), ("InvertedDoublePendulum-v5", 1), ("InvertedDoublePendulum-v5", 0),
    ("Humanoid-v5", 0), ("HumanoidStandup-v5", 0), ("Swimmer-v5", 1), ("HalfCheetah-v5", 0),
    ("InvertedPendulum-v5", 0),
])
def test_model_missing_joints(tmp_path, task, keep):
    path = write(drop_joints(task, keep), tmp_path)
    with pytest.raises(ValueError, match=f"{task}.*model.xml"):
        cypool.make_vec(task, 2, xml_file=path)
    # gymnasium cannot run these either
    assert isinstance(gym_outcome(task, xml_file=path), Exception)


@pytest.mark.parametrize("task,body", [("Reacher-v5", "fingertip"), ("Reacher-v5", "target"),
                                       ("Pusher-v5", "object"), ("Pusher-v5", "goal")])
def test_model_missing_named_body(tmp_path, task, body):
    spec = mujoco.MjSpec.from_file(XML[task])
    spec.body(body).name = body + "_renamed"
    path = write(spec, tmp_path)
    with pytest.raises(ValueError, match=f"{task} needs a body named '{body}'"):
        cypool.make_vec(task, 1, xml_file=path)


def test_ant_v4_needs_its_torso(tmp_path):
    """Ant-v4 reads the body named "torso" (gymnasium's v4 get_body_com("torso")), Ant-v5 its
    main_body index: a model whose torso is renamed is refused for v4, as gymnasium fails."""
    spec = mujoco.MjSpec.from_file(XML["Ant-v5"])
    spec.body("torso").name = "torso_renamed"
    path = write(spec, tmp_path)
    with pytest.raises(ValueError, match="Ant-v4 needs a body named 'torso'"):
        cypool.make_vec("Ant-v4", 1, xml_file=path)
    assert isinstance(gym_outcome("Ant-v4", xml_file=path), KeyError)
    cypool.make_vec("Ant-v5", 1, xml_file=path).close()       # main_body=1 needs no name


def test_double_pendulum_without_site(tmp_path):
    spec = mujoco.MjSpec.from_file(XML["InvertedDoublePendulum-v5"])
    for s in list(spec.sites):
        spec.delete(s)
    path = write(spec, tmp_path)
    with pytest.raises(ValueError, match="nsite >= 1"):
        cypool.make_vec("InvertedDoublePendulum-v5", 1, xml_file=path)


# --------------------------------------------------- models gymnasium runs: cypool runs them too
def chain_swimmer(links):
    """gymnasium's swimmer.xml structure with `links` segments: nq = links + 2, nu = links - 1."""
    body = ""
    for k in reversed(range(1, links)):
        body = (f'<body name="b{k}" pos="-1 0 0"><geom type="capsule" fromto="0 0 0 -1 0 0" '
                f'size="0.1"/><joint name="j{k}" type="hinge" axis="0 0 1" range="-100 100" '
                f'limited="true"/>{body}</body>')
    motors = "".join(f'<motor joint="j{k}" ctrllimited="true" ctrlrange="-1 1" gear="150"/>'
                     for k in range(1, links))
    return textwrap.dedent(f"""\
        <mujoco model="swimmer">
          <option density="4000" integrator="RK4" timestep="0.01" viscosity="0.1"/>
          <default><geom conaffinity="0" condim="1" contype="0" rgba="0.8 0.6 .4 1"/>
            <joint armature="0.1"/></default>
          <worldbody>
            <body name="torso" pos="0 0 0">
              <geom density="1000" fromto="1.5 0 0 0.5 0 0" size="0.1" type="capsule"/>
              <joint axis="1 0 0" name="slider1" pos="0 0 0" type="slide"/>
              <joint axis="0 1 0" name="slider2" pos="0 0 0" type="slide"/>
              <joint axis="0 0 1" name="free_body_rot" pos="0 0 0" type="hinge"/>
              {body}
            </body>
          </worldbody>
          <actuator>{motors}</actuator>
        </mujoco>""")


def test_model_larger_than_64_everything(tmp_path):
    """No fixed cap: 80 links give nq = 82, nv = 82, nu = 79, nbody = 81, all > 64."""
    path = os.path.join(tmp_path, "swimmer80.xml")
    with open(path, "w") as f:
        f.write(chain_swimmer(80))
    m = mujoco.MjModel.from_xml_path(path)
    assert min(m.nq, m.nv, m.nu, m.nbody) > 64
    assert assert_matches_or_clean("Swimmer-v5", xml_file=path) is None


def test_ant_larger_than_64_bodies(tmp_path):
    """Ant's contact cost and observation over 70 extra bodies (nbody * 6 > 6 * 64)."""
    spec = mujoco.MjSpec.from_file(XML["Ant-v5"])
    torso = spec.body("torso")
    for k in range(70):
        b = torso.add_body(name=f"extra{k}", pos=[0, 0, 0.01 * k])
        b.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.01, 0, 0], contype=0,
                   conaffinity=0)
    path = write(spec, tmp_path)
    assert mujoco.MjModel.from_xml_path(path).nbody > 64
    assert assert_matches_or_clean("Ant-v5", xml_file=path) is None


@pytest.mark.parametrize("task", ["HalfCheetah-v5", "Hopper-v5", "Ant-v5", "Swimmer-v5",
                                  "Humanoid-v5", "InvertedPendulum-v5"])
def test_model_without_actuators(tmp_path, task):
    spec = mujoco.MjSpec.from_file(XML[task])
    for a in list(spec.actuators):
        spec.delete(a)
    path = write(spec, tmp_path)
    env = cypool.make_vec(task, 2, xml_file=path)
    assert env.single_action_space.shape == (0,)
    env.close()
    assert assert_matches_or_clean(task, xml_file=path) is None


def test_pusher_with_a_ball_joint(tmp_path):
    """nv < 4 < nq: gymnasium's qvel[-4:] = 0 zeroes what there is; the kernel must not write
    before qvel."""
    spec = mujoco.MjSpec.from_file(XML["Pusher-v5"])
    for j in list(spec.joints):
        for a in [a for a in spec.actuators if a.target == j.name]:
            spec.delete(a)
        spec.delete(j)
    spec.body("object").add_joint(name="ball", type=mujoco.mjtJoint.mjJNT_BALL)
    path = write(spec, tmp_path)
    m = mujoco.MjModel.from_xml_path(path)
    assert (m.nq, m.nv) == (4, 3)
    assert_matches_or_clean("Pusher-v5", xml_file=path)


# ------------------------------------------------------------------ index- and name-valued kwargs
@pytest.mark.parametrize("value,exc", [(10**7, IndexError), (-5, IndexError), (1000, IndexError),
                                       (14, IndexError), ("nope", KeyError), (1.7, TypeError),
                                       (None, TypeError), ([1], TypeError)])
def test_main_body_checked_as_gymnasium(value, exc):
    with pytest.raises(exc, match="main_body"):
        cypool.make_vec("Ant-v5", 2, main_body=value)
    with pytest.raises(exc):
        gym_outcome_raises("Ant-v5", main_body=value)


def gym_outcome_raises(task, **kwargs):
    out = gym_outcome(task, **kwargs)
    if isinstance(out, Exception):
        raise out


@pytest.mark.parametrize("value", [True, 0, 13, "torso", "aux_1", np.int64(2)])
def test_main_body_values_gymnasium_accepts(value):
    assert assert_matches_or_clean("Ant-v5", main_body=value) is None


def test_main_body_in_population_members():
    with pytest.raises(IndexError, match="main_body"):
        cypool.make_population("Ant-v5", 2, 1, member_kwargs=[{}, {"main_body": 99}])


# ------------------------------------------------------------------------ numeric kwarg domains
@pytest.mark.parametrize("task", ["Ant-v5", "Hopper-v5", "HalfCheetah-v5", "Humanoid-v5",
                                  "InvertedPendulum-v5", "Swimmer-v5"])
@pytest.mark.parametrize("value,exc", [(np.inf, OverflowError), (np.nan, OverflowError),
                                       (-0.1, ValueError), (1e308, OverflowError),
                                       (-np.inf, OverflowError)])
def test_reset_noise_scale_domain(task, value, exc):
    with pytest.raises(exc, match="reset_noise_scale"):
        cypool.make_vec(task, 1, reset_noise_scale=value)
    assert isinstance(gym_outcome(task, reset_noise_scale=value), exc)


def test_reset_noise_scale_zero_is_fine():
    assert assert_matches_or_clean("Hopper-v5", reset_noise_scale=0.0) is None


def test_noise_scale_checked_for_members_and_configure():
    with pytest.raises(ValueError, match="reset_noise_scale"):
        cypool.make_population("Hopper-v5", 2, 1, member_kwargs=[{}, {"reset_noise_scale": -1}])


# ------------------------------------------------------------------------------- out of memory
OOM_SCRIPT = r"""
import resource, sys
import numpy as np, cypool
small = cypool.make_vec("Hopper-v5", 2, seed=0)
small.reset(seed=0)
vm = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize")).split()[1]) << 10
limit = vm + (5 << 29)          # 2.5 GiB more than this process maps now
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
try:
    cypool.make_vec("Hopper-v5", 4, xml_file=sys.argv[1])
except MemoryError as exc:
    print("MemoryError:", exc)
else:
    sys.exit("no MemoryError")
obs, *_ = small.step(np.zeros((2, 3)))
assert obs.shape == (2, 11)
again = cypool.make_vec("Hopper-v5", 2)   # the process is intact: new pools still work
again.reset(seed=1)
again.close()
small.close()
print("intact")
"""


def test_out_of_memory_raises_memoryerror(tmp_path):
    """A model whose arena cannot be allocated: MuJoCo's fatal 'Could not allocate memory'
    becomes MemoryError instead of exiting the process."""
    if os.environ.get("CYPOOL_SANITIZER"):
        pytest.skip("address-space limits and ASan's shadow memory do not mix")
    spec = mujoco.MjSpec.from_file(XML["Hopper-v5"])
    spec.memory = 1 << 30   # 1 GiB of arena per mjData: the 3rd of 4 envs does not fit
    path = write(spec, tmp_path)
    out = subprocess.run([sys.executable, "-c", OOM_SCRIPT, path], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "MemoryError: cypool: out of memory" in out.stdout
    assert "intact" in out.stdout


# ---------------------------------------------------------------------------------- model fuzz
def _mutations(draw, spec):
    """Remove, rename or resize a few of the model's elements."""
    for step in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["joint", "actuator", "body", "site", "rename", "resize"]))
        if op == "joint" and spec.joints:
            j = draw(st.sampled_from(list(spec.joints)))
            for a in [a for a in spec.actuators if a.target == j.name]:
                spec.delete(a)
            spec.delete(j)
        elif op == "actuator" and spec.actuators:
            spec.delete(draw(st.sampled_from(list(spec.actuators))))
        elif op == "body" and len(spec.bodies) > 1:
            b = draw(st.sampled_from(list(spec.bodies)[1:]))
            names = set()
            stack = [b]
            while stack:
                cur = stack.pop()
                names.update(j.name for j in cur.joints)
                stack.extend(cur.bodies)
            for a in [a for a in spec.actuators if a.target in names]:
                spec.delete(a)
            spec.delete(b)   # a tendon through its joints: no longer compiles, not a case
        elif op == "site" and spec.sites:
            spec.delete(draw(st.sampled_from(list(spec.sites))))
        elif op == "rename" and len(spec.bodies) > 1:
            draw(st.sampled_from(list(spec.bodies)[1:])).name = f"renamed{step}"
        elif op == "resize" and spec.geoms:
            g = draw(st.sampled_from(list(spec.geoms)))
            g.size = [s * draw(st.floats(0.2, 3.0)) for s in g.size]


@st.composite
def mutated_models(draw):
    task = draw(st.sampled_from(sorted(TASKS)))
    spec = mujoco.MjSpec.from_file(XML[task])
    _mutations(draw, spec)
    return task, spec


@settings(max_examples=int(os.environ.get("CYPOOL_MODEL_FUZZ_EXAMPLES", "60")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=mutated_models())
def test_model_fuzz(tmp_path, case):
    task, spec = case
    try:
        path = write(spec, tmp_path, "fuzz.xml")
    except Exception:  # noqa: BLE001 - not a model MuJoCo can compile: not a case
        return
    assert_matches_or_clean(task, xml_file=path)
