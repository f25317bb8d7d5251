"""Build Box2D 2.3's C++ core from the pinned box2d-py sdist, for linking into cypool.

gymnasium's Box2D envs run on the ``box2d==2.3.10`` wheel (pybox2d), a SWIG wrapper around
Box2D's C++ core. cypool runs the same core without SWIG or Python: the 45 ``.cpp`` and 47
``.h`` files under ``Box2D/`` of the ``box2d-py==2.3.8`` sdist, which are byte-identical to
pybox2d 2.3.10's. They are compiled once into a static, position-independent library that is
cached outside the source tree (never committed) and reused by later builds.

Where the source comes from, first match wins:

1. ``CYPOOL_BOX2D_SOURCE``: the sdist tarball (its sha256 must match the pin).
2. ``box2d-py-2.3.8.tar.gz`` in the cache directory.
3. A download of the sdist from PyPI's pinned URL (as ALE's), or where that fails,
   ``pip download --no-deps --no-binary :all: box2d-py==2.3.8`` from the package index pip is
   configured with (a mirror); either is checked against the pinned sha256 and kept in the
   cache. ``CYPOOL_BOX2D_NO_DOWNLOAD=1`` turns this step into an error, for offline builds.
   Inside pip's isolated build environment the build's own ``sys.executable`` cannot import
   pip (the overlay hides the installing environment's packages), so pip runs without that
   overlay.

The cache directory is ``$CYPOOL_CACHE_DIR/box2d-2.3.8`` (default
``~/.cache/cypool/box2d-2.3.8``); its ``install/`` holds ``include/Box2D/...`` and
``lib/libbox2d.a`` and a stamp (the sdist's sha256, the flags, the patch, the compiler).
A stamp that does not match this file's settings rebuilds; ``--force`` rebuilds anyway.

One change to the sources: pybox2d's ``Common/b2Settings.h`` includes ``Python.h`` and makes
a failed ``b2Assert`` set a Python AssertionError and throw. cypool's copy throws a plain
``b2AssertException`` carrying the failed expression (no Python), which cypool's kernels
catch and turn into an EngineError, as pybox2d turns it into an AssertionError. Nothing else
changes.

Compile flags (``CXXFLAGS``): the wheel's ``.so`` was built by GCC 10.2 with ``-O3 -fwrapv
-fPIC -march=x86-64 -mtune=generic`` (its DWARF producer string): scalar SSE2 float
arithmetic, no x87, no FMA. The same optimisation level and flags here, plus
``-ffp-contract=off`` so that no compiler (clang contracts by default) and no target with
FMA (aarch64, ``-march=native``) fuses ``a*b+c``; no ``-ffast-math``. ``sinf``/``cosf``/
``atan2f`` come from the system libm, as the wheel's do. tests/box2d compares trajectories
with gymnasium on the wheel bit for bit.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

BOX2D_PY_VERSION = "2.3.8"
SDIST_NAME = f"box2d-py-{BOX2D_PY_VERSION}.tar.gz"
SDIST_SHA256 = "bdacfbbc56079bb317548efe49d3d5a86646885cc27f4a2ee97e4b2960921ab7"
SDIST_URL = ("https://files.pythonhosted.org/packages/98/c2/"
             "ab05b5329dc4416b5ee5530f0625a79c394a3e3c10abe0812b9345256451/" + SDIST_NAME)
CXXFLAGS = ("-O3", "-fwrapv", "-fPIC", "-ffp-contract=off", "-std=gnu++14")
STAMP_NAME = "cypool-box2d-build.json"

# pybox2d's assertion block in Common/b2Settings.h, and cypool's replacement
_ASSERT_OLD = """#ifdef USE_EXCEPTIONS
#include <Python.h>
class b2AssertException {};
#define b2Assert(A) if (!(A)) { PyErr_SetString(PyExc_AssertionError, #A); throw b2AssertException(); }
#else"""
_ASSERT_NEW = """#ifdef USE_EXCEPTIONS
// cypool: no Python; the failed expression travels with the exception
struct b2AssertException { const char* expression; };
#define b2Assert(A) if (!(A)) { throw b2AssertException{#A}; }
#else"""


class Box2DBuildError(RuntimeError):
    """Obtaining or building Box2D failed; the message says what to do."""


def cache_dir():
    """Directory holding the sdist and the built library (not created here)."""
    root = os.environ.get("CYPOOL_CACHE_DIR") or Path.home() / ".cache" / "cypool"
    return Path(root).expanduser().resolve() / f"box2d-{BOX2D_PY_VERSION}"


def _compiler():
    cxx = os.environ.get("CXX") or sysconfig.get_config_var("CXX") or "c++"
    return cxx.split()


def _wanted_stamp():
    cxx = _compiler()
    try:
        version = subprocess.run(cxx + ["--version"], capture_output=True, text=True,
                                 check=True).stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError) as exc:
        raise Box2DBuildError(f"no working C++ compiler ({' '.join(cxx)}): {exc}; install g++ "
                              "or set CXX") from exc
    return dict(box2d_py_version=BOX2D_PY_VERSION, sdist_sha256=SDIST_SHA256,
                cxxflags=list(CXXFLAGS), compiler=" ".join(cxx), compiler_version=version,
                assert_patch=hashlib.sha256(_ASSERT_NEW.encode()).hexdigest())


def ensure_box2d(*, force=False, jobs=None, verbose=True):
    """Return what a C++ extension needs to compile and link against Box2D:
    ``include_dirs``, ``extra_objects`` (lists of str). Builds the cache first unless a
    build with the current settings is there. Raises Box2DBuildError."""
    jobs = jobs or int(os.environ.get("CYPOOL_BUILD_JOBS", os.cpu_count() or 1))
    cache = cache_dir()
    install = cache / "install"
    want = _wanted_stamp()
    if force or _read_stamp(install) != want:
        cache.mkdir(parents=True, exist_ok=True)
        _build(cache, install, want, jobs, verbose)
    return dict(include_dirs=[str(install / "include")],
                extra_objects=[str(install / "lib" / "libbox2d.a")])


def _log(verbose, message):
    if verbose:
        print(f"cypool/box2d: {message}", file=sys.stderr, flush=True)


def _read_stamp(install):
    try:
        stamp = json.loads((install / STAMP_NAME).read_text())
    except (OSError, ValueError):
        return None
    complete = (install / "lib" / "libbox2d.a").is_file() and \
        (install / "include" / "Box2D" / "Box2D.h").is_file()
    return stamp if complete else None


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check_sdist(path):
    actual = _sha256(path)
    if actual != SDIST_SHA256:
        raise Box2DBuildError(f"{path} is not the box2d-py {BOX2D_PY_VERSION} sdist: sha256 "
                              f"{actual}, expected {SDIST_SHA256}")


def _download_url(dest, verbose):
    """The sdist from its pinned PyPI URL into dest: '' or what went wrong."""
    _log(verbose, f"downloading {SDIST_URL}")
    try:
        with urllib.request.urlopen(SDIST_URL, timeout=60) as response, \
                open(dest, "wb") as f:
            shutil.copyfileobj(response, f)
    except OSError as exc:
        dest.unlink(missing_ok=True)
        return f"{SDIST_URL}: {exc}"
    return ""


def _download_pip(folder, verbose):
    """The sdist with ``pip download`` (pip's configured index) into folder: '' or what went
    wrong. PYTHONPATH and PYTHONNOUSERSITE are pip's isolated-build overlay: without them
    the interpreter sees its own environment's pip again."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
           f"box2d-py=={BOX2D_PY_VERSION}", "-d", str(folder)]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONNOUSERSITE")}
    _log(verbose, " ".join(cmd))
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env)
    if result.returncode != 0 or not (folder / SDIST_NAME).is_file():
        return f"pip download: {result.stdout[-2000:].strip()}"
    return ""


def _fetch(cache, verbose):
    given = os.environ.get("CYPOOL_BOX2D_SOURCE")
    if given:
        path = Path(given).expanduser().resolve()
        if not path.is_file():
            raise Box2DBuildError(f"CYPOOL_BOX2D_SOURCE={path} is not a file (give the "
                                  f"{SDIST_NAME} tarball)")
        _check_sdist(path)
        return path
    tarball = cache / SDIST_NAME
    if tarball.is_file():
        _check_sdist(tarball)
        return tarball
    if os.environ.get("CYPOOL_BOX2D_NO_DOWNLOAD", "") not in ("", "0"):
        raise Box2DBuildError(
            f"Box2D source needed but downloads are disabled (CYPOOL_BOX2D_NO_DOWNLOAD). Put "
            f"{SDIST_NAME} in {cache}, or point CYPOOL_BOX2D_SOURCE at it.")
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        got = Path(tmp) / SDIST_NAME
        failures = [_download_url(got, verbose)]
        if failures[0]:
            failures.append(_download_pip(Path(tmp), verbose))
        if failures[-1]:
            raise Box2DBuildError(
                f"could not download the box2d-py {BOX2D_PY_VERSION} sdist "
                f"({'; '.join(failures)}). Get {SDIST_NAME} by other means and set "
                f"CYPOOL_BOX2D_SOURCE to it, or put it in {cache}.")
        _check_sdist(got)
        os.replace(got, tarball)
    return tarball


def _extract_core(tarball, dest):
    """Box2D/**/*.{h,cpp} of the sdist into dest/Box2D (nothing else: no SWIG files)."""
    prefix = f"box2d-py-{BOX2D_PY_VERSION}/Box2D/"
    count = 0
    with tarfile.open(tarball) as tar:
        for member in tar.getmembers():
            name = member.name
            if not (member.isfile() and name.startswith(prefix)
                    and name.endswith((".h", ".cpp"))) or ".." in name.split("/"):
                continue
            out = dest / "Box2D" / name[len(prefix):]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(tar.extractfile(member).read())
            count += 1
    if count != 92:
        raise Box2DBuildError(f"{tarball}: expected Box2D's 92 C++ files, found {count}")
    settings = dest / "Box2D" / "Common" / "b2Settings.h"
    text = settings.read_text()
    if text.count(_ASSERT_OLD) != 1:
        raise Box2DBuildError(f"{settings}: pybox2d's b2Assert block not found")
    settings.write_text(text.replace(_ASSERT_OLD, _ASSERT_NEW))


def _build(cache, install, stamp, jobs, verbose):
    tarball = _fetch(cache, verbose)
    cxx = _compiler()
    ar = shutil.which("ar")
    if ar is None:
        raise Box2DBuildError("ar not found: install binutils")
    with tempfile.TemporaryDirectory(prefix="build-", dir=cache) as work:
        work = Path(work)
        staging = work / "install"
        include = staging / "include"
        _extract_core(tarball, include)
        sources = sorted((include / "Box2D").rglob("*.cpp"))
        objdir = work / "obj"
        objdir.mkdir()
        _log(verbose, f"compiling {len(sources)} Box2D files with {' '.join(cxx)} "
                      f"{' '.join(CXXFLAGS)} ({jobs} jobs)")

        def compile_one(src):
            obj = objdir / (str(src.relative_to(include)).replace("/", "_")[:-4] + ".o")
            cmd = cxx + list(CXXFLAGS) + ["-I", str(include), "-c", str(src), "-o", str(obj)]
            result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True)
            if result.returncode != 0:
                raise Box2DBuildError(f"command failed: {' '.join(cmd)}\n{result.stdout[-4000:]}")
            return obj

        with ThreadPoolExecutor(max(1, jobs)) as pool:
            objects = list(pool.map(compile_one, sources))
        # the .cpp files are not needed by users of the library
        for src in sources:
            src.unlink()
        lib = staging / "lib" / "libbox2d.a"
        lib.parent.mkdir(parents=True)
        result = subprocess.run([ar, "rcs", str(lib)] + [str(o) for o in objects],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if result.returncode != 0:
            raise Box2DBuildError(f"ar failed: {result.stdout[-2000:]}")
        (staging / STAMP_NAME).write_text(json.dumps(stamp, indent=2) + "\n")
        # swap the finished tree in whole: an interrupted build leaves no half install
        if install.exists():
            os.replace(install, work / "old-install")
        try:
            os.replace(staging, install)
        except OSError:
            if _read_stamp(install) != stamp:   # not a concurrent build that finished first
                raise
    _log(verbose, f"Box2D installed in {install}")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="rebuild even if cached")
    parser.add_argument("--jobs", type=int, default=None, help="parallel compile jobs")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    try:
        config = ensure_box2d(force=args.force, jobs=args.jobs, verbose=not args.quiet)
    except Box2DBuildError as exc:
        sys.exit(f"cypool/box2d: {exc}")
    print(json.dumps(config, indent=2))
