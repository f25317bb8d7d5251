"""A task capsule built against another MjTask layout is refused before any kernel runs."""
import ctypes
import os

import numpy as np
import pytest

import cypool  # noqa: F401  (loads libmujoco before the extension)
from cypool.mujoco._pool import MjPool
from cypool.mujoco.tasks import hopper
import gymnasium

HOPPER_XML = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets",
                          "hopper.xml")

# pythonapi["name"] is a function object of this module's own: pythonapi.PyCapsule_New is one
# shared object whose argtypes other libraries set too (a destructor type: "expected
# CFunctionType instance" when one of them ran first in the process)
_new = ctypes.pythonapi["PyCapsule_New"]
_new.restype = ctypes.py_object
_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_ptr = ctypes.pythonapi["PyCapsule_GetPointer"]
_ptr.restype = ctypes.c_void_p
_ptr.argtypes = [ctypes.py_object, ctypes.c_char_p]
NAME = b"cypool.MjTask"


def _pool(capsule):
    return MjPool(HOPPER_XML, 2, 1, 0, capsule, np.zeros((2, 8)), 11, 1)


def test_the_real_capsule_is_accepted():
    _pool(hopper.task_capsule())


def test_a_layout_1_capsule_is_accepted():
    """Layout 2 only appends fields to MjEnv and MjGuard: a task built against 1 still runs."""
    real = _ptr(hopper.task_capsule(), NAME)
    size = 2 * ctypes.sizeof(ctypes.c_int) + 2 * ctypes.sizeof(ctypes.c_void_p)
    fake = (ctypes.c_char * size)()
    ctypes.memmove(fake, real, size)
    ctypes.cast(fake, ctypes.POINTER(ctypes.c_int))[0] = 1
    _pool(_new(ctypes.addressof(fake), NAME, None))


@pytest.mark.parametrize("field,value", [(0, 0), (0, 99), (1, 8)])
def test_a_foreign_layout_is_refused(field, value):
    real = _ptr(hopper.task_capsule(), NAME)
    size = 2 * ctypes.sizeof(ctypes.c_int) + 2 * ctypes.sizeof(ctypes.c_void_p)
    fake = (ctypes.c_char * size)()
    ctypes.memmove(fake, real, size)              # abi, size, then the two function pointers
    ctypes.cast(fake, ctypes.POINTER(ctypes.c_int))[field] = value
    with pytest.raises(ImportError, match="MjTask layout"):
        _pool(_new(ctypes.addressof(fake), NAME, None))
