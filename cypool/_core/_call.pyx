"""The front ends' ``call(name, *args, **kwargs)`` entry, compiled: HER calls
``env.call("compute_reward", ...)`` on every replay batch, and the kernel behind it takes a
fraction of a microsecond, so the dispatch is one dictionary look-up and one vectorcall.

``call`` is a C method (METH_FASTCALL | METH_KEYWORDS) made into a method descriptor of the
front ends' class (:func:`method_of`): the caller's arguments go on to the pool's bound method
as they came, with no argument tuple or keyword dict made (a ``def f(self, name, *args,
**kwargs)`` makes both, and copies the dict again to pass it on: a fifth of a 256-goal
PointMaze compute_reward). Everything the bound methods do not serve, and a name given by
keyword, goes to the class's ``_call(name, args, kwargs)``."""
from cpython.object cimport PyTypeObject

cdef extern from "_call.h":
    # call as a method descriptor of cls (a new reference; NULL and an error set on failure)
    object cp_call_descriptor(PyTypeObject* cls)


def method_of(type cls):
    """``call`` as a method of cls (whose instances hold ``_bound_methods``, a dict of the
    pool's bound methods, and a ``_call(name, args, kwargs)`` for everything else)."""
    return cp_call_descriptor(<PyTypeObject*> cls)
