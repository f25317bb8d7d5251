"""Values the dm_control kernels take from Python, computed with numpy exactly as
dm_control's own code computes them (so that the kernels' floats are dm_control's)."""
import numpy as np

from cypool._mujoco_import import model_address
from cypool.mujoco._compile import compile_xml

SIG_GAUSSIAN, SIG_LINEAR, SIG_QUADRATIC, SIG_LONG_TAIL, SIG_RECIPROCAL = 0, 1, 2, 3, 4  # _dmc.pxd


def sigmoid_scale(sigmoid, value_at_1):
    """rewards._sigmoids' scale for value_at_1 (numpy's log and sqrt)."""
    if sigmoid == SIG_GAUSSIAN:
        return float(np.sqrt(-2 * np.log(value_at_1)))
    if sigmoid == SIG_LINEAR:
        return float(1 - value_at_1)
    if sigmoid == SIG_QUADRATIC:
        return float(np.sqrt(1 - value_at_1))
    if sigmoid == SIG_LONG_TAIL:
        return float(np.sqrt(1 / value_at_1 - 1))
    if sigmoid == SIG_RECIPROCAL:
        return float(1 / value_at_1 - 1)
    raise ValueError(f"unknown sigmoid {sigmoid!r}")


def sensor_adr(model, name):
    return int(model.sensor(name).adr[0])


def body_id(model, name):
    return int(model.body(name).id)


def joint_qpos(model, name):
    return int(model.joint(name).qposadr[0])


def _blas_routine(name):
    import ctypes

    from cypool._numpy_blas import ROUTINE

    if ROUTINE.kind != "blas" or not ROUTINE.symbol or "ddot" not in ROUTINE.symbol:
        return 0, False
    try:
        lib = ctypes.CDLL(ROUTINE.library)
        fn = getattr(lib, ROUTINE.symbol.replace("ddot", name))
    except (OSError, AttributeError):
        return 0, False
    return ctypes.cast(fn, ctypes.c_void_p).value or 0, bool(ROUTINE.ilp64)


def dgemv_routine():
    """(address, ilp64) of cblas_dgemv in the BLAS numpy calls its ddot from (the same
    library and naming), or (0, False) when numpy's BLAS was not found."""
    return _blas_routine("dgemv")


def dgemm_routine():
    """(address, ilp64) of cblas_dgemm (numpy's matrix-matrix dot), as dgemv_routine."""
    return _blas_routine("dgemm")



def generated_model(name, xml, suite_dir):
    """A model dm_control generates as a string (swimmer's links, manipulator's props), as a
    file cypool's pool can load: its includes made absolute, written once per content under
    the temporary directory."""
    import hashlib
    import os
    import tempfile

    if isinstance(xml, str):
        xml = xml.encode()
    xml = xml.replace(b'file="./common/', f'file="{suite_dir}/common/'.encode())
    folder = os.path.join(tempfile.gettempdir(), f"cypool-dm_control-{os.getuid()}")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{name}-{hashlib.sha256(xml).hexdigest()[:16]}.xml")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(xml)
        os.replace(tmp, path)
    return path


def env_models(path, num_envs, model_cols, fields):
    """A model per env for tasks whose dm_control model differs per env (lqr's stiffnesses,
    point_mass hard's tendon gains): (the models to keep alive, {parameter column: one value
    per env}). model_cols = (column of the model's address, column of its actuation-disabled
    twin's); fields = {field name: (column, twin's column)}: the address of that field's array
    in each. Each env's kernel points its MjEnv at them and writes its own values there."""
    import copy

    import mujoco
    base = compile_xml(path)
    keep = []
    cols = {c: [] for c in model_cols}
    for c in fields.values():
        cols[c[0]], cols[c[1]] = [], []

    def put(col, address):
        if float(address) != address:
            raise ValueError("cypool: an address does not fit a float64 exactly")
        cols[col].append(float(address))

    for _ in range(num_envs):
        m = copy.deepcopy(base)
        m_noact = copy.deepcopy(base)
        m_noact.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_ACTUATION)
        keep += [m, m_noact]
        put(model_cols[0], model_address(m))
        put(model_cols[1], model_address(m_noact))
        for name, (col, col2) in fields.items():
            put(col, getattr(m, name).ctypes.data)
            put(col2, getattr(m_noact, name).ctypes.data)
    return keep, {col: np.asarray(v, np.float64) for col, v in cols.items()}
