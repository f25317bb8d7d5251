"""Parameter rows for the task kernels, filled from a task's table of kwargs.

A task declares its row as a list of (column, kwarg name, kind) entries, in the order the
kwargs are read, and computes only what is special to it (model-derived values, obs_dim).
The kwargs arrive validated by cypool.mujoco.family.merge_kwargs.
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
