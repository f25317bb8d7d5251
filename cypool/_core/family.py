"""The family contract (version 1, ``cypool.registry.FAMILY_API_VERSION``): what a family
object gives the Pool and the front ends over it. :class:`cypool._core.spec.SpecFamily` is
cypool's one implementation; a family package may bring its own (``cypool.families``)."""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np


@runtime_checkable
class Family(Protocol):
    """What a family object gives the façade (``cypool.VectorEnv``) and populations.

    Attributes
    ----------
    engine
        The ``cypool._core._engine.Engine`` subclass instance that owns the envs.
    single_observation_space, single_action_space
        One env's spaces.
    metadata
        gymnasium's env metadata (``render_modes``, ``render_fps``).
    info_layout
        ``[(key, first column, width, dtype, on_step, on_reset), ...]``: where each info key
        lives in the engine's float64 info matrix, its dtype (or ``"action"``: the action's),
        and whether it is reported after a step and after a reset.
    kwargs
        The complete, validated constructor kwargs of the pool.
    action_dtype
        The dtype of "action"-typed info keys for the whole pool (float32 when every env was
        last given float32 actions); a family may give per-env dtypes with
        ``action_dtype_of(ids)``.
    """

    engine: Any
    single_observation_space: gym.Space
    single_action_space: gym.Space
    metadata: dict
    info_layout: list
    kwargs: dict
    action_dtype: Any

    def load_actions(self, actions: np.ndarray, env_ids=None) -> None:
        """Validate an action batch (rows for ``env_ids``, or for every env) and copy it into
        the engine; raise ``TypeError``/``ValueError`` before any env moves."""

    def extra_info(self, info: dict, kinds: np.ndarray, ids) -> None:
        """Add family-specific info keys (e.g. MuJoCo warnings) to ``info``."""

    def merged_kwargs(self, kwargs: dict) -> dict:
        """The complete, validated kwargs: the family's defaults updated with ``kwargs``."""

    def configure_envs(self, ids, kwargs: dict) -> None:
        """Give envs ``ids`` the complete kwargs ``kwargs`` (populations' per-member settings);
        validate everything before any env changes."""

    def set_max_episode_steps(self, ids, limit: int) -> None:
        """Truncation limit of envs ``ids``, from their next step."""

    # Optional: ``render(ids)`` returns the frames ``(len(ids), H, W, 3)`` uint8 of envs ids
    # for the render modes ``metadata["render_modes"]`` lists (none: the family renders not).
