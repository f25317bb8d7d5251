"""Exceptions raised by cypool, and the check every family makes of its kwargs."""
import difflib


class CypoolError(Exception):
    """Base class of cypool's own errors."""


class EngineError(CypoolError, RuntimeError):
    """A simulator failed inside the batch (a MuJoCo fatal error, an ALE exception).

    The failed envs are named in ``env_ids`` with their ``messages``; they are idle (not in
    flight) and reset on their next step (autoreset modes), or need
    ``reset(options={"reset_mask": ...})`` (DISABLED).

    The other envs of the batch stepped normally, and their results are not lost: ``result``
    is ``(obs, reward, terminated, truncated, info)`` for them, one row per env named by
    ``info["env_id"]`` (None if every env of the batch failed), exactly what the call would
    have returned for those envs; they are idle too. A population's member ``recv`` also sets
    ``members``, the members of the batch.
    """

    def __init__(self, failures, result=None, members=None):
        self.env_ids = [i for i, _ in failures]
        self.messages = [m for _, m in failures]
        self.result = result
        self.members = members
        lines = "; ".join(f"env {i}: {m}" for i, m in failures)
        super().__init__(f"cypool: engine error in env(s) {self.env_ids}: {lines}")


class ClosedEnvError(CypoolError, RuntimeError):
    """The env was closed and cannot be used any more."""


def check_known_kwargs(env_id, kwargs, allowed):
    """TypeError, as Python's own for a call, naming the first kwarg not in `allowed` and the
    closest allowed names."""
    for k in kwargs:
        if k not in allowed:
            close = difflib.get_close_matches(k, list(allowed), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise TypeError(f"{env_id} got an unexpected keyword argument '{k}'{hint}")


class WorkerDiedError(CypoolError, RuntimeError):
    """A Ray actor holding some of the envs died (killed, out of memory, node lost).

    ``worker`` is the actor's index, ``env_ids`` the global ids of the envs it held and
    ``cause`` Ray's own message. The env cannot continue: ``close()`` it and make a new one.
    """

    def __init__(self, worker: int, env_ids, cause: str = ""):
        self.worker = int(worker)
        self.env_ids = [int(i) for i in env_ids]
        self.cause = cause
        lo, hi = self.env_ids[0], self.env_ids[-1] + 1
        msg = (f"cypool: Ray worker {self.worker} holding envs [{lo}, {hi}) died; this "
               "VectorEnv cannot continue: close() it and make a new one")
        if cause:
            msg += f" (Ray: {cause})"
        super().__init__(msg)

    def __reduce__(self):
        return type(self), (self.worker, self.env_ids, self.cause)
