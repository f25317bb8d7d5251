"""Build ALE's C++ core from the pinned ale-py sdist, for linking into cypool.

The ale-py wheel ships no C++ headers, so cypool compiles ALE's core
(``src/ale``) itself, with ALE's own CMake, into a static, position-independent
library. The result is cached outside the source tree and reused by later builds.

Where the source comes from, first match wins:

1. ``CYPOOL_ALE_SOURCE``: the sdist tarball (its sha256 must match the pin) or
   an already extracted sdist tree (its ``version.txt`` must read 0.12.1).
2. ``ale_py-0.12.1.tar.gz`` in the cache directory.
3. A download from PyPI, checked against the pinned sha256 and kept in the
   cache. ``CYPOOL_ALE_NO_DOWNLOAD=1`` turns this step into an error, for
   builds that must stay offline.

The cache directory is ``$CYPOOL_CACHE_DIR/ale-0.12.1`` (default
``~/.cache/cypool/ale-0.12.1``). Its ``install/`` holds ``include/ale/...``
(with the generated ``version.hpp``) and ``lib/libale.a``. When that exists and
was built with the current options, no source is needed at all; pass
``force=True`` (``--force`` on the command line) to rebuild it.

Needs cmake, a C++17 compiler and zlib's headers (Debian/Ubuntu: zlib1g-dev).
Linux and macOS only: the link settings returned assume a Unix toolchain.
Run ``python -m buildtools.ale_build`` to build the cache ahead of time.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

ALE_VERSION = "0.12.1"
SDIST_NAME = f"ale_py-{ALE_VERSION}.tar.gz"
SDIST_SHA256 = "c503d574c5983e1063b451201ccb779d935919c0f6bf116fb0f4f8aa4c86d249"
SDIST_URL = ("https://files.pythonhosted.org/packages/3e/e8/"
             "e69da8a5fb5feafa9fffb32ed8c2b306b7571b77faf779f61e4eb53304ec/" + SDIST_NAME)

# The smallest ALE build cypool needs: the C++ core as a static library.
# Link-time optimisation is off because ALE switches it on for Release builds:
# it made Breakout and Pong no faster (measured on 2 cores), it moves ALE's code
# generation into every link of the extension, and its object files only link
# with the exact compiler that wrote them.
CMAKE_OPTIONS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DBUILD_CPP_LIB=ON",
    "-DBUILD_PYTHON_LIB=OFF",
    "-DBUILD_VECTOR_LIB=OFF",
    "-DBUILD_VECTOR_XLA_LIB=OFF",
    "-DSDL_SUPPORT=OFF",
    "-DCMAKE_POSITION_INDEPENDENT_CODE=ON",
    "-DCMAKE_INTERPROCEDURAL_OPTIMIZATION_RELEASE=OFF",
    "-DCMAKE_INSTALL_LIBDIR=lib",
)
STAMP_NAME = "cypool-ale-build.json"


class AleBuildError(RuntimeError):
    """Obtaining or building ALE failed; the message says what to do."""


def cache_dir():
    """Directory holding the sdist and the built ALE (not created here)."""
    root = os.environ.get("CYPOOL_CACHE_DIR") or Path.home() / ".cache" / "cypool"
    return Path(root).expanduser().resolve() / f"ale-{ALE_VERSION}"


def ensure_ale(*, force=False, jobs=2, verbose=True):
    """Return what a C++17 extension needs to compile and link against ALE.

    Builds ALE into the cache first unless a build with the current options is
    already there.

    Parameters
    ----------
    force : bool
        Rebuild even if the cache holds a build.
    jobs : int
        Parallel compile jobs for the ALE build.
    verbose : bool
        Show progress and the CMake output (otherwise shown only on failure).

    Returns
    -------
    dict
        ``include_dirs``, ``library_dirs``, ``libraries`` and ``extra_objects``
        (lists of str), ready to pass to ``setuptools.Extension``.

    Raises
    ------
    AleBuildError
        If the source cannot be obtained or verified, or the build fails.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    cache = cache_dir()
    install = cache / "install"
    stamp = _read_stamp(install)
    if force or stamp is None or stamp.get("cmake_options") != list(CMAKE_OPTIONS):
        cache.mkdir(parents=True, exist_ok=True)
        stamp = _build(cache, install, jobs, verbose)
    return _link_config(install, stamp)


def _log(verbose, message):
    if verbose:
        print(f"cypool/ale: {message}", file=sys.stderr, flush=True)


def _read_stamp(install):
    try:
        stamp = json.loads((install / STAMP_NAME).read_text())
    except (OSError, ValueError):
        return None
    complete = (install / "lib" / "libale.a").is_file() and \
        (install / "include" / "ale" / "version.hpp").is_file()
    return stamp if complete else None


def _link_config(install, stamp):
    library_dirs = []
    zlib = stamp.get("zlib_library", "")
    # A zlib outside the linker's default paths (conda, Homebrew) needs its directory.
    if zlib and not zlib.startswith(("/usr/lib", "/lib")):
        library_dirs.append(str(Path(zlib).parent))
    return dict(
        include_dirs=[str(install / "include")],
        library_dirs=library_dirs,
        libraries=["z", "pthread"],
        # The full path, so that no shared libale elsewhere on the search path wins.
        extra_objects=[str(install / "lib" / "libale.a")],
    )


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check_sdist(path):
    actual = _sha256(path)
    if actual != SDIST_SHA256:
        raise AleBuildError(f"{path} is not the ale-py {ALE_VERSION} sdist: sha256 {actual}, "
                            f"expected {SDIST_SHA256}")


def _download(dest, verbose):
    if os.environ.get("CYPOOL_ALE_NO_DOWNLOAD", "") not in ("", "0"):
        raise AleBuildError(
            f"ALE source needed but downloads are disabled (CYPOOL_ALE_NO_DOWNLOAD). Put "
            f"{SDIST_NAME} in {dest.parent}, or point CYPOOL_ALE_SOURCE at it or at its "
            "extracted tree.")
    _log(verbose, f"downloading {SDIST_URL}")
    tmp = dest.with_name(f"{dest.name}.{os.getpid()}.part")
    try:
        with urllib.request.urlopen(SDIST_URL, timeout=60) as response, open(tmp, "wb") as f:
            shutil.copyfileobj(response, f)
        _check_sdist(tmp)
        os.replace(tmp, dest)
    except OSError as exc:
        raise AleBuildError(
            f"could not download {SDIST_URL} ({exc}). Download it by other means and set "
            f"CYPOOL_ALE_SOURCE to the file, or put it in {dest.parent}.") from exc
    finally:
        tmp.unlink(missing_ok=True)


def _extract(tarball, dest):
    with tarfile.open(tarball) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
        else:  # Python without the extraction filters (before 3.11.4)
            tar.extractall(dest)
    return dest / f"ale_py-{ALE_VERSION}"


def _source_tree(cache, work, verbose):
    """Find or fetch the sdist; return the root of an extracted tree."""
    given = os.environ.get("CYPOOL_ALE_SOURCE")
    if given:
        path = Path(given).expanduser().resolve()
        if path.is_dir():
            version_file = path / "version.txt"
            version = version_file.read_text().strip() if version_file.is_file() else None
            if version != ALE_VERSION or not (path / "src" / "ale" / "CMakeLists.txt").is_file():
                raise AleBuildError(f"CYPOOL_ALE_SOURCE={path} is not an extracted ale-py "
                                    f"{ALE_VERSION} sdist (version.txt: {version})")
            _log(verbose, f"using source tree {path}")
            return path
        if not path.is_file():
            raise AleBuildError(f"CYPOOL_ALE_SOURCE={path} does not exist")
        _check_sdist(path)
        tarball = path
    else:
        tarball = cache / SDIST_NAME
        if tarball.is_file():
            _check_sdist(tarball)
        else:
            _download(tarball, verbose)
    _log(verbose, f"extracting {tarball}")
    return _extract(tarball, work)


def _run(cmd, verbose, hint=""):
    _log(verbose, " ".join(cmd))
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if verbose:
        print(result.stdout, file=sys.stderr, flush=True)
    if result.returncode != 0:
        raise AleBuildError(f"command failed ({result.returncode}): {' '.join(cmd)}\n"
                            f"{result.stdout[-4000:]}{hint if 'ZLIB' in result.stdout else ''}")


def _cmake_cache_value(build, key):
    for line in (build / "CMakeCache.txt").read_text().splitlines():
        name, sep, value = line.partition("=")
        if sep and name.split(":")[0] == key:
            return value
    return ""


def _build(cache, install, jobs, verbose):
    cmake = shutil.which("cmake")
    if cmake is None:
        raise AleBuildError("cmake not found: install it (pip install cmake, or your system's "
                            "package) to build ALE")
    with tempfile.TemporaryDirectory(prefix="build-", dir=cache) as work:
        work = Path(work)
        source = _source_tree(cache, work, verbose)
        build, staging = work / "build", work / "install"
        _log(verbose, f"building ALE {ALE_VERSION} core with {jobs} jobs")
        _run([cmake, "-S", str(source), "-B", str(build), *CMAKE_OPTIONS,
              f"-DCMAKE_INSTALL_PREFIX={staging}"], verbose,
             hint="\nALE needs zlib's development files: apt-get install zlib1g-dev "
                  "(Debian/Ubuntu), dnf install zlib-devel (Fedora), brew install zlib (macOS).")
        _run([cmake, "--build", str(build), "--config", "Release", "--target", "ale-lib",
              "--parallel", str(jobs)], verbose)
        _run([cmake, "--install", str(build), "--config", "Release"], verbose)
        stamp = dict(
            ale_version=ALE_VERSION,
            sdist_sha256=SDIST_SHA256,
            cmake_options=list(CMAKE_OPTIONS),
            cxx_compiler=_cmake_cache_value(build, "CMAKE_CXX_COMPILER"),
            zlib_library=(_cmake_cache_value(build, "ZLIB_LIBRARY_RELEASE")
                          or _cmake_cache_value(build, "ZLIB_LIBRARY")),
        )
        (staging / STAMP_NAME).write_text(json.dumps(stamp, indent=2) + "\n")
        # Swap the finished tree in whole, so an interrupted build never leaves a
        # half-written install behind.
        if install.exists():
            os.replace(install, work / "old-install")
        try:
            os.replace(staging, install)
        except OSError:
            if _read_stamp(install) is None:  # not a concurrent build that finished first
                raise
    _log(verbose, f"ALE installed in {install}")
    return stamp


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="rebuild even if cached")
    parser.add_argument("--jobs", type=int, default=2, help="parallel compile jobs (default 2)")
    parser.add_argument("--quiet", action="store_true", help="show build output only on failure")
    args = parser.parse_args()
    try:
        config = ensure_ale(force=args.force, jobs=args.jobs, verbose=not args.quiet)
    except AleBuildError as exc:
        sys.exit(f"cypool/ale: {exc}")
    print(json.dumps(config, indent=2))
