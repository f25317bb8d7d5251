"""Parameter rows for the task kernels, filled from a task's table of kwargs.

A task declares its row as a list of (column, kwarg name, kind) entries, in the order the
kwargs are read, and computes only what is special to it (model-derived values, obs_dim).
The kwargs arrive validated by cypool.mujoco.family.check_task_kwargs.
"""
import numpy as np

NUMBER = "number"  # the value as given (float64)
BOOL = "bool"      # bool(value): 1.0 or 0.0
PAIR = "pair"      # a (low, high) pair into the two columns (lo_column, hi_column)
DT = "dt"          # model.opt.timestep * value: gymnasium's dt, for the frame_skip kwarg


def param_row(model, kw, nparam, table):
    """A float64 row of `nparam` values, zero where the table has no entry."""
    p = np.zeros(nparam)
    for column, name, kind in table:
        value = kw[name]
        if kind == NUMBER:
            p[column] = value
        elif kind == BOOL:
            p[column] = bool(value)
        elif kind == PAIR:
            p[column[0]], p[column[1]] = value
        elif kind == DT:
            p[column] = model.opt.timestep * value
        else:
            raise ValueError(f"unknown parameter kind {kind!r}")
    return p


def require(env_id, model, kw, needs):
    """Refuse a model that lacks what the task's kernels index, before any kernel runs.

    needs: (model attribute, minimum, what the kernels read) triples, e.g.
    ("nq", 3, "qpos[0:3] (x, y and the torso height)").
    """
    for attr, minimum, what in needs:
        have = getattr(model, attr)
        if have < minimum:
            raise ValueError(f"xml_file: {env_id} needs a model with {attr} >= {minimum} (it reads "
                             f"{what}); {kw['xml_file']} has {attr} = {have}")


def body_id(env_id, model, kw, name):
    """The id of a body the task needs by name (gymnasium's data.body(name))."""
    try:
        return model.body(name).id
    except KeyError:
        raise ValueError(f"xml_file: {env_id} needs a body named {name!r}; {kw['xml_file']} has "
                         f"none") from None


def kwarg_body_id(model, kw, key):
    """A body given by a kwarg as a name or an index, checked as gymnasium's data.body(value)
    checks it: an unknown name raises KeyError, an index out of range IndexError, any other
    type TypeError."""
    value = kw[key]
    if isinstance(value, (str, bool, int, np.integer)):
        try:
            return model.body(value).id
        except KeyError as exc:
            raise KeyError(f"{key}: {exc.args[0] if exc.args else exc}") from None
        except IndexError as exc:
            raise IndexError(f"{key}: {exc}") from None
    raise TypeError(f"{key} must be a body name (str) or index (int), got {type(value).__name__}")


def check_noise_scale(kw, key="reset_noise_scale"):
    """gymnasium draws uniform(-s, s): numpy refuses a range that is not finite (OverflowError)
    or negative (ValueError) at the first reset; cypool refuses it when the pool is built."""
    s = float(kw[key])
    span = s - (-s)
    if not np.isfinite(span):
        raise OverflowError(f"{key}: uniform(-{key}, {key}) needs a finite range, got {kw[key]!r}")
    if span < 0:
        raise ValueError(f"{key} must be >= 0, got {kw[key]!r}")
