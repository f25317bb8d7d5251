"""TorchRL's PettingZooWrapper takes cypool's single env as it takes mpe2's: its specs check
out, and the same seeds give the same rollout as over the reference."""
import pytest
import torch

from _ma_ref import MODULES, ours, reference

torchrl = pytest.importorskip("torchrl")
from torchrl.envs.libs.pettingzoo import PettingZooWrapper  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

pytestmark = pytest.mark.skipif("simple_spread_v3" not in MODULES,
                                reason="simple_spread_v3 not served")


def _rollout(module):
    env = PettingZooWrapper(env=module.parallel_env(max_cycles=8), use_mask=False)
    env.set_seed(3)
    torch.manual_seed(0)
    td = env.rollout(20, break_when_any_done=False)
    env.close()
    return td


def test_specs_and_rollout_equal_the_references():
    env = PettingZooWrapper(env=ours("simple_spread_v3").parallel_env(max_cycles=8),
                            use_mask=False)
    check_env_specs(env)
    env.close()
    got, want = _rollout(ours("simple_spread_v3")), _rollout(reference("simple_spread_v3"))
    assert set(got.keys(True, True)) == set(want.keys(True, True))
    for key in want.keys(True, True):
        assert torch.equal(got[key], want[key]), key
