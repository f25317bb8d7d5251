"""The float64 dot routine numpy itself calls, found once at import.

gymnasium computes distances with ``np.linalg.norm(v)``, which for a 1-D float64 vector is
``sqrt(v.dot(v))``, and numpy hands ``v.dot(v)`` to its BLAS's ``ddot``. BLAS libraries pick
their ``ddot`` kernel at run time by CPU (OpenBLAS: Haswell, SkylakeX, Zen, Prescott, ...),
and the kernels sum in different orders, so a hand-written sum matches numpy only on some
CPUs. cypool's kernels therefore call the very routine numpy's ``_multiarray_umath`` is linked
against: its name is read from that module's ELF dynamic symbol table (the bundled
``scipy_openblas64_`` build imports ``scipy_cblas_ddot64_``; a system OpenBLAS or MKL build
imports ``cblas_ddot`` or an ILP64 variant), and its address is looked up through the module's
own dependency tree, as numpy's relocation found it.

When numpy was built without BLAS it computes the dot as a plain left-to-right sum, and so does
cypool's fallback, exactly. When numpy uses a BLAS that cannot be resolved here (a non-ELF
platform, a stripped or hidden symbol), the fallback sum is used and may differ from numpy in
the last bit on some CPUs: ``status()`` says which case holds, and MuJoCo pools whose results
depend on it warn once.
"""
from __future__ import annotations

import ctypes
import os
import ctypes.util
import re
import struct
from dataclasses import dataclass

from numpy._core import _multiarray_umath

# cblas_ddot with an optional vendor prefix (scipy_) and ILP64 suffix (64_ or _64).
_DDOT = re.compile(r"^(?P<prefix>\w*?_?)cblas_ddot(?P<suffix>64_|_64)?$")


@dataclass(frozen=True)
class DotRoutine:
    """How cypool computes numpy's float64 dot.

    kind: "blas" (numpy's own BLAS routine), "numpy-loop" (numpy has no BLAS; cypool's sum is
    numpy's loop, exact) or "fallback" (numpy's BLAS could not be resolved; a left-to-right
    sum that may differ from numpy in the last bit).
    """
    kind: str
    symbol: str | None = None
    library: str | None = None
    address: int = 0
    ilp64: bool = False
    detail: str = ""

    @property
    def exact(self) -> bool:
        return self.kind in ("blas", "numpy-loop")

    def describe(self) -> str:
        if self.kind == "blas":
            kernel = f", kernel {self.detail}" if self.detail else ""
            return f"{self.symbol} from {self.library} ({'ILP64' if self.ilp64 else 'LP64'}{kernel})"
        if self.kind == "numpy-loop":
            return "numpy has no BLAS: its left-to-right loop, reproduced exactly"
        return f"fallback left-to-right sum (may differ from numpy in the last bit): {self.detail}"


def _elf_dynamic_symbols(path: str):
    """(name, defined) for every symbol of an ELF64 little-endian file's .dynsym table."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + k * shentsize) for k in range(shnum)]
    for name, typ, _flags, _addr, off, size, link, _info, _align, entsize in sections:
        if typ != 11:  # SHT_DYNSYM
            continue
        stroff = sections[link][4]
        for k in range(size // entsize):
            st_name, _st_info, _st_other, st_shndx = struct.unpack_from("<IBBH", data, off + k * entsize)
            end = data.index(b"\0", stroff + st_name)
            yield data[stroff + st_name:end].decode(), st_shndx != 0
    return


def _library_of(address: int) -> str | None:
    """The shared object that holds `address` (dladdr)."""
    class DlInfo(ctypes.Structure):
        _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                    ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]
    try:
        libdl = ctypes.CDLL(ctypes.util.find_library("dl") or None)
        dladdr = libdl.dladdr
    except (OSError, AttributeError):
        return None
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
    info = DlInfo()
    if dladdr(ctypes.c_void_p(address), ctypes.byref(info)) and info.dli_fname:
        return info.dli_fname.decode()
    return None


def _openblas_core(handle, prefix: str, suffix: str) -> str:
    """OpenBLAS's kernel name (e.g. 'Haswell', 'SkylakeX'), or '' for other BLAS libraries."""
    for name in (f"{prefix}openblas_get_corename{suffix}", "openblas_get_corename"):
        fn = getattr(handle, name, None)
        if fn is not None:
            fn.restype = ctypes.c_char_p
            fn.argtypes = []
            return fn().decode()
    return ""


def resolve(module_path: str | None = None) -> DotRoutine:
    """Find the ddot that numpy's _multiarray_umath (or the module at module_path) calls."""
    path = module_path or _multiarray_umath.__file__
    try:
        names = [(n, d) for n, d in _elf_dynamic_symbols(path) if _DDOT.match(n)]
    except (OSError, ValueError, struct.error, IndexError) as exc:
        return DotRoutine("fallback", detail=f"cannot read the symbols of {path}: {exc}")
    if not names:
        return DotRoutine("numpy-loop")
    name = names[0][0]
    m = _DDOT.match(name)
    try:
        handle = ctypes.CDLL(path)  # already loaded: the same handle and dependency tree
        address = ctypes.cast(getattr(handle, name), ctypes.c_void_p).value
    except (OSError, AttributeError) as exc:
        return DotRoutine("fallback", symbol=name, detail=f"{name} not found: {exc}")
    if not address:
        return DotRoutine("fallback", symbol=name, detail=f"{name} resolved to NULL")
    return DotRoutine("blas", symbol=name, library=os.path.realpath(_library_of(address) or "?"), address=address,
                      ilp64=m.group("suffix") is not None,
                      detail=_openblas_core(handle, m.group("prefix"), m.group("suffix") or ""))


ROUTINE = resolve()
