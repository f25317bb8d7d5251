"""The reference CoupledHalfCheetahEnv (gymnasium-robotics 1.4.2's MaMuJoCo scenario) patched
to run on the installed MuJoCo, in the tests only.

The reference reads ``data.ten_J[0][:2]``: MuJoCo's dense (ntendon, nv) tendon Jacobian. The
installed MuJoCo (4.x) keeps ten_J sparse (``data.ten_J`` is its nonzeros), and the unpatched
reference fails at construction (IndexError). ``Coupled`` runs it on an mjData whose ``ten_J``
reads the dense matrix (``mujoco.mju_sparse2dense``): everything else is the installed
reference's own code."""
import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
pytest.importorskip("gymnasium_robotics")
from gymnasium_robotics.envs.multiagent_mujoco import coupled_half_cheetah  # noqa: E402


class DenseTenJ(mujoco.MjData):
    """mjData whose ten_J is the dense (ntendon, nv) Jacobian, as older MuJoCo kept it."""

    @property
    def ten_J(self):
        m = self.model
        out = np.zeros((m.ntendon, m.nv))
        mujoco.mju_sparse2dense(out, super().ten_J, m.ten_J_rownnz, m.ten_J_rowadr,
                                m.ten_J_colind)
        return out


class Coupled(coupled_half_cheetah.CoupledHalfCheetahEnv):
    """The reference env on a DenseTenJ."""

    def _initialize_simulation(self):
        model, _ = super()._initialize_simulation()
        return model, DenseTenJ(model)
