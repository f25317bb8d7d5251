"""The front ends' ``call(name, *args, **kwargs)`` entry, compiled: HER calls
``env.call("compute_reward", ...)`` on every replay batch, and the kernel behind it takes a
fraction of a microsecond, so the dispatch is kept to one dictionary look-up and one call."""


def call(self, name, *args, **kwargs):
    """SyncVectorEnv.call: ``"render"`` calls :meth:`render`; a method the family
    declares (``FamilySpec.methods``: Gymnasium-Robotics' ``compute_reward``, ...) runs
    for every env at once, one result per env; an attribute (see :meth:`get_attr`) is
    returned per env, as SyncVectorEnv returns non-callables.
    ``"step"``, ``"reset"`` and ``"close"`` are refused (ValueError): SyncVectorEnv runs
    them on each sub-env alone, while a cypool pool steps, resets and closes its envs
    together (env.step, env.reset with reset_mask, env.close)."""
    # the pool's bound methods (Pool.bind_method; emptied once the pool closes)
    fn = (<dict> self._bound_methods).get(name)
    if fn is not None:
        return fn(*args, **kwargs)
    return self._call(name, args, kwargs)
