"""Build script: every extension, flag and Cython directive lives here.

Environment switches:
  CYPOOL_NO_OPENMP=1     build without OpenMP (serial stepping) instead of failing
  CYPOOL_CYTHON_DEBUG=1  turn bounds and initialisation checks back on
  MUJOCO_PATH=DIR        take MuJoCo headers and library from DIR instead of the mujoco wheel
  CYPOOL_ALE_SOURCE=...  the ale-py 0.12.1 sdist (tarball or tree) to build ALE from; see
                         buildtools/ale_build.py for the cache (CYPOOL_CACHE_DIR) and download
  CYPOOL_BOX2D_SOURCE=.. the box2d-py 2.3.8 sdist to build Box2D's C++ core from; see
                         buildtools/box2d_build.py (cached next to ALE's build)
  CYPOOL_NO_BUILD_CACHE=1  build every extension, even one the build cache holds
                         (buildtools/ext_cache.py: built extensions by content, shared by
                         clones and venvs, in $CYPOOL_CACHE_DIR/ext)
  CYPOOL_BUILD_JOBS=N    parallel cythonize and compile jobs (default: the CPU count)
"""
import os
import runpy
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import Cython
import numpy as np
import setuptools
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).parent.resolve()
sys.path.insert(0, str(ROOT))  # build backends do not put the project on sys.path
from buildtools.ale_build import ensure_ale  # noqa: E402
from buildtools.box2d_build import ensure_box2d  # noqa: E402
from buildtools.ext_cache import ExtCache  # noqa: E402
MUJOCO_VERSION = "4.0.1"


def _env_flag(name):
    return os.environ.get(name, "") not in ("", "0", "false", "False")


def _openmp_flags():
    """Try to compile *and run* a tiny OpenMP program; return (compile, link) flags."""
    if _env_flag("CYPOOL_NO_OPENMP"):
        return [], []
    cc = sysconfig.get_config_var("CC").split()[0] if sysconfig.get_config_var("CC") else "cc"
    src = "#include <omp.h>\nint main(void){int n=0;\n#pragma omp parallel reduction(+:n)\nn+=1;\nreturn n>0?0:1;}\n"
    with tempfile.TemporaryDirectory() as tmp:
        c, exe = Path(tmp, "t.c"), Path(tmp, "t")
        c.write_text(src)
        try:
            subprocess.run([cc, "-fopenmp", str(c), "-o", str(exe)], check=True,
                           capture_output=True)
            subprocess.run([str(exe)], check=True, capture_output=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            sys.exit(
                f"cypool: could not compile and run an OpenMP test program with '{cc} -fopenmp' "
                f"({exc}).\nInstall an OpenMP-capable compiler (gcc, or clang with libomp), or set "
                "CYPOOL_NO_OPENMP=1 to build a serial cypool."
            )
    return ["-fopenmp"], ["-fopenmp"]


def _mujoco_paths():
    base = os.environ.get("MUJOCO_PATH")
    if base is None:
        import mujoco

        if mujoco.__version__ != MUJOCO_VERSION:
            sys.exit(f"cypool: needs mujoco=={MUJOCO_VERSION} to build, found {mujoco.__version__}")
        base = os.path.dirname(mujoco.__file__)
    inc = os.path.join(base, "include")
    lib = os.path.join(base, f"libmujoco.so.{MUJOCO_VERSION}")
    if not os.path.exists(os.path.join(inc, "mujoco", "mujoco.h")) or not os.path.exists(lib):
        sys.exit(f"cypool: MuJoCo headers or library not found under {base}")
    return inc, base, lib


OMP_C, OMP_L = _openmp_flags()
# No -ffast-math and no FMA contraction: rewards must round exactly as numpy's do.
C_FLAGS = ["-O3", "-ffp-contract=off", "-fno-math-errno"] + OMP_C
NP_INC = [np.get_include()]
NP_RANDOM_LIB = [os.path.join(np.get_include(), "..", "..", "random", "lib"),
                 os.path.join(np.get_include(), "..", "lib")]
MACROS = [("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]
MJ_INC, MJ_DIR, MJ_LIB = _mujoco_paths()


def core_ext(name, sources, random=False, flags=()):
    """random: the module draws from numpy.random's C distributions (libnpyrandom); flags:
    extra compiler flags."""
    libs = dict(library_dirs=NP_RANDOM_LIB, libraries=["npyrandom", "npymath", "m"]) \
        if random else {}
    return Extension(name, sources, include_dirs=NP_INC + [str(ROOT / "cypool" / "_core")],
                     define_macros=MACROS, extra_compile_args=C_FLAGS + list(flags),
                     extra_link_args=OMP_L, **libs)


def mujoco_ext(name, sources, flags=()):
    # The extension finds libmujoco through its soname: `import mujoco` (done by cypool.mujoco
    # before importing any extension) has loaded it; the rpath covers a plain site-packages layout.
    depth = name.count(".")
    rpath = "$ORIGIN/" + "/".join([".."] * depth) + "/mujoco"
    return Extension(
        name, sources,
        include_dirs=NP_INC + [MJ_INC, str(ROOT / "cypool" / "mujoco"), str(ROOT / "cypool" / "_core")],
        library_dirs=NP_RANDOM_LIB,
        libraries=["npyrandom", "npymath", "m", "dl"],
        define_macros=MACROS + [("CYPOOL_MJ_VERSION", MUJOCO_VERSION.replace(".", ""))],
        extra_compile_args=C_FLAGS + ["-std=gnu11"] + list(flags),
        extra_link_args=OMP_L + [MJ_LIB, f"-Wl,-rpath,{rpath}"],
    )


def atari_ext(name, sources):
    # ALE is C++17 and GPL-2.0: it is linked into this one extension only.
    ale = ensure_ale()
    return Extension(
        name, sources, language="c++",
        include_dirs=NP_INC + [str(ROOT / "cypool" / "atari"), str(ROOT / "cypool" / "_core")]
        + ale["include_dirs"],
        library_dirs=NP_RANDOM_LIB + ale["library_dirs"],
        libraries=["npyrandom", "npymath"] + ale["libraries"],
        extra_objects=ale["extra_objects"],
        define_macros=MACROS,
        extra_compile_args=C_FLAGS + ["-std=c++17"],
        extra_link_args=OMP_L,
    )


def box2d_ext(name, sources):
    # Box2D's C++ core (zlib licence), built once into a cached static library from the
    # box2d-py sdist (buildtools/box2d_build.py) with the flags that keep its floats equal to
    # the box2d wheel's
    b2 = ensure_box2d()
    return Extension(
        name, sources, language="c++",
        include_dirs=NP_INC + [str(ROOT / "cypool" / "box2d"), str(ROOT / "cypool" / "_core")]
        + b2["include_dirs"],
        library_dirs=NP_RANDOM_LIB, libraries=["npyrandom", "npymath", "m"],
        extra_objects=b2["extra_objects"], define_macros=MACROS,
        # no SLP vectorizer: gcc 12 drops float32 roundings of double pairs (cypool.classic)
        extra_compile_args=C_FLAGS + ["-std=gnu++14", "-fno-tree-slp-vectorize"],
        extra_link_args=OMP_L,
    )


def family_extensions():
    """Each family folder lists its own extensions (cypool/<family>/_extensions.py:
    EXTENSIONS, tuples (builder, module, sources, options)), read without importing the
    package; a new family adds its folder, not a line here. cypool/_core lists the core's
    the same way."""
    builders = {"core": core_ext, "mujoco": mujoco_ext, "atari": atari_ext, "box2d": box2d_ext}
    out = []
    for path in sorted((ROOT / "cypool").glob("*/_extensions.py")):
        for kind, name, sources, opts in runpy.run_path(str(path))["EXTENSIONS"]:
            out.append(builders[kind](name, sources, **opts))
    return out


extensions = family_extensions()         # cypool/_core/_extensions.py's first

# Development aid: CYPOOL_BUILD_ONLY=cypool.mujoco.tasks.ant,... rebuilds just those modules.
only = [m for m in os.environ.get("CYPOOL_BUILD_ONLY", "").split(",") if m]
if only:
    extensions = [e for e in extensions if e.name in only]

debug = _env_flag("CYPOOL_CYTHON_DEBUG")
directives = dict(language_level=3, boundscheck=debug, wraparound=False, initializedcheck=debug,
                  nonecheck=False, cdivision=True, embedsignature=True)

JOBS = int(os.environ.get("CYPOOL_BUILD_JOBS", os.cpu_count() or 1))
cache = ExtCache(ROOT, directives, {"cython": Cython.__version__, "numpy": np.__version__,
                                    "mujoco": MUJOCO_VERSION,
                                    "setuptools": setuptools.__version__})
cached = {e.name: hit for e in extensions if (hit := cache.lookup(e)) is not None}
# keys are taken before cythonize, over the .pyx sources (the generated .c embed paths)
keyed = {e.name: e for e in extensions}


class ProgressBuildExt(build_ext):
    """Compiles extensions in parallel (CYPOOL_BUILD_JOBS), copies those the build cache
    holds, and prints one line per extension (stderr: `pip install -v .` shows them; pip's
    default verbosity shows only its spinner), so a 4-8 minute build says where it is."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = JOBS
        # what the cache misses is compiled even where setuptools' file times call it up to
        # date (built with other flags, say), since it is stored under this build's key
        if cache.enabled:
            self.force = True

    def build_extensions(self):
        self._done, self._t0 = 0, time.monotonic()
        super().build_extensions()

    def build_extension(self, ext):
        n = len(self.extensions)
        out = self.get_ext_fullpath(ext.name)
        hit = cached.get(ext.name)
        if hit is not None:
            self.mkpath(os.path.dirname(out))
            shutil.copy2(hit, out)
            what = "from the build cache"
        else:
            print(f"cypool: compiling {ext.name} ({time.monotonic() - self._t0:.0f} s)",
                  file=sys.stderr, flush=True)
            super().build_extension(ext)
            cache.store(keyed[ext.name], out)
            what = "compiled"
        self._done += 1
        print(f"cypool: [{self._done}/{n}] {ext.name} {what} "
              f"({time.monotonic() - self._t0:.0f} s)", file=sys.stderr, flush=True)


setup(
    ext_modules=cythonize([e for e in extensions if e.name not in cached],
                          compiler_directives=directives, nthreads=JOBS)
    + [e for e in extensions if e.name in cached],
    cmdclass={"build_ext": ProgressBuildExt},
)
