"""Build one Cython module the way a user's package would, for tests that compile envs or
tasks against the installed cypool (tests/_core's Walk family, tests/mujoco/custom's tasks),
or test-only modules (tests/box2d/_cr_check.pyx). The build is cached under cache_dir by a
hash of its inputs, and takes a lock there: test processes that need it at once (pytest-xdist
workers collecting the same file) build it once."""
import fcntl
import hashlib
import importlib.util
import sys
from pathlib import Path

import cypool


def build_extension(name: str, pyx: Path, ext_kwargs: dict, cache_dir: Path,
                    key_extra: bytes = b"", directives: dict | None = None) -> Path:
    """Compile `pyx` as module `name` with setuptools.Extension(**ext_kwargs) and the Cython
    `directives` (default: cypool.api.cython_directives()), cached, and return the directory
    holding the built module."""
    from Cython.Build import cythonize
    from setuptools import Distribution, Extension

    if directives is None:
        directives = cypool.api.cython_directives()
    else:                                         # part of the key only when given
        key_extra += repr(sorted(directives.items())).encode()
    src = Path(pyx).read_bytes()
    key = hashlib.sha256(src + key_extra + sys.version.encode() +
                         cypool.__version__.encode()).hexdigest()[:16]
    out = Path(cache_dir) / key
    out.mkdir(parents=True, exist_ok=True)
    with open(Path(cache_dir) / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)          # released when the file is closed
        if not list(out.glob(f"{name}*.so")):
            (out / f"{name}.pyx").write_bytes(src)
            ext = Extension(name, [str(out / f"{name}.pyx")], **ext_kwargs)
            dist = Distribution({"ext_modules": cythonize(
                [ext], include_path=ext_kwargs["include_dirs"], quiet=True,
                build_dir=str(out / "c"), compiler_directives=directives)})
            cmd = dist.get_command_obj("build_ext")
            cmd.build_lib, cmd.build_temp = str(out), str(out / "tmp")
            cmd.ensure_finalized()
            cmd.run()
    return out


def import_built(name: str, out: Path):
    """Import module `name` from a build_extension directory."""
    spec = importlib.util.spec_from_file_location(name, next(Path(out).glob(f"{name}*.so")))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
