"""Inputs over time: joint torques, kept outside the frozen model.

A model's physics does not change when its controls do: :class:`Inputs` holds one torque signal per joint
(a constant, a piecewise-constant :class:`Schedule` or a Python callable of time) and is passed to the
integrators beside the model and the state, so that a controller or an optimiser changes inputs without
rebuilding the model.  For compiled loops the inputs become tables (:meth:`Inputs.table`): schedules and
constants merge into one piecewise-constant table, read in compiled code; callables are evaluated once per
step, before the loop, at the times the step uses (the end of each step).
"""

from __future__ import annotations

import numpy as np

from redmax._validate import check_vector
from redmax.errors import ModelError

__all__ = ["Inputs", "Schedule"]


def frozen(a) -> np.ndarray:
    """A read-only C-contiguous copy."""
    a = np.array(a, copy=True, order="C")
    a.setflags(write=False)
    return a


class Schedule:
    """Piecewise-constant joint input: ``values[k]`` applies for ``times[k] <= t < times[k+1]``.

    Before ``times[0]`` the first value applies.  Callable (``t -> (n,)``) and serialisable, so scene
    files can store it.

    Args:
        times: (k,) strictly increasing switch times (s).  values: (k, n) values (one row per interval).
    """

    def __init__(self, times, values):
        try:
            t = np.asarray(times, dtype=float).reshape(-1)
            v = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            raise ModelError("schedule: times and values must be numbers") from None
        if v.ndim == 1:
            v = v[:, None]
        if t.size == 0 or v.ndim != 2 or v.shape[0] != t.size:
            raise ModelError(f"schedule: need one row of values per time, got {t.size} times and {v.shape[0]} rows")
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(v))):
            raise ModelError("schedule: times and values must be finite")
        if np.any(np.diff(t) <= 0):
            raise ModelError(f"schedule: times must be strictly increasing, got {t.tolist()}")
        self.times = frozen(t)
        self.values = frozen(v)

    def __call__(self, t: float) -> np.ndarray:
        k = max(int(np.searchsorted(self.times, t, side="right")) - 1, 0)
        return self.values[k]

    def __repr__(self) -> str:
        return f"Schedule(times={self.times.tolist()}, values={self.values.tolist()})"


def torque_spec(torque, n: int, owner: str):
    """Validate one joint's torque: None, a constant (n,), a Schedule with rows of n, or a callable."""
    if torque is None:
        return None
    if isinstance(torque, Schedule):
        if torque.values.shape[1] != n:
            raise ModelError(f"{owner}: torque schedule has rows of {torque.values.shape[1]} values, expected {n} "
                             "(one per DOF)")
        return torque
    if callable(torque):
        return torque
    return frozen(check_vector(torque, n, f"{owner}: torque"))


class Inputs:
    """Joint torques of a model over time (one spec per joint, in the model's joint order).

    Build with :meth:`for_model` (joint name -> constant (n,), :class:`Schedule` or callable ``t -> (n,)``).
    ``torque(t)`` gives the (ndof,) generalized torque at time t.
    """

    def __init__(self, model_name: str, joint_names, idx, specs):
        self.model_name = model_name
        self.joint_names = tuple(joint_names)
        self.idx = np.asarray(idx, dtype=np.int64)
        self.specs = tuple(specs)
        self.ndof = int(self.idx[-1])

    @classmethod
    def for_model(cls, model, torques: dict | None = None) -> Inputs:
        """Inputs of ``model`` from ``{joint name: spec}`` (joints not named get no torque)."""
        specs = [None] * model.nb
        for name, spec in (torques or {}).items():
            if name not in model.joint_names:
                raise ModelError(f"{model.name}: inputs name unknown joint '{name}'")
            i = model.joint_names.index(name)
            specs[i] = torque_spec(spec, int(model.idx[i + 1] - model.idx[i]), f"joint '{name}'")
        return cls(model.name, model.joint_names, model.idx, specs)

    @property
    def empty(self) -> bool:
        """True when no joint has a torque."""
        return all(s is None for s in self.specs)

    @property
    def compiled(self) -> bool:
        """True when every torque is a constant or a Schedule (no Python callable)."""
        return not any(callable(s) and not isinstance(s, Schedule) for s in self.specs)

    def torque(self, t: float) -> np.ndarray:
        """Generalized joint torques (ndof,) at time t."""
        tau = np.zeros(self.ndof)
        for i, spec in enumerate(self.specs):
            if spec is None:
                continue
            a, b = self.idx[i], self.idx[i + 1]
            val = spec(t) if callable(spec) else spec
            try:
                v = np.asarray(val, dtype=float).reshape(-1)
            except (TypeError, ValueError):
                v = np.array([np.nan])
            if v.size != b - a or not np.all(np.isfinite(v)):
                raise ModelError(f"joint '{self.joint_names[i]}': torque at t={t} must be {b - a} finite value(s), "
                                 f"got {val!r}")
            tau[a:b] = v
        return tau

    def table(self, t_steps: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
        """Tables for compiled loops: ``(times (K,), values (K, ndof), per_step)``.

        Without callables, the merged piecewise-constant table (``values[k]`` for ``times[k] <= t <
        times[k+1]``, the first row before ``times[0]``) and ``per_step = False``.  With a callable, the
        torque at each time of ``t_steps`` (one row per step) and ``per_step = True``.
        """
        cached = getattr(self, "_table", None)  # the specs are fixed: one table (read by the loops, never written)
        if cached is not None:
            return cached
        if not self.compiled:
            vals = np.array([self.torque(float(t)) for t in t_steps]).reshape(len(t_steps), self.ndof)
            return np.asarray(t_steps, dtype=float), vals, True
        switch = sorted({float(x) for s in self.specs if isinstance(s, Schedule) for x in s.times})
        times = np.array(switch if switch else [0.0])
        vals = np.zeros((times.size, self.ndof))
        for k, t in enumerate(times):
            vals[k] = self.torque(t)
        self._table = (times, vals, False)
        return self._table
