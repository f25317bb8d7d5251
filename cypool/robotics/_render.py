"""Rendering shared by the robotics ids: their render kwargs and camera configs, and the
frames MjPool draws on the worker threads after placing what the reference moves before its
own frame (target sites, a target joint: SiteRender, OffsetSiteRender)."""
import numpy as np

from cypool._core.spec import Kwarg


# the camera keys a default_camera_config may set (those MjPool.setup_render applies)
CAMERA_KEYS = ("distance", "azimuth", "elevation", "lookat", "trackbodyid")


def _site_id(model, mujoco, name):
    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, name)
    if i < 0:
        raise ValueError(f"the model has no site {name!r}")
    return i


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


def setup_render(engine, model, kw, cam_config):
    """Set MjPool ``engine`` up to render as gymnasium's MujocoRenderer renders the
    reference's model (its render kwargs ``kw``: width, height, optional camera_id /
    camera_name; its default camera config)."""
    from cypool.mujoco.family import _render_setup
    full = dict(camera_id=None, camera_name=None, visual_options=None, max_geom=1000)
    full.update({k: kw[k] for k in ("width", "height", "camera_id", "camera_name") if k in kw})
    w, h, cam, vis, max_geom = _render_setup(model, full)
    engine.setup_render(w, h, cam, cam_config, vis, max_geom)


def static_site_xpos(mujoco, model, data, site, pos):
    """The world position MuJoCo gives ``site`` (on a body welded to the world) when its
    model position is ``pos`` (``model``/``data``: a scratch copy of the pool's model)."""
    model.site_pos[site] = pos
    mujoco.mj_kinematics(model, data)
    return data.site_xpos[site].copy()


class _Prepared:
    """An MjPool whose render_frames also takes ``writes`` (the render callback's data
    writes), so that the MuJoCo family's ``_render`` serves its modes over it."""

    def __init__(self, engine, writes):
        self.engine, self.writes = engine, writes

    @property
    def has_renderer(self):
        return self.engine.has_renderer

    def render_frames(self, ids, rgb, depth, *backend):
        return self.engine.render_frames(ids, rgb, depth, *backend, **self.writes)


def render_frames(engine, ids, mode, **writes):
    """The frames of envs ``ids`` in ``mode`` (those of gymnasium's MujocoRenderer:
    "rgb_array" frames, "depth_array" depth buffers, as cypool/mujoco/family.py's
    ``_render``), each env's data first brought where the reference's render callback brings
    its own (``writes``: forward, site_ids / site_xpos, qpos / qvel values, sensor_sites; see
    MjPool.render_frames)."""
    from cypool.mujoco.family import RENDER_MODES, _render
    if mode not in RENDER_MODES:
        raise ValueError(f"render_mode {mode!r}: robotics ids render among {RENDER_MODES}")
    return _render(_Prepared(engine, writes), ids, mode, None)


class OffsetSiteRender:
    """A render hook for gymnasium-robotics' "Visualize target" callbacks: each of
    ``sites`` (visual sites on bodies welded to the world) gets the model position
    ``value - (site_xpos - site_pos)[offset site]`` (``values(engine, i)``: (k, 3) world
    positions; each env's reference model keeps the positions of its last render, which the
    next offset reads), then mj_forward and the frame. A scratch model and data compute the
    world positions as MuJoCo does."""

    def __init__(self, mujoco, model, num_envs, sites, offset_sites, values):
        self.mujoco, self.model, self.data = mujoco, model, mujoco.MjData(model)
        self.sites = [_site_id(model, mujoco, s) for s in sites]
        self.offset_sites = list(offset_sites)
        for s in self.sites + self.offset_sites:
            if model.body_weldid[model.site_bodyid[s]] != 0:
                raise ValueError(f"the model's sites {sites} (and {offset_sites}) must be on "
                                 "bodies welded to the world (as gymnasium-robotics' are)")
        self.last = np.repeat(model.site_pos[self.sites][None], num_envs, axis=0)
        self.values = values

    def __call__(self, engine, ids, mode, kwargs):
        ids = np.ascontiguousarray(ids, np.int64)
        m, d, mj, sites = self.model, self.data, self.mujoco, self.sites
        xpos = np.empty((len(ids), len(sites), 3))
        for k, i in enumerate(ids):
            value = self.values(engine, i)
            m.site_pos[sites] = self.last[i]
            mj.mj_kinematics(m, d)
            offset = (d.site_xpos - m.site_pos)[self.offset_sites]
            for j, s in enumerate(sites):       # in order, as the reference assigns them
                self.last[i, j] = value[j] - offset[j]
            m.site_pos[sites] = self.last[i]
            mj.mj_kinematics(m, d)
            xpos[k] = d.site_xpos[sites]
        return render_frames(engine, ids, mode, forward=True, site_ids=sites, site_xpos=xpos)


class SiteRender:
    """A render hook that shows visual-only sites on bodies welded to the world where the
    reference's model holds them: ``positions(engine, i)`` gives env i's model positions of
    ``sites`` ((k, 3)), which a scratch model turns into world positions as MuJoCo does."""

    def __init__(self, mujoco, model, sites, positions, forward=False):
        self.mujoco, self.model, self.data = mujoco, model, mujoco.MjData(model)
        self.sites = [_site_id(model, mujoco, s) for s in sites]
        if any(model.body_weldid[model.site_bodyid[s]] != 0 for s in self.sites):
            raise ValueError(f"sites {sites} must be on bodies welded to the world")
        self.positions, self.forward = positions, forward

    def __call__(self, engine, ids, mode, kwargs):
        ids = np.ascontiguousarray(ids, np.int64)
        xpos = np.empty((len(ids), len(self.sites), 3))
        for k, i in enumerate(ids):
            pos = self.positions(engine, i)
            for j, s in enumerate(self.sites):
                xpos[k, j] = static_site_xpos(self.mujoco, self.model, self.data, s, pos[j])
        return render_frames(engine, ids, mode, forward=self.forward, site_ids=self.sites,
                             site_xpos=xpos)


def no_render(engine, ids, mode, kwargs):
    raise RuntimeError("cypool: this pool renders through its build's render hook")
