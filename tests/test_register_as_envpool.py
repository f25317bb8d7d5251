"""cypool.envpool.register_as_envpool() (issue #45 item 7): after it, `import envpool` in a
library (TorchRL's MultiThreadedEnv) gives cypool.envpool. Each check runs in a fresh
interpreter, as the real EnvPool is installed here and must not be imported first."""
import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from _envpool_ref import UNDER_ASAN  # noqa: E402

pytest.importorskip("torchrl")


def _run(code, timeout=300):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, timeout=timeout)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-5000:]
    return out.stdout


# TorchRL's MultiThreadedEnv imports treevalue on reset (only to test for a TreeValue
# observation, which EnvPool gives for nested ones and cypool never does); where it is not
# installed a stand-in module with that class keeps the check running.
_TREEVALUE = """
try:
    import treevalue  # noqa: F401
except ImportError:
    import types
    tv = types.ModuleType("treevalue")
    class TreeValue: pass
    tv.TreeValue = tv.FastTreeValue = TreeValue
    sys.modules["treevalue"] = tv
"""


def test_import_envpool_gives_cypools_module_and_its_submodules():
    _run("""
        import importlib.util, sys
        import cypool.envpool as cep
        envpool_mod = cep.register_as_envpool()
        assert cep.register_as_envpool() is envpool_mod        # idempotent
        import envpool
        assert envpool is envpool_mod and envpool.make is cep.make
        assert envpool.make_dm is cep.make_dm and envpool.__version__ == "1.2.5"
        import envpool.python.envpool
        from envpool.python.envpool import EnvPoolMixin
        from envpool.python.protocol import EnvPool, EnvSpec
        from envpool.python.dm_envpool import DMEnvPoolMixin
        from envpool.python.gymnasium_envpool import GymnasiumEnvPoolMixin
        from envpool.registration import list_all_envs
        assert importlib.util.find_spec("envpool") is not None     # what TorchRL asks
        assert importlib.util.find_spec("envpool.python.envpool") is not None
        assert list_all_envs() == cep.list_all_envs()
        gym_env = envpool.make("CartPole-v1", env_type="gym", num_envs=2)
        dm_env = envpool.make("CartPole-v1", env_type="dm", num_envs=2)
        for e in (gym_env, dm_env):
            assert isinstance(e, EnvPoolMixin) and isinstance(e, EnvPool)
        assert isinstance(gym_env, GymnasiumEnvPoolMixin)
        assert isinstance(dm_env, DMEnvPoolMixin)
        assert not isinstance(dm_env, GymnasiumEnvPoolMixin)
        assert not any(getattr(m, "__file__", None) and "site-packages/envpool" in m.__file__
                       for k, m in list(sys.modules.items()) if k.startswith("envpool"))
    """)


def test_refused_once_the_real_envpool_is_imported():
    if importlib.util.find_spec("envpool") is None:
        pytest.skip("EnvPool is not installed")
    if UNDER_ASAN:
        pytest.skip("EnvPool's import aborts under preloaded libasan; checked in the normal run")
    _run("""
        import envpool                     # the real one
        import cypool.envpool as cep
        try:
            cep.register_as_envpool()
        except RuntimeError as exc:
            assert "already imported" in str(exc) and "before" in str(exc), exc
        else:
            raise AssertionError("register_as_envpool() accepted the real envpool")
        import sys
        assert sys.modules["envpool"] is envpool
    """)


def test_torchrl_multithreadedenv_rollouts_through_it():
    """TorchRL's MultiThreadedEnv on CartPole, Pong and CheetahRun: its rollouts (TorchRL's
    random actions) equal cypool.envpool stepped directly with the same seed (EnvPool's
    default 42, which MultiThreadedEnv keeps) and actions."""
    _run(textwrap.dedent("""
        import importlib.util, sys
        import numpy as np
        import cypool.envpool as cep
        cep.register_as_envpool()
    """) + _TREEVALUE + textwrap.dedent("""
        import torch
        from torchrl.envs import MultiThreadedEnv
        if importlib.util.find_spec("gym") is None:
            # TorchRL reads EnvPool's spaces under its "gym" backend: without a `gym`
            # module it cannot (the same with the real EnvPool)
            try:
                MultiThreadedEnv(num_workers=2, env_name="CartPole-v1")
            except ModuleNotFoundError as exc:
                assert "gym" in str(exc), exc
            else:
                raise AssertionError("TorchRL built an EnvPool env without `gym`")
        import gymnasium
        sys.modules["gym"] = gymnasium      # what the docs tell TorchRL users to do

        def check(task, steps):
            torch.manual_seed(0)
            env = MultiThreadedEnv(num_workers=2, env_name=task)
            assert isinstance(env._env, cep.EnvPoolEnv), type(env._env)
            td = env.rollout(steps, break_when_any_done=False)
            assert td.batch_size == torch.Size([2, steps]), td.batch_size
            ref = cep.make_gymnasium(task, num_envs=2)        # seed 42, as TorchRL's
            obs, _ = ref.reset()

            def same(key_obs, got):
                if isinstance(key_obs, dict):
                    for k, v in key_obs.items():
                        assert np.array_equal(got[k].numpy(), v), (task, k)
                else:
                    assert np.array_equal(got["observation"].numpy(), key_obs), task

            same(obs, td[:, 0])
            for t in range(steps):
                a = td["action"][:, t].numpy()
                obs, rew, term, trunc, _ = ref.step(a)
                nxt = td["next"][:, t]
                same(obs, nxt)
                assert np.array_equal(nxt["reward"].numpy().reshape(-1), rew), task
                assert np.array_equal(nxt["terminated"].numpy().reshape(-1), term), task
                assert np.array_equal(nxt["truncated"].numpy().reshape(-1), trunc), task
            ref.close(), env.close()
            return td

        td = check("CartPole-v1", 40)               # episodes end and auto-reset
        assert td["next", "done"].any()
        td = check("Pong-v5", 4)
        assert td["observation"].dtype == torch.uint8
        assert td["observation"].shape[-3:] == (4, 84, 84)
        td = check("CheetahRun-v1", 4)
        assert td["position"].shape[-1] == 8 and td["velocity"].shape[-1] == 9
        print("ok")
    """), timeout=600)
