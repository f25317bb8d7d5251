"""Shared by the adapters: a gymnasium vector info dict as one dict per env."""
from __future__ import annotations

from typing import Any

__all__ = ["split_info"]


def split_info(info: dict[str, Any], num_envs: int) -> list[dict[str, Any]]:
    """Turn a gymnasium vector info dict into one dict per env.

    Parameters
    ----------
    info : dict
        A vector info dict: ``info[k]`` has one entry per env and the bool mask ``info["_k"]``
        says which envs reported ``k``; nested dicts follow the same rule.
    num_envs : int
        Number of envs (length of every array in ``info``).

    Returns
    -------
    list of dict
        ``num_envs`` dicts; env i's holds ``info[k][i]`` for every ``k`` whose mask is set at i
        (or that has no mask). This is the conversion of gymnasium's ``DictInfoToList``.
    """
    out: list[dict[str, Any]] = [{} for _ in range(num_envs)]
    for key, value in info.items():
        if key.startswith("_"):
            continue
        mask = info.get("_" + key)
        rows = split_info(value, num_envs) if isinstance(value, dict) else value
        if len(rows) != num_envs:
            raise ValueError(f"info[{key!r}] has {len(rows)} entries, expected {num_envs}")
        for i in range(num_envs):
            if mask is None or mask[i]:
                out[i][key] = rows[i]
    return out
