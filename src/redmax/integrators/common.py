"""Pieces shared by the integrators: re-parameterisation, the simulation Result, time grids."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from redmax.dynamics.redmax import energies
from redmax.errors import SimulationError
from redmax.joints.dispatch import joint_reparam

__all__ = ["Result", "reparameterize", "time_grid"]


def reparameterize(model, q: np.ndarray, qd: np.ndarray, jstate: np.ndarray, margin: float = 0.0) -> bool:
    """Re-parameterise every joint that needs it, in place (q, qd (ndof,), jstate (nb,)).

    Spherical joints in exponential coordinates with |q| > 1.5 pi move to the equivalent shorter
    rotation vector; Euler-angle joints near gimbal lock switch charts.  Rotation and angular velocity
    are unchanged.  ``margin`` widens the trigger (ODE events).  Returns True if anything changed.
    """
    changed = False
    for i in model.reparam_joints:
        a, b = model.idx[i], model.idx[i + 1]
        js, ch = joint_reparam(model.jtype[i], model.jparam[model.jp_off[i] : model.jp_off[i + 1]], q[a:b], qd[a:b],
                               int(jstate[i]), margin)
        if ch:
            jstate[i] = js
            changed = True
    return changed


MAX_SAMPLES = 1e8  # a trajectory longer than this would not fit in memory for any useful model


def time_grid(t0: float, h: float, duration: float) -> tuple[int, np.ndarray]:
    """Number of steps ``round(T / h)`` and sample times ``t_k = t0 + k h`` (formed by multiplication)."""
    if not (np.isfinite(h) and h > 0.0):
        raise SimulationError(f"time step must be positive and finite, got {h}")
    if not (np.isfinite(duration) and duration >= 0.0):
        raise SimulationError(f"duration must be non-negative and finite, got {duration}")
    n = duration / h
    if n > MAX_SAMPLES:
        raise SimulationError(f"duration / dt = {n:.3g} samples is more than {MAX_SAMPLES:.0e}: choose a larger "
                              f"dt (got dt = {h}, duration = {duration})")
    n = int(np.rint(n))
    return n, t0 + h * np.arange(n + 1)


@dataclass
class Result:
    """A simulated trajectory sampled at ``t`` (N+1,).

    Attributes:
        t: (N+1,) times.  q, qdot: (N+1, ndof) coordinates and rates (as stored by the integrator,
            i.e. before any re-parameterisation applied at the start of the next step).
        jstate: (N+1, nb) chart words.  energy: dict of (N+1,) arrays with keys ``kinetic``,
            ``gravity``, ``joint_springs``, ``springs`` and ``total``.
        meta: integrator name, step, method, scene name, statistics.
    """

    t: np.ndarray
    q: np.ndarray
    qdot: np.ndarray
    jstate: np.ndarray
    energy: dict
    meta: dict = field(default_factory=dict)

    @property
    def H(self) -> float:
        """The reference regression number ``T(t_end) + V(t_end) - V(0)`` (reference-scenes.md)."""
        e = self.energy
        V = e["total"] - e["kinetic"]
        return float(e["kinetic"][-1] + V[-1] - V[0])


def record_energies(model, forces, qs, qds, jss) -> dict:
    """Energies at every sample, as a dict of arrays."""
    rows = [energies(model, q, qd, js, forces) for q, qd, js in zip(qs, qds, jss, strict=True)]
    keys = list(rows[0].keys())
    return {k: np.array([r[k] for r in rows]) for k in keys}


def check_finite_state(q, qd, t) -> None:
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))):
        raise SimulationError(f"the state became non-finite at t = {t:.6g}; reduce the time step")
