"""Loading jax and cypool's FFI handler for ``env.xla()``.

The handler (``_handler.cc``, shipped as package data) is compiled on the first ``xla()``
of a process against the *installed* jaxlib's XLA FFI headers (``jax.ffi.include_dir()``)
and Python's headers, into a cache keyed by jaxlib's version, the interpreter and a hash of
the source, compiler and flags; later processes load the cached library. So ``pip install
cypool`` (and a build in an isolated environment without jax) needs no jax, and a jaxlib
upgrade simply builds a new library next to the old one. Each library is sealed with its
sha256 when built and checked before it is loaded: a corrupted one (a bad copy, a truncated
write, a full disk), or one ctypes cannot load, is rebuilt once, and a rebuild that fails too
raises an error naming the cache and how to clear it.

Environment: ``CYPOOL_CACHE_DIR`` (default ``$XDG_CACHE_HOME/cypool`` or
``~/.cache/cypool``), ``CXX`` (default ``c++``), ``CYPOOL_XLA_CXXFLAGS`` (extra flags,
e.g. ``-fsanitize=address`` under tools/sanitize.sh), ``CYPOOL_XLA_ANY_JAX=1`` (skip the
version check).
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading

INSTALL_HINT = 'pip install "cypool[jax]"'
# jax.ffi (ffi_call with has_side_effect and input_output_aliases, register_ffi_target with
# api_version=1) is public from 0.5.0; the newest jax this was tested with is 0.10.x.
JAX_MIN = (0, 5, 0)
JAX_BELOW = (0, 11, 0)
TARGET = "cypool_xla"

_lock = threading.Lock()
_state: dict = {}


def _version(v: str) -> tuple:
    out = []
    for part in v.split(".")[:3]:
        digits = "".join(c for c in part if c.isdigit()) or "0"
        out.append(int(digits))
    return tuple(out + [0] * (3 - len(out)))


def import_jax():
    """jax, after checking its version; ImportError naming the install command if absent."""
    try:
        import jax
        import jax.ffi  # noqa: F401  (jax.ffi is a submodule: import it explicitly)
        import jaxlib
    except ImportError as exc:
        raise ImportError(f"cypool: env.xla() needs jax and jaxlib ({exc}); install them with "
                          f"{INSTALL_HINT}") from None
    if os.environ.get("CYPOOL_XLA_ANY_JAX") != "1":
        for name, mod in (("jax", jax), ("jaxlib", jaxlib)):
            v = _version(mod.__version__)
            if not (JAX_MIN <= v < JAX_BELOW):
                lo = ".".join(map(str, JAX_MIN))
                hi = ".".join(map(str, JAX_BELOW))
                raise RuntimeError(
                    f"cypool: env.xla() supports {name} >= {lo} and < {hi}, but {name} "
                    f"{mod.__version__} is installed; install a supported one with "
                    f"{INSTALL_HINT} (or set CYPOOL_XLA_ANY_JAX=1 to try this one)")
    return jax


def cache_dir() -> str:
    d = os.environ.get("CYPOOL_CACHE_DIR")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                 ".cache")
        d = os.path.join(base, "cypool")
    return os.path.join(d, "xla")


def _compiler() -> list[str]:
    cxx = shlex.split(os.environ.get("CXX", "") or "c++")
    if shutil.which(cxx[0]) is None:
        raise RuntimeError(
            f"cypool: env.xla() compiles a small C++ handler on first use, against jaxlib's "
            f"headers, but no C++ compiler was found ({cxx[0]!r}); install one (Debian/Ubuntu: "
            f"apt-get install g++) or point CXX at one")
    return cxx


def _flags(jax) -> list[str]:
    return ["-O2", "-std=c++17", "-shared", "-fPIC", "-fvisibility=hidden",
            "-I", jax.ffi.include_dir(), "-I", sysconfig.get_paths()["include"],
            *shlex.split(os.environ.get("CYPOOL_XLA_CXXFLAGS", ""))]


def library_path(jax) -> tuple[str, list[str]]:
    """Where the handler for this jaxlib, interpreter, source and flags is cached, and the
    command that builds it."""
    import jaxlib
    src = os.path.join(os.path.dirname(__file__), "_handler.cc")
    with open(src, "rb") as f:
        code = f.read()
    cxx, flags = _compiler(), _flags(jax)
    h = hashlib.sha256(code)
    h.update(repr((cxx, flags, sys.version, jaxlib.__version__)).encode())
    h.update(_SEAL)                 # the file's format: sealed (_seal)
    name = (f"handler-jaxlib{jaxlib.__version__}-{sys.implementation.cache_tag}-"
            f"{h.hexdigest()[:16]}.so")
    path = os.path.join(cache_dir(), name)
    return path, [*cxx, *flags, src, "-o"]


# Appended to a built handler: its sha256, then this marker. The ELF loader ignores bytes after
# the section headers; _check reads them back before any dlopen, because a truncated library
# can pass dlopen and fault (SIGBUS) when a segment past the end of the file is touched.
_SEAL = b"\0cypool-xla-handler-sha256\0"


def _seal(path: str) -> None:
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).digest()
    with open(path, "ab") as f:
        f.write(digest + _SEAL)
        f.flush()
        os.fsync(f.fileno())        # on disk before os.replace publishes it


def _check(path: str) -> str | None:
    """None where ``path`` holds a handler as _build wrote it (its seal and sha256 match),
    else what is wrong with it (a truncated or partial write, a bad copy, a file of another
    cypool version)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        return f"cannot read it: {exc}"
    n = len(_SEAL) + 32
    if len(data) < n or not data.endswith(_SEAL):
        return f"it is not a library cypool built (no seal; {len(data)} bytes)"
    if hashlib.sha256(data[:-n]).digest() != data[-n:-len(_SEAL)]:
        return "its contents do not match its sha256 (truncated or corrupted)"
    return None


def _build(path: str, cmd: list[str]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=os.path.dirname(path))
    os.close(fd)
    try:
        r = subprocess.run([*cmd, tmp], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(
                "cypool: compiling env.xla()'s FFI handler failed (command: "
                f"{' '.join(map(shlex.quote, cmd + [tmp]))}):\n{r.stderr[-4000:]}")
        _seal(tmp)
        os.replace(tmp, path)       # atomic: a concurrent process sees all or nothing
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _open(path: str, cmd: list[str]):
    """The cached handler at ``path`` loaded with ctypes, built first if absent. A cached file
    that is not as _build wrote it (a bad copy, a truncated write, a full disk: _check), or
    that ctypes cannot load (``OSError`` from dlopen, e.g. "wrong ELF class"), is rebuilt once;
    a rebuild that fails, or whose library does not load either, raises a RuntimeError naming
    the cache and how to clear it."""
    if not os.path.exists(path):
        _build(path, cmd)
    why = _check(path)
    if why is None:
        try:
            return ctypes.PyDLL(path)   # PyDLL: set_dispatch runs with the GIL held
        except OSError as exc:
            why = str(exc)              # dlopen mapped nothing: the path can be reopened
    try:
        _build(path, cmd)               # replaces the bad file atomically
        again = _check(path)
        if again is not None:
            raise OSError(f"the rebuilt {path}: {again}")
        return ctypes.PyDLL(path)
    except (OSError, RuntimeError) as exc:
        d = os.path.dirname(path)
        raise RuntimeError(
            f"cypool: env.xla()'s cached FFI handler {path} could not be loaded ({why}), "
            f"and rebuilding it failed ({type(exc).__name__}: {exc}). Clear cypool's xla cache "
            f"with `rm -rf {shlex.quote(d)}` (the cache is $CYPOOL_CACHE_DIR/xla, default "
            f"~/.cache/cypool/xla; check the disk has space) and call xla() again") from exc


def load():
    """(jax, the FFI target's name), building, loading and registering the handler once per
    process."""
    jax = import_jax()
    with _lock:
        if "lib" not in _state:
            path, cmd = library_path(jax)
            lib = _open(path, cmd)
            import cypool.xla._bridge as _bridge
            import cypool.xla._native as _native
            lib.cypool_xla_set_dispatch.argtypes = [ctypes.py_object] * 3
            lib.cypool_xla_set_dispatch.restype = ctypes.c_int
            if lib.cypool_xla_set_dispatch(_bridge.dispatch, _native.native_step_capsule(),
                                           _native.fast_call_capsule()):
                raise RuntimeError("cypool: env.xla()'s FFI handler refused cypool.xla._native")
            jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(lib.cypool_xla_handler),
                                        platform="cpu", api_version=1)
            _state["lib"] = lib           # kept loaded for the process's life
            _state["path"] = path
    return jax, TARGET
