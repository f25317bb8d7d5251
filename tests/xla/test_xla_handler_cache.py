"""A corrupted cached xla handler (issue #40 item 10): a bad copy, a truncated write or a full
disk leaves a file ctypes cannot load ("wrong ELF class", "file too short", "invalid ELF
header"). xla() rebuilds it once; where the rebuild fails too it raises a RuntimeError naming
cypool's cache and how to clear it. Every test uses a temporary CYPOOL_CACHE_DIR: the real
cache is untouched."""
import errno
import os
import subprocess
import sys
import textwrap

import jax
import pytest

from cypool.xla import _build

# A fresh process (the handler loads and registers with jax once per process): make an env,
# xla() it and check a jitted step against the Python step.
CHILD = textwrap.dedent("""
    import jax, numpy as np, cypool
    from cypool.xla import _build
    env = cypool.make_vec("CartPole-v1", num_envs=3, num_threads=1)
    ref = cypool.make_vec("CartPole-v1", num_envs=3, num_threads=1)
    env.reset(seed=1), ref.reset(seed=1)
    handle, recv, send, step = env.xla()
    a = np.array([0, 1, 1], np.int32)
    _, (o, r, te, tr, info) = jax.jit(step)(handle, a)
    po, pr, pte, ptr, _ = ref.step(a)
    assert np.array_equal(np.asarray(o), po) and np.array_equal(np.asarray(r), pr)
    assert np.array_equal(np.asarray(te), pte) and np.array_equal(np.asarray(tr), ptr)
    print("LOADED", _build._state["path"])
""")


def _wrong_class(path, good):
    # a 32-bit ELF header: dlopen says "wrong ELF class: ELFCLASS32"
    with open(path, "wb") as f:
        f.write(b"\x7fELF\x01\x01\x01" + b"\x00" * 57)


def _sealed_wrong_class(path, good):
    # the same 32-bit header sealed as cypool seals a build (a library of another machine
    # copied in): it passes the seal check, and dlopen refuses it with an OSError
    _wrong_class(path, good)
    _build._seal(path)


def _truncated(path, good):
    # a copy cut short (a full disk, an interrupted copy)
    with open(path, "wb") as f:
        f.write(good[:len(good) // 2])


def _not_elf(path, good):
    with open(path, "wb") as f:
        f.write(b"this is not a shared object\n")


def _handler_path(monkeypatch, tmp_path):
    monkeypatch.setenv("CYPOOL_CACHE_DIR", str(tmp_path))
    path, cmd = _build.library_path(jax)
    assert path.startswith(str(tmp_path))
    return path, cmd


@pytest.mark.parametrize("corrupt", [_wrong_class, _sealed_wrong_class, _truncated,
                                     _not_elf])
def test_a_corrupted_cached_handler_is_rebuilt_once(monkeypatch, tmp_path, corrupt):
    path, cmd = _handler_path(monkeypatch, tmp_path)
    _build._build(path, cmd)                  # a good handler in the temporary cache
    with open(path, "rb") as f:
        good = f.read()
    corrupt(path, good)
    env = dict(os.environ, CYPOOL_CACHE_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"LOADED {path}" in r.stdout
    with open(path, "rb") as f:
        assert f.read(5) == b"\x7fELF\x02"    # the rebuilt (64-bit) library replaced it
    assert os.listdir(os.path.dirname(path)) == [os.path.basename(path)]   # no temp left
    assert _build._check(path) is None


def test_a_truncated_handler_fails_its_check_before_dlopen(monkeypatch, tmp_path):
    # dlopen of a library cut short can succeed and then fault (SIGBUS) when a segment past
    # the end of the file is touched: the seal check catches it first
    path, cmd = _handler_path(monkeypatch, tmp_path)
    _build._build(path, cmd)
    assert _build._check(path) is None
    with open(path, "rb") as f:
        good = f.read()
    for corrupt in (_truncated, _not_elf, _wrong_class):
        corrupt(path, good)
        assert _build._check(path) is not None
    with open(path, "wb") as f:               # one flipped byte in the code
        f.write(good[:1000] + bytes([good[1000] ^ 1]) + good[1001:])
    assert "sha256" in _build._check(path)


def _failing_build(kind):
    def build(path, cmd):
        if kind == "compiler":
            raise RuntimeError("cypool: compiling env.xla()'s FFI handler failed (test)")
        if kind == "disk":
            raise OSError(errno.ENOSPC, "No space left on device")
        _not_elf(path, b"")                   # "succeeds", but leaves a bad file again
    return build


@pytest.mark.parametrize("kind", ["compiler", "disk", "still_bad"])
def test_a_failed_rebuild_names_the_cache_and_how_to_clear_it(monkeypatch, tmp_path, kind):
    path, _ = _handler_path(monkeypatch, tmp_path)
    os.makedirs(os.path.dirname(path))
    _sealed_wrong_class(path, b"")           # passes the seal check, fails dlopen
    calls = []
    failing = _failing_build(kind)
    monkeypatch.setattr(_build, "_build", lambda p, c: (calls.append(p), failing(p, c)))
    monkeypatch.setattr(_build, "_state", {})     # as in a process that has not loaded it
    with pytest.raises(RuntimeError) as exc:
        _build.load()
    msg = str(exc.value)
    assert calls == [path]                        # rebuilt once, not in a loop
    assert path in msg                            # the file
    cache = os.path.join(str(tmp_path), "xla")
    assert f"rm -rf {cache}" in msg               # and how to clear the cache
    assert "wrong ELF class" in msg               # the original loader error
    assert "CYPOOL_CACHE_DIR" in msg
    assert _build._state == {}                    # nothing registered


def test_a_good_cached_handler_is_not_rebuilt(monkeypatch, tmp_path):
    path, cmd = _handler_path(monkeypatch, tmp_path)
    _build._build(path, cmd)
    calls = []
    monkeypatch.setattr(_build, "_build", lambda p, c: calls.append(p))
    lib = _build._open(path, cmd)                 # loads (a second copy: not registered)
    assert calls == [] and hasattr(lib, "cypool_xla_handler")
