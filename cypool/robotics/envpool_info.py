"""The info values EnvPool 1.2.5 reports for its Gymnasium-Robotics ids that only this family
can compute (FamilySpec.envpool_info, merged by cypool.envpool into the names
cypool._envpool_robotics gives): ``distance`` of the Shadow Hand's manipulation ids and of
Adroit. EnvPool's formulas (measured with the installed EnvPool:
tests/test_envpool_robotics.py), gymnasium-robotics' arithmetic: EnvPool's own (libm's acos, a
left-to-right sum of squares) differs from numpy's in the last bits (HandManipulate up to
1.6e-15)."""
import functools
from functools import lru_cache

import numpy as np


def _manipulate_distance(engine, ids):
    """HandManipulate: ``d_pos + d_rot`` of gymnasium-robotics' ``_goal_distance`` of each row
    (cypool's kernel, ``_hand.distance``, one goal at a time as the reference's step does:
    its batched call would set the Pen's Euler z of row 2, not of each row)."""
    from cypool.robotics import _hand as hk
    out = engine.state_outputs
    ids = np.asarray(ids)
    if len(ids) == 0:
        return np.zeros(0)
    a = np.ascontiguousarray(np.asarray(out["obs"])[ids], np.float64)
    d = np.ascontiguousarray(np.asarray(out["obs.desired_goal"])[ids], np.float64)
    # target modes are the id's (every env's row alike)
    d_pos, d_rot = hk.distance(np.ascontiguousarray(engine.params[ids[0]]), a, d)
    return d_pos + d_rot


def _norms(v):
    """np.linalg.norm of each row as gymnasium-robotics' Adroit step takes it (one 3-vector:
    sqrt of numpy's BLAS dot, which can differ from a left-to-right sum of squares, EnvPool's
    arithmetic, in the last bit). Each row is copied into an array of its own first, as the
    reference's difference of two 3-vectors is: BLAS kernels may sum an unaligned vector in
    another order (OPENBLAS_CORETYPE=Prescott does, on a row of an (n, 3) array)."""
    return np.array([np.linalg.norm(np.array(r)) for r in v], np.float64).reshape(len(v))


@lru_cache(maxsize=None)
def _nail_goal_offset(path):
    """site_xpos[nail_goal] - xpos[nail_board] as MuJoCo adds it (mj_local2Global: the board's
    xmat times the site's pos, then + xpos), with ``xpos`` the board's body_pos (a child of
    the world) and ``xmat`` fixed (only its position is drawn): the model's own values (the
    Hammer's model file ``path``)."""
    from cypool._mujoco_import import import_mujoco
    mujoco = import_mujoco()
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    board, site = m.body("nail_board").id, m.site("nail_goal").id
    if m.body_parentid[board] != 0 or m.site_bodyid[site] != board:
        raise ValueError("AdroitHandHammer: the installed model's nail_goal is not a site of "
                         "the world's nail_board body")
    mujoco.mj_kinematics(m, d)
    x, p = d.xmat[board].reshape(3, 3), m.site_pos[site]
    return (x[:, 0] * p[0] + x[:, 1] * p[1]) + x[:, 2] * p[2]


def _nail_goal(engine, ids, path):
    """site_xpos[nail_goal] of the rows ``ids``: the board's position (its model x, y or an
    initial_state_dict's, the drawn z: what _adroit.pyx writes into the env's model) plus
    the site's fixed offset."""
    from cypool.robotics import _adroit as ad
    at, base = ad.TASK_STATE_AT, ad.PARAMS["base"]
    pos = np.empty((len(ids), 3))
    for k, i in enumerate(ids):
        ts = engine.task_state_of(int(i))
        xy = ts[at["fix"]:at["fix"] + 2] if ts[at["fix_set"]] != 0.0 else \
            engine.params[i, base:base + 2]
        pos[k] = (xy[0], xy[1], ts[at["model"]])
    return pos + _nail_goal_offset(path)


def _adroit_distance(task, path):
    """EnvPool's Adroit ``distance`` of the rows ``ids``: the ``goal_distance`` of
    gymnasium-robotics' step (0 on a reset, as EnvPool's), from cypool's observation: Door the
    hinge angle (obs[28]); Hammer |nail - nail_goal| (the nail's site is obs[42:45]); Pen
    |obj_pos - desired_pos| (obs[-6:-3]); Relocate |obj_pos - target_pos| (obs[-3:]). ``path()``:
    the task's model file."""
    def distance(engine, ids):
        ids = np.asarray(ids)
        obs = np.asarray(engine.state_outputs["obs"])[ids]
        if task == "Door":
            d = obs[:, 28]
        elif task == "Hammer":
            d = _norms(obs[:, 42:45] - _nail_goal(engine, ids, path()))
        elif task == "Pen":
            d = _norms(obs[:, -6:-3])
        else:
            d = _norms(obs[:, -3:])
        return np.where(engine.elapsed()[ids] > 0, d, 0.0)
    distance.__qualname__ = f"_adroit_distance.{task}"
    return distance


def envpool_info(env_id, model_path=None):
    """The spec's ``envpool_info`` of a HandManipulate or Adroit id (None for the others;
    ``model_path(task)``: an Adroit task's model file)."""
    if env_id.startswith("HandManipulate"):
        return {"distance": (_manipulate_distance, np.float64)}
    for task in ("Door", "Hammer", "Pen", "Relocate"):
        if env_id.startswith("AdroitHand" + task):
            return {"distance": (_adroit_distance(task, functools.partial(model_path, task)),
                                 np.float64)}
    return None
