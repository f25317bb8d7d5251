"""Action batches of the robotics ids whose kernels read the action from each env's parameter
row (Fetch, the Shadow Hand, Franka Kitchen: their models' controls are not the action)."""
import numpy as np


def load_row_actions(fam, actions, env_ids, size, col, *, mark_f32=True):
    """Check an action batch ((n, size), float32/float64/integers, finite) and copy it into
    columns ``col:col + size`` of the envs' parameter rows; ``mark_f32``: record in the
    engine's ``act_f32`` which envs got float32 actions (the kernels then scale in float32)."""
    try:
        a = np.asarray(actions)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"actions must be an array of shape (num_envs, {size}): "
                         f"{exc}") from None
    n = fam.engine.num_envs if env_ids is None else len(env_ids)
    if a.shape != (n, size):
        raise ValueError(f"actions must have shape ({n}, {size}), got {a.shape}")
    if a.dtype.kind == "f" and a.dtype.itemsize in (4, 8):
        f32 = a.dtype.itemsize == 4
    elif a.dtype.kind in "iu":
        f32 = False
    else:
        raise TypeError(f"actions must be float32 or float64 (or integers), got {a.dtype}")
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        bad = np.flatnonzero(~np.isfinite(a).all(axis=1)).tolist()
        raise ValueError(f"actions contain NaN or Inf (env(s) {bad})")
    rows = slice(None) if env_ids is None else env_ids
    fam.engine.params[rows, col:col + size] = a
    if mark_f32:
        fam.engine.act_f32[rows] = f32
