#!/usr/bin/env bash
# Run cypool's test suite on an AddressSanitizer build of its extensions.
#
# Usage:
#   tools/sanitize.sh [pytest args...]        # default: the suite (soak tests excluded, and
#                                             # the speed and notebook tests, see below); CI
#                                             # runs this default
#   tools/sanitize.sh tests/test_property.py  # a subset
#
# What it does:
#   1. Copies the source tree (tracked and untracked-but-not-ignored files, plus the generated
#      Cython .c/.cpp files so that unchanged modules are not cythonized again) into a work
#      directory outside the repository: $CYPOOL_SANITIZE_DIR, default /tmp/cypool-asan.
#      The checkout's own in-place extensions are never touched.
#   2. Builds the extensions there with -fsanitize=address: every one setup.py builds (the
#      core's and those each family folder lists, in its _extensions.py). Test-only modules
#      are built by their tests (tests/_buildext.py, into $CYPOOL_CACHE_DIR below);
#      tests/box2d/_cr_check.pyx, over the CarRacing rasterisers, with -fsanitize=address too.
#   3. Runs pytest from the copy with libasan preloaded (CPython itself is not instrumented),
#      PYTHONMALLOC=malloc so that ASan sees Python's allocations too, and detect_leaks=0
#      because CPython keeps its own allocations until exit. The extensions are built with
#      -fsanitize-recover=address and run with halt_on_error=0, so one report does not end
#      the run; every report (of the test process and of the child processes some tests
#      start) is written to $CYPOOL_SANITIZE_DIR/asan-report.<pid> and printed at the end.
#      A clean run: pytest exits 0 and there is no report file.
#      env.xla()'s FFI handler (cypool/xla/_handler.cc, compiled on first use) is built with
#      -fsanitize=address too (CYPOOL_XLA_CXXFLAGS, cache in $CYPOOL_SANITIZE_DIR/cache), and
#      libstdc++ is preloaded after libasan (jaxlib throws C++ exceptions at start-up).
#      libmujoco, the cached ALE static library and CPython are not instrumented: errors
#      inside them show only where they pass through functions ASan intercepts.
#   4. Names the test behind every report: tools/asan_hook.c, compiled into the work directory
#      and preloaded ahead of libasan, defines ASan's __asan_on_error hook, which writes
#      "cypool-asan: test=<PYTEST_CURRENT_TEST> pid=<pid> ppid=<ppid> tid=<tid> cmd=<argv>" at
#      the head of each report (memory errors and deadly signals such as SEGV), so that even a
#      report cut short by its process exiting names its test. Children inherit LD_PRELOAD,
#      ASAN_OPTIONS and PYTEST_CURRENT_TEST (subprocesses, os.fork children, multiprocessing
#      spawn children; every test that passes env= builds it from os.environ). Before pytest
#      runs, a probe child must produce a report that names it, or the run stops (exit 2);
#      tests/test_asan_attribution.py checks the same in a subprocess thread, a fork child
#      and a spawn child. At the end each report is printed with its test and pid ("test=none":
#      outside any test, e.g. at collection or at the test process's exit; "test=unknown":
#      the report has no marker, i.e. the process ran without the hook).
#
# Environment:
#   CYPOOL_SANITIZE_DIR   work directory (default /tmp/cypool-asan); reused between runs, so a
#                         second run only rebuilds what changed
#   CYPOOL_BUILD_JOBS     parallel cythonize/compile jobs (default: CPU count)
#   SANITIZE_PYTHON       interpreter (default: python)
#
# Needs gcc with libasan (Debian/Ubuntu: gcc, which ships it). Exit status: pytest's, or 3 when
# AddressSanitizer reported an error although pytest passed, or 2 when the build or the
# attribution probe failed.
set -euo pipefail

ROOT=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
WORK=${CYPOOL_SANITIZE_DIR:-/tmp/cypool-asan}
PY=${SANITIZE_PYTHON:-python}
SRC="$WORK/src"
LIBASAN=$(gcc -print-file-name=libasan.so)
if [ ! -e "$LIBASAN" ]; then
    echo "sanitize.sh: libasan.so not found (gcc -print-file-name=libasan.so gave '$LIBASAN')" >&2
    exit 2
fi

echo "== copying the source tree to $SRC"
mkdir -p "$SRC"
# start from a clean copy (files deleted or renamed in the checkout must not linger), but keep
# the instrumented extensions, so that only modules whose sources changed are rebuilt
find "$SRC" -type f ! -name '*.so' -delete
(
    cd "$ROOT"
    {
        git ls-files -co --exclude-standard
        # generated sources (ignored by git): keeps cythonize from redoing unchanged modules
        git ls-files -o --ignored --exclude-standard -- 'cypool/*.c' 'cypool/*.cpp'
    } | grep -v -E '\.so$' | sort -u | tar -cf - -T - 2>/dev/null
) | tar -xpf - -C "$SRC"

# every extension setup.py builds (cypool/_core's and each family folder's _extensions.py)
MODULES=$(cd "$SRC" && "$PY" - <<'PYEOF'
import glob, runpy
mods = []
for path in sorted(glob.glob("cypool/*/_extensions.py")):
    mods += [e[1] for e in runpy.run_path(path)["EXTENSIONS"]]
print(",".join(mods))
PYEOF
)

echo "== building the ASan extensions ($MODULES)"
ASAN_CFLAGS="-fsanitize=address -fsanitize-recover=address -fno-omit-frame-pointer -g"
# setuptools rebuilds on newer sources only: a change of flags must rebuild everything
if [ "$(cat "$WORK/flags.stamp" 2>/dev/null)" != "$ASAN_CFLAGS" ]; then
    find "$SRC" -name '*.so' -delete
    rm -rf "$WORK/build"
    echo "$ASAN_CFLAGS" >"$WORK/flags.stamp"
fi
# The work directory may hold extensions built from another tree (another clone, an older
# commit), and setuptools only compares file times, which a fresh clone makes all new. So the
# checksums of the sources of the last build are kept: the committed sources (not the
# generated .c/.cpp files, which embed the clone's and the venv's paths; they follow their
# .pyx) and the toolchain (compiler, Python, numpy, Cython). Unchanged, an extension is kept:
# every .so is dated back and every source that differs is touched (rebuilt, with everything
# that depends on it). With no record or another toolchain, everything is rebuilt.
sources() {
    (cd "$ROOT" && git ls-files -co --exclude-standard -- cypool buildtools setup.py |
        grep -E '\.(pyx|pxd|c|cc|cpp|h|hpp|py)$' | sort | xargs -d '\n' sha256sum)
}
toolchain() {
    gcc --version | head -1
    "$PY" -c 'import sys, numpy, Cython; print(sys.version, numpy.__version__, Cython.__version__)'
}
sources >"$WORK/sources.new"
toolchain >"$WORK/toolchain.new"
if [ -f "$WORK/sources.built" ] && cmp -s "$WORK/toolchain.new" "$WORK/toolchain.built" 2>/dev/null; then
    find "$SRC" -name '*.so' -exec touch -d "@$(( $(date +%s) - 5 ))" {} +
    { diff "$WORK/sources.built" "$WORK/sources.new" || true; } | awk '/^>/ {print $3}' |
        while read -r f; do
            touch "$SRC/$f"
        done
else
    find "$SRC" -name '*.so' -delete
fi
(
    cd "$SRC"
    CFLAGS="$ASAN_CFLAGS" CXXFLAGS="$ASAN_CFLAGS" LDFLAGS="-fsanitize=address" \
    CYPOOL_BUILD_ONLY="$MODULES" \
        "$PY" setup.py -q build_ext --inplace --build-temp "$WORK/build" >"$WORK/build.log" 2>&1 \
        || { tail -40 "$WORK/build.log"; echo "sanitize.sh: ASan build failed (log: $WORK/build.log)" >&2; exit 2; }
)
mv "$WORK/sources.new" "$WORK/sources.built"
mv "$WORK/toolchain.new" "$WORK/toolchain.built"
syms=$(nm -D "$SRC"/cypool/_core/_engine*.so)
if ! grep -q __asan_init <<<"$syms"; then
    echo "sanitize.sh: $SRC/cypool/_core/_engine*.so is not instrumented" >&2
    exit 2
fi

# The attribution hook (tools/asan_hook.c): writes "cypool-asan: test=... pid=..." at the head
# of every report. It must come before libasan in LD_PRELOAD (libasan's weak __asan_on_error
# would win otherwise), hence verify_asan_link_order=0; it depends on libasan, which is still
# initialised first.
HOOK="$WORK/asan_hook.so"
gcc -shared -fPIC -O1 -o "$HOOK.tmp" "$ROOT/tools/asan_hook.c" "$LIBASAN" \
    || { echo "sanitize.sh: cannot build $ROOT/tools/asan_hook.c" >&2; exit 2; }
mv "$HOOK.tmp" "$HOOK"
# detect_leaks=0: CPython frees little at exit. Reports go to files, so that those of child
# processes and of a test process that crashes are kept too. Children inherit all of these
# (the tests' subprocesses pass env=dict(os.environ, ...) or nothing).
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=0:allocator_may_return_null=1:detect_stack_use_after_return=0:symbolize=1:verify_asan_link_order=0:log_path=$WORK/asan-report${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export PYTHONMALLOC=malloc
rm -f "$WORK"/asan-report.*
# libstdc++ right after libasan: jaxlib throws C++ exceptions while it starts, and ASan's
# __cxa_throw interceptor aborts if libstdc++ was not loaded when libasan initialised.
LIBSTDCXX=$(gcc -print-file-name=libstdc++.so.6)
export LD_PRELOAD="$HOOK:$LIBASAN:$LIBSTDCXX${LD_PRELOAD:+:$LD_PRELOAD}"
# env.xla()'s FFI handler, compiled on first use (cypool/xla/_build.py): instrumented too,
# into the work directory's own cache (the flags are part of the cache key)
export CYPOOL_XLA_CXXFLAGS="-fsanitize=address -fsanitize-recover=address -fno-omit-frame-pointer"
export CYPOOL_CACHE_DIR="$WORK/cache"
export PYTHONPATH="$SRC${PYTHONPATH:+:$PYTHONPATH}"
export CYPOOL_SANITIZER=asan   # RSS bounds are meaningless under ASan's quarantine: skipped

cd "$SRC"
"$PY" -c "import cypool, sys; p = cypool.__file__; sys.exit(0 if p.startswith('$SRC') else 'sanitize.sh: imported cypool from ' + p)"

# The attribution works: a child that reports (a read past a heap block, through ASan's own
# report entry point) must leave a report whose marker names the (fake) test and its pid.
probe=$(PYTEST_CURRENT_TEST="sanitize.sh::attribution probe" "$PY" -c '
import ctypes, os
lib = ctypes.CDLL(None)
lib.malloc.restype = ctypes.c_void_p
p = lib.malloc(8)
lib.__asan_report_load1_noabort(ctypes.c_void_p(p + 8))
print(os.getpid())')
if ! grep -q "^cypool-asan: test=sanitize.sh::attribution probe pid=$probe " \
        "$WORK/asan-report.$probe" 2>/dev/null; then
    echo "sanitize.sh: an ASan report does not name its test (tools/asan_hook.c not in effect);" \
        "the probe's report:" >&2
    head -5 "$WORK/asan-report.$probe" >&2 2>/dev/null || echo "(none)" >&2
    exit 2
fi
rm -f "$WORK/asan-report.$probe"

echo "== running pytest under AddressSanitizer (log: $WORK/pytest.log)"
set +e
# --capture=sys: native code's writes to fd 2 reach the log instead of a capture file
# By default every test but two: test_bench_check.py measures speed (meaningless under ASan)
# and test_notebook.py runs a Jupyter kernel whose matplotlib throws C++ exceptions through
# ASan's __cxa_throw interceptor, which aborts when libasan is preloaded into a
# non-instrumented interpreter (an ASan limitation, not a cypool error).
# The default run prints its 40 slowest tests (what to sample next as the suite grows: see
# tests/conftest.py's sweeps) and is spread over one worker process per core (pytest-xdist, a
# file's tests on one worker) where pytest-xdist is installed: an ASan process is about twice
# as slow as a plain one, and this halves the pass on 2 cores. Each worker inherits the
# preloaded libasan, the hook and the report path, and sets PYTEST_CURRENT_TEST as pytest does.
if [ $# -eq 0 ]; then
    set -- tests --ignore=tests/test_bench_check.py --ignore=tests/test_notebook.py --durations=40
    if "$PY" -c "import xdist" 2>/dev/null; then
        set -- -n auto --dist loadfile "$@"
    fi
fi
"$PY" -m pytest -p no:cacheprovider --capture=sys -q "$@" 2>&1 | tee "$WORK/pytest.log"
rc=${PIPESTATUS[0]}
set -e
reports=$(ls "$WORK"/asan-report.* 2>/dev/null || true)
if [ -n "$reports" ]; then
    for r in $reports; do
        # the hook's marker: the test (pytest's PYTEST_CURRENT_TEST, inherited by children),
        # pid, parent pid, thread and command line of the process that reported
        marks=$(grep "^cypool-asan: " "$r" | sort -u || true)
        echo "== $r"
        if [ -n "$marks" ]; then
            sed 's/^cypool-asan: /   /' <<<"$marks"
        else
            echo "   test=unknown pid=${r##*.} (no cypool-asan marker: tools/asan_hook.c was not loaded)"
        fi
        # a process that died in an ASan CHECK leaves a report without these lines
        grep -E "ERROR: AddressSanitizer|^    #[0-9] |^SUMMARY" "$r" | head -20 || head -5 "$r"
    done
    echo "sanitize.sh: AddressSanitizer reported $(echo "$reports" | wc -w) error log(s)" >&2
    [ "$rc" -ne 0 ] || rc=3
fi
echo "sanitize.sh: pytest exit status $rc"
exit "$rc"
