"""What a Dask worker runs for one run of a sweep: load the scene by name, offset its initial state, simulate.

:func:`run_one` is a pure function of its arguments (a Dask task that may run twice, on another worker after a
worker died, with the same result) and never raises for a failing run: the failure is its record.
"""

from __future__ import annotations

import numpy as np

from redmax.errors import RedmaxError, SceneError

__all__ = ["WORKER_ENV", "error_message", "run_one"]

WORKER_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
"""The environment of the worker processes of a local cluster the sweep starts: one thread each (Numba's threads,
hence redmax's default ``threads=``, and the BLAS libraries'); a cluster of processes uses the cores already."""


def error_message(exc: BaseException) -> str:
    """The one line a failed run records: a RedmaxError's message, otherwise prefixed with the exception's type."""
    msg = " ".join(str(exc).split())
    if isinstance(exc, RedmaxError):
        return msg or type(exc).__name__
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def run_one(source: str, params: dict, options: dict, offsets: tuple, record: tuple) -> dict:
    """Run one simulation, as ``redmax.scenes.load(source, **params).simulate(state=..., **options)`` would in any
    process.

    Args:
        source: a scene name or scene-file path.  params: its scene parameters.  options: keywords of
            :meth:`redmax.scenes.Scene.simulate`.
        offsets: ``((kind, dof, value), ...)``: ``value`` is added to the initial coordinate (kind ``"q0"``) or rate
            (``"qd0"``) of DOF ``dof`` of the model's initial state (``model.initial_state()``); without offsets the
            run starts from the scene's initial state (``state=None``).
        record: what to return besides the status: "H", "final_state", "trajectory".

    Returns:
        A dict: ``status`` ("ok" or "error"), ``error`` (the message; "" when ok) and, when ok, ``dof_names``
        (ndof,) and what ``record`` asks for: ``H`` (float, the scene's energy units), ``q_final``, ``qdot_final``
        (ndof,), ``t`` (N+1,) in s, ``q``, ``qdot`` (N+1, ndof).
    """
    from redmax.scenes import load

    try:
        scene = load(source, **params)
        state = None
        if offsets:
            state = scene.model.initial_state()
            names = list(scene.model.dof_names)
            for kind, dof, value in offsets:
                if dof not in names:
                    raise SceneError(f"{kind}[{dof}]: scene {source!r} has no DOF {dof!r}")
                (state.q if kind == "q0" else state.qd)[names.index(dof)] += value
        res = scene.simulate(state=state, **options)
        out = {"status": "ok", "error": "", "dof_names": tuple(scene.model.dof_names)}
        if "H" in record:
            out["H"] = float(res.H)
        if "final_state" in record:
            out["q_final"], out["qdot_final"] = np.array(res.q[-1]), np.array(res.qdot[-1])
        if "trajectory" in record:
            out["t"], out["q"], out["qdot"] = np.asarray(res.t), np.asarray(res.q), np.asarray(res.qdot)
    except Exception as exc:  # a failing run is recorded, the sweep goes on
        return {"status": "error", "error": error_message(exc)}
    return out
