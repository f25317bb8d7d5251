"""Rendering shared by the robotics ids: their render kwargs and camera configs, and how
MjPool draws their frames (on the worker threads: render() through Engine.run_job,
from_pixels inside the step), each after what the reference's render callback moves
(MjPool.setup_render_prep: target sites, a target joint, touch colours)."""
import numpy as np

from cypool._core.spec import Kwarg


# the camera keys a default_camera_config may set (those MjPool.setup_render applies)
CAMERA_KEYS = ("distance", "azimuth", "elevation", "lookat", "trackbodyid")


def render_kwargs(**defaults):
    """Make-scope Kwargs of a robotics spec's render kwargs (width, height, ...), and
    from_pixels / channels_first (FamilySpec.render_pixels: the frames as observations)."""
    from cypool.mujoco.family import RENDER_KINDS
    defaults = dict(defaults, from_pixels=False, channels_first=False)
    return {k: Kwarg(v, kind=RENDER_KINDS.get(k, "any"), scope="make")
            for k, v in defaults.items()}


def camera_config(value, default):
    """A default_camera_config kwarg (None: the reference's ``default``), checked."""
    if value is None:
        value = default
    if not isinstance(value, dict) or any(k not in CAMERA_KEYS for k in value):
        raise ValueError(f"default_camera_config must be a dict with keys among {CAMERA_KEYS}, "
                         f"got {value!r}")
    if "lookat" in value and np.shape(value["lookat"]) != (3,):
        raise ValueError("default_camera_config['lookat'] must be 3 numbers")
    return dict(value)


def pixel_kwargs(kw):
    """MjPool's ``pixels`` and ``channels_first`` for a spec's make kwargs ``kw``
    (from_pixels: each observation is the env's frame, drawn on its worker's thread)."""
    return dict(pixels=(kw["height"], kw["width"]) if kw["from_pixels"] else None,
                channels_first=bool(kw["channels_first"]))


def setup_render(engine, model, kw, cam_config, **prep):
    """Set MjPool ``engine`` up to render as gymnasium's MujocoRenderer renders the
    reference's model (its render kwargs ``kw``: width, height, optional camera_id /
    camera_name; its default camera config), each frame after what the reference's render
    callback does (``prep``: MjPool.setup_render_prep's arguments); with from_pixels, make
    the caller's GL context now (a missing driver is a clear error here)."""
    from cypool.mujoco.family import _render_setup, gl_backend_request
    full = dict(camera_id=None, camera_name=None, visual_options=None, max_geom=1000)
    full.update({k: kw[k] for k in ("width", "height", "camera_id", "camera_name") if k in kw})
    w, h, cam, vis, max_geom = _render_setup(model, full)
    engine.setup_render(w, h, cam, cam_config, vis, max_geom)
    if prep:
        engine.setup_render_prep(**prep)
    if kw.get("from_pixels"):
        engine.open_pixel_renderer(gl_backend_request())


def site_id(model, mujoco, name):
    """The id of site ``name``, which must be on a body welded to the world (the render
    callbacks' visual sites)."""
    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, name)
    if i < 0:
        raise ValueError(f"the model has no site {name!r}")
    if model.body_weldid[model.site_bodyid[i]] != 0:
        raise ValueError(f"the model's site {name!r} must be on a body welded to the world "
                         "(as gymnasium-robotics' are)")
    return i


def render(engine, ids, mode, kwargs):
    """The robotics ids' render hook: the frames of envs ``ids`` in ``mode`` (those of
    gymnasium's MujocoRenderer: "rgb_array" frames, "depth_array" depth buffers, as
    cypool/mujoco/family.py's ``_render``), each after what the reference's render callback
    does (MjPool.setup_render_prep)."""
    from cypool.mujoco.family import RENDER_MODES, _render
    if mode not in RENDER_MODES:
        raise ValueError(f"render_mode {mode!r}: robotics ids render among {RENDER_MODES}")
    return _render(engine, ids, mode, None)


def no_render(engine, ids, mode, kwargs):
    raise RuntimeError("cypool: this pool renders through its build's render hook")
