"""A content-addressed cache of built extensions, shared by every clone, venv and build of
cypool on a machine (as ccache is for objects).

A full build cythonizes and compiles about 50 modules (7 minutes on 2 cores), and a fresh
clone, a fresh venv or pip's isolated build environment makes every generated file look new
to setuptools and Cython, which compare file times. This cache compares contents instead:
an extension's key is a sha256 over everything that can change the shared object built
from it, and a built extension is stored under its key; a later build with the same key
copies it instead of cythonizing and compiling.

The key covers:
- the extension's own sources (the .pyx and any C/C++ files it lists), and every .pxd, .pxi,
  .h and .hpp under cypool/ (so an edit of a shared declaration rebuilds every module);
- its Extension fields (include and library paths, macros, compile and link arguments,
  language), with the contents of every file it links by path (ALE's and Box2D's static
  libraries, libmujoco);
- Cython's directives and version, numpy's, mujoco's, setuptools', the compiler's
  `--version`, the Python version and its build configuration (CC, CFLAGS, LDSHARED, ...),
  and the environment's compiler variables (CC, CXX, CFLAGS, CXXFLAGS, CPPFLAGS, LDFLAGS,
  LDSHARED: the ASan build has its own entries).
Paths are compared after the checkout's root and any `.../site-packages/` prefix are taken
out, so that another clone or venv (pip's build environment included) finds the same key.

CYPOOL_NO_BUILD_CACHE=1 turns it off; the cache lives in $CYPOOL_CACHE_DIR/ext (default
~/.cache/cypool/ext), one folder per module holding its newest KEEP builds: delete it to
empty the cache.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

_ENV_VARS = ("CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "LDSHARED")
_CONFIG_VARS = ("CC", "CXX", "CFLAGS", "CCSHARED", "OPT", "LDSHARED", "LDFLAGS", "BLDSHARED",
                "EXT_SUFFIX", "SOABI")
_HEADERS = (".pxd", ".pxi", ".h", ".hpp")
KEEP = 8
_SITE = re.compile(r"[^\s:='\"]*/site-packages/")


_SHAS = {}                          # path -> sha256 of its contents, for one build


def _sha(path):
    path = os.path.realpath(path)
    if path not in _SHAS:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _SHAS[path] = h.hexdigest()
    return _SHAS[path]


class ExtCache:
    def __init__(self, root, directives, versions):
        """root: the checkout; directives: Cython's; versions: {name: version} of the
        build's tools (Cython, numpy, mujoco, setuptools)."""
        self.root = str(Path(root).resolve())
        self.enabled = os.environ.get("CYPOOL_NO_BUILD_CACHE", "") in ("", "0", "false")
        base = os.environ.get("CYPOOL_CACHE_DIR") or Path.home() / ".cache" / "cypool"
        self.dir = Path(base).expanduser().resolve() / "ext"
        cc = sysconfig.get_config_var("CC") or "cc"
        try:
            compiler = subprocess.run(cc.split()[:1] + ["--version"], capture_output=True,
                                      text=True, timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            compiler = None                 # no compiler: nothing could be built anyway
        self.common = [
            ("python", sys.version, sys.implementation.cache_tag),
            ("config", [self._norm(sysconfig.get_config_var(v)) for v in _CONFIG_VARS]),
            ("env", [self._norm(os.environ.get(v)) for v in _ENV_VARS]),
            ("compiler", compiler),
            ("directives", sorted(directives.items())),
            ("versions", sorted(versions.items())),
            ("headers", self._headers()),
        ]

    def _norm(self, value):
        """value with the checkout's root and site-packages prefixes taken out."""
        if value is None:
            return None
        return _SITE.sub("<site>/", str(value).replace(self.root, "<root>"))

    def _headers(self):
        out = []
        for dirpath, dirnames, files in os.walk(Path(self.root) / "cypool"):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for f in sorted(files):
                if f.endswith(_HEADERS):
                    p = os.path.join(dirpath, f)
                    out.append((self._norm(p), _sha(p)))
        return out

    def key(self, ext):
        """The sha256 naming ext's build (ext as setup.py made it, before cythonize)."""
        fields = [("name", ext.name), ("language", ext.language)]
        for attr in ("include_dirs", "define_macros", "undef_macros", "library_dirs",
                     "libraries", "runtime_library_dirs", "extra_compile_args",
                     "extra_link_args", "extra_objects"):
            fields.append((attr, [self._norm(v) for v in (getattr(ext, attr, None) or [])]))
        linked = [a for a in list(ext.extra_objects or []) + list(ext.extra_link_args or [])
                  if os.path.isfile(a)]
        fields.append(("linked", [(self._norm(p), _sha(p)) for p in linked]))
        fields.append(("sources", [(self._norm(s), _sha(os.path.join(self.root, s)))
                                   for s in ext.sources]))
        h = hashlib.sha256(repr((self.common, fields)).encode())
        return h.hexdigest()

    def _entry(self, ext):
        return self.dir / ext.name / (self.key(ext) + sysconfig.get_config_var("EXT_SUFFIX"))

    def lookup(self, ext):
        """The cached build of ext, or None."""
        if not self.enabled:
            return None
        entry = self._entry(ext)
        return entry if entry.is_file() else None

    def store(self, ext, built):
        """Keep the file built for ext (a failure to write the cache is not a build error)."""
        if not self.enabled:
            return
        entry = self._entry(ext)
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=entry.parent)
            os.close(fd)
            shutil.copy2(built, tmp)
            os.replace(tmp, entry)      # atomic: a concurrent build sees all or nothing
            # the newest KEEP builds of each module stay (CI alone makes four: its venv's,
            # the ASan build's, Python 3.13's, an editable one's)
            old = sorted(entry.parent.glob("*.so"), key=lambda p: p.stat().st_mtime)
            for p in old[:-KEEP]:
                p.unlink(missing_ok=True)
        except OSError as exc:
            print(f"cypool: could not store {ext.name} in the build cache ({exc})",
                  file=sys.stderr)
