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

One change to ALE's own build, for start-up time (see ``PHOSPHOR_BLEND``): ALE's
``environment/phosphor_blend.cpp`` is replaced by cypool's ``cypool/atari/_phosphor_blend.cpp``,
which defines the same class (``ale::PhosphorBlend``) with the same results but builds its
colour-averaging tables once per process instead of once per emulator. It is compiled with
the flags ALE's CMake used for the file it replaces, and swapped into ``libale.a`` for that
one object, after checks that the archive keeps the same definitions and needs nothing new.
The cache's stamp holds that file's sha256, so editing it rebuilds the cache.

Needs cmake, a C++17 compiler and zlib's headers (Debian/Ubuntu: zlib1g-dev).
Linux and macOS only: the link settings returned assume a Unix toolchain.
Run ``python -m buildtools.ale_build`` to build the cache ahead of time.
"""
import hashlib
import json
import os
import shlex
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
    "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",   # the compile flags PHOSPHOR_BLEND reuses
)

# ALE's PhosphorBlend constructor, run for every emulator, builds a 128 x 128 table of
# blended colours and a 64 x 64 x 64 RGB -> palette-index map by scanning the palette's 128
# colours for every entry (33.5 million distance computations, ~37 ms): about 3/4 of an
# Atari env's make + first reset. The tables depend only on the palette and the blend ratio.
# cypool/atari/_phosphor_blend.cpp defines every member ALE's header declares, with the same
# results, but computes the tables once per distinct palette in the process and copies them
# into each object. The build compiles it with the exact flags ALE's CMake used for
# `replaces` (read from compile_commands.json) and swaps the object into libale.a for that
# one member (ColourPalette.cpp and everything else stay ALE's own objects).
# tests/atari/test_phosphor_blend.py compares colour-averaged screens with ale-py's.
PHOSPHOR_BLEND = dict(
    object="cypool_phosphor_blend.cpp.o",      # its member name in libale.a
    replaces="environment/phosphor_blend.cpp",  # in the sdist's src/ale
    source="cypool/atari/_phosphor_blend.cpp",  # in cypool's source tree
)
PROJECT_ROOT = Path(__file__).resolve().parent.parent
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
    if force or not _stamp_current(stamp):
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


def _phosphor_blend_source():
    path = PROJECT_ROOT / PHOSPHOR_BLEND["source"]
    if not path.is_file():
        raise AleBuildError(f"{path} is missing: ALE is built from cypool's source tree, "
                            "which must include it")
    return path


def _phosphor_blend_stamp():
    """PHOSPHOR_BLEND plus the sha256 of its source, so that editing it rebuilds the cache."""
    return dict(PHOSPHOR_BLEND, source_sha256=_sha256(_phosphor_blend_source()))


def _stamp_current(stamp):
    """Whether a cached build's stamp says it was built the way this file builds."""
    return (stamp is not None and stamp.get("cmake_options") == list(CMAKE_OPTIONS)
            and stamp.get("phosphor_blend") == _phosphor_blend_stamp())


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


def _find_cmake():
    """The first cmake on PATH that runs. A pip-installed cmake's console script can come
    first on PATH yet fail inside pip's isolated build environment (its Python module is not
    importable there), so each candidate is asked for its version."""
    seen = set()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        cmake = shutil.which("cmake", path=folder) if folder else None
        if cmake is None or os.path.realpath(cmake) in seen:
            continue
        seen.add(os.path.realpath(cmake))
        try:
            subprocess.run([cmake, "--version"], check=True, capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            continue
        return cmake
    raise AleBuildError("no working cmake found on PATH: install it (pip install cmake, or your "
                        "system's package, e.g. apt-get install cmake) to build ALE")


def _build(cache, install, jobs, verbose):
    cmake = _find_cmake()
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
        _swap_phosphor_blend(build, source, staging / "lib" / "libale.a", work, verbose)
        stamp = dict(
            ale_version=ALE_VERSION,
            sdist_sha256=SDIST_SHA256,
            cmake_options=list(CMAKE_OPTIONS),
            phosphor_blend=_phosphor_blend_stamp(),
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


def _tool(build, key, default):
    path = _cmake_cache_value(build, key)
    if path and not path.endswith("-NOTFOUND") and Path(path).is_file():
        return path
    found = shutil.which(default)
    if found is None:
        raise AleBuildError(f"{default} not found (CMake's {key} is {path!r}): it is needed "
                            "to rewrite libale.a; install binutils (or your platform's "
                            "equivalent)")
    return found


def _compile_command(build, source_file):
    """The compile command CMake wrote for one ALE source: (directory, argv, output)."""
    db = build / "compile_commands.json"
    try:
        entries = json.loads(db.read_text())
    except (OSError, ValueError) as exc:
        raise AleBuildError(
            f"cannot read {db} ({exc}): ALE must be configured with a generator that writes "
            "compile_commands.json (Unix Makefiles or Ninja; unset CMAKE_GENERATOR)") from exc
    for entry in entries:
        directory = Path(entry["directory"])
        if (directory / entry["file"]).resolve() == source_file.resolve():
            argv = entry.get("arguments") or shlex.split(entry["command"])
            return directory, argv, entry.get("output")
    raise AleBuildError(f"{db} has no compile command for {source_file}")


def _unit_flags(argv, source_file):
    """argv less its source, output and dependency-file options: the compiler and flags."""
    drop_next = {"-o", "-c", "-MT", "-MF", "-MQ"}
    flags, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in drop_next:
            skip = arg != "-c"
        elif arg not in ("-MD", "-MMD"):
            flags.append(arg)
    if flags.count(str(source_file)) != 1:
        raise AleBuildError(f"unexpected compile command for {source_file}: {argv}")
    flags.remove(str(source_file))
    return flags


def archive_symbols(archive, nm="nm"):
    """External symbols of each member of a static library: {member: {name: nm type}}.

    Types follow nm: upper case T, D, B, R, ... for strong definitions, W and V for weak
    ones, U for undefined references.
    """
    archive = Path(archive)
    text = subprocess.run([nm, "-P", "-g", archive.name], cwd=archive.parent, check=True,
                          capture_output=True, text=True).stdout
    members, current = {}, None
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 1 and fields[0].endswith(":"):
            header = fields[0][:-1]          # libale.a[member.o] (GNU) or libale.a(member.o)
            current = members.setdefault(header[len(archive.name) + 1:-1], {})
        elif len(fields) >= 2 and current is not None:
            current[fields[0]] = fields[1]
    return members


def duplicate_definitions(members):
    """Strong external symbols that more than one member of an archive defines."""
    seen, dups = {}, {}
    for member, symbols in members.items():
        for name, kind in symbols.items():
            if kind.isupper() and kind not in "UWVC":
                if name in seen:
                    dups.setdefault(name, [seen[name]]).append(member)
                seen.setdefault(name, member)
    return dups


def _defined(symbols, weak=False):
    """Names symbols defines: strong definitions, or with weak=True the weak ones."""
    return {name for name, kind in symbols.items()
            if kind not in "Uw" and (kind in "WVv") == weak}


def _undefined(symbols):
    return {name for name, kind in symbols.items() if kind in "Uw"}


def _runtime_symbols(compiler, nm):
    """Symbols the C++ and C runtime libraries a link with compiler gets define (Linux:
    libstdc++, libgcc_s, libc, libm); empty where they cannot be found or read."""
    names = set()
    for lib in ("libstdc++.so.6", "libgcc_s.so.1", "libc.so.6", "libm.so.6"):
        try:
            path = subprocess.run([compiler, f"-print-file-name={lib}"], check=True,
                                  capture_output=True, text=True).stdout.strip()
            if not os.path.isabs(path):   # not found: the compiler echoes the name back
                continue
            text = subprocess.run([nm, "-D", "-P", "--defined-only", path], check=True,
                                  capture_output=True, text=True).stdout
        except (OSError, subprocess.CalledProcessError):
            continue
        names.update(line.split()[0].split("@")[0] for line in text.splitlines() if line)
    return names


def _swap_phosphor_blend(build, source, library, work, verbose):
    """Compile cypool's PhosphorBlend with the flags of ALE's and swap it into library."""
    replaced = source / "src" / "ale" / PHOSPHOR_BLEND["replaces"]
    ours = _phosphor_blend_source()
    new_name = PHOSPHOR_BLEND["object"]
    directory, argv, out = _compile_command(build, replaced)
    flags = _unit_flags(argv, replaced)
    output = work / new_name
    _log(verbose, f"compiling {ours} in place of ALE's {PHOSPHOR_BLEND['replaces']}")
    _run_in([*flags, "-o", str(output), "-c", str(ours)], directory, verbose)

    ar, ranlib, nm = (_tool(build, "CMAKE_AR", "ar"), _tool(build, "CMAKE_RANLIB", "ranlib"),
                      _tool(build, "CMAKE_NM", "nm"))
    before = archive_symbols(library, nm)
    old = Path(out).name if out else f"{replaced.name}.o"
    if old not in before or new_name in before:
        raise AleBuildError(f"{library} has members {sorted(before)}: expected {old} and no "
                            f"{new_name}")
    _run_in([ar, "d", library.name, old], library.parent, verbose)
    _run_in([ar, "r", library.name, str(output)], library.parent, verbose)
    _run_in([ranlib, library.name], library.parent, verbose)

    # The swap must keep every strong definition, in one member each, and need nothing that
    # neither libale nor the C/C++ runtime provides.
    after = archive_symbols(library, nm)
    new_symbols = after.get(new_name, {})
    problems = []
    if set(after) != (set(before) - {old}) | {new_name}:
        problems.append(f"members now {sorted(after)}")
    strong_old, strong_new = _defined(before[old]), _defined(new_symbols)
    if strong_new != strong_old:
        problems.append(f"definitions differ: lost {sorted(strong_old - strong_new)}, "
                        f"gained {sorted(strong_new - strong_old)}")
    defined_anywhere = set().union(*(_defined(s) | _defined(s, weak=True)
                                     for s in after.values()))
    needed_anyway = set().union(*(_undefined(s) for m, s in after.items() if m != new_name))
    unresolved = (_undefined(new_symbols) - _undefined(before[old]) - defined_anywhere
                  - needed_anyway)
    if unresolved:
        unresolved -= _runtime_symbols(flags[0], nm)
    if unresolved:
        problems.append(f"new undefined symbols {sorted(unresolved)}")
    dups = duplicate_definitions(after)
    if dups:
        problems.append(f"defined more than once: {dups}")
    if problems:
        raise AleBuildError(f"replacing {old} by {new_name} in {library}: "
                            + "; ".join(problems))
    _log(verbose, f"{library.name}: {old} -> {new_name}, {len(strong_new)} definitions kept")


def _run_in(cmd, cwd, verbose):
    _log(verbose, f"(in {cwd}) " + " ".join(cmd))
    result = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    if verbose and result.stdout:
        print(result.stdout, file=sys.stderr, flush=True)
    if result.returncode != 0:
        raise AleBuildError(f"command failed ({result.returncode}) in {cwd}: "
                            f"{' '.join(cmd)}\n{result.stdout[-4000:]}")


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
