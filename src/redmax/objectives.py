"""Objectives of simulated trajectories for the adjoint method (Sueda notes §3.5, Eq. 3.82).

An objective is a sum of terms of the sampled states plus a regularisation of the parameters:

    P = sum_terms P_term(q_k, qd_k at their sample times) + (regularization / 2) |p|^2.

Each term reports its value and its partial derivatives with respect to the sampled coordinates and rates,
``dP/dq`` and ``dP/dqd`` (N+1, n); the adjoint sweep turns those into gradients with respect to parameters.
A term's ``time`` picks the sample with ``|t_k - time| < 1e-6`` (``None``: the last sample).

* :class:`PointTarget` -- ``(weight/2) |x - target|^2`` with x the world position of a body point; its gradient
  ``dP/dq = weight J^T (R Gamma(r))^T (x - target)`` uses the world twists of the point's ancestors
  (``dx/dq_j = w_j x x + v_j``).
* :class:`StateTarget` -- ``(weight/2) |q - q*|^2 + (weight_qd/2) |qd - qd*|^2`` over chosen DOFs.
"""

from __future__ import annotations

import numpy as np

from redmax._validate import check_vector
from redmax.errors import SceneError
from redmax.kinematics import kinematics

__all__ = ["Objective", "PointTarget", "StateTarget", "sample_index"]

TIME_TOL = 1e-6


def sample_index(t: np.ndarray, time) -> int:
    """Index of the sample at ``time`` (``|t_k - time| < 1e-6``); None: the last sample."""
    if time is None:
        return int(t.size - 1)
    k = int(np.argmin(np.abs(t - float(time))))
    if abs(t[k] - float(time)) >= TIME_TOL:
        raise SceneError(f"objective time {time} is not a sample time of the run (samples every "
                         f"{t[1] - t[0] if t.size > 1 else 0:g} s from {t[0]:g} to {t[-1]:g})")
    return k


class PointTarget:
    """``(weight/2) |x(time) - target|^2``: x the world position of ``point`` (body frame) of ``body``."""

    kind = "point_target"

    def __init__(self, body: str, point=(0.0, 0.0, 0.0), target=(0.0, 0.0, 0.0), time=None, weight: float = 1.0):
        self.body = body
        self.point = check_vector(point, 3, "point_target: point")
        self.target = check_vector(target, 3, "point_target: target")
        self.time = None if time is None else float(time)
        self.weight = float(weight)

    def _body(self, model) -> int:
        if self.body not in model.body_names:
            raise SceneError(f"point_target: unknown body '{self.body}' (bodies: {', '.join(model.body_names)})")
        return model.body_names.index(self.body)

    def position(self, model, q, jstate) -> np.ndarray:
        kin = kinematics(model, q, None, jstate)
        E = kin.E_wb[self._body(model)]
        return E[:3, :3] @ self.point + E[:3, 3]

    def evaluate(self, model, result):
        """``(value, dPdq (N+1, n), dPdqd or None)`` on a Result."""
        from redmax.derivatives.eom import world_columns

        b = self._body(model)
        k = sample_index(result.t, self.time)
        kin = kinematics(model, result.q[k], None, result.jstate[k])
        E = kin.E_wb[b]
        x = E[:3, :3] @ self.point + E[:3, 3]
        e = x - self.target
        dq = np.zeros_like(result.q)
        Sw, _, _ = world_columns(model, kin)
        j = b
        while j >= 0:
            for d in range(int(model.idx[j]), int(model.idx[j + 1])):
                dq[k, d] = self.weight * e @ (np.cross(Sw[d, :3], x) + Sw[d, 3:])
            j = int(model.parent[j])
        return 0.5 * self.weight * float(e @ e), dq, None

    def to_dict(self) -> dict:
        out = {"type": self.kind, "body": self.body, "point": self.point.tolist(), "target": self.target.tolist(),
               "weight": self.weight}
        if self.time is not None:
            out["time"] = self.time
        return out


class StateTarget:
    """``(weight/2) |q_d - q*|^2 + (weight_qd/2) |qd_d - qd*|^2`` over DOFs ``dofs`` (default all) at ``time``."""

    kind = "state_target"

    def __init__(self, q=None, qd=None, time=None, weight: float = 1.0, weight_qd: float = 1.0, dofs=None):
        self.q = None if q is None else np.asarray(q, dtype=float).reshape(-1)
        self.qd = None if qd is None else np.asarray(qd, dtype=float).reshape(-1)
        self.time = None if time is None else float(time)
        self.weight = float(weight)
        self.weight_qd = float(weight_qd)
        self.dofs = None if dofs is None else np.asarray(dofs, dtype=np.int64)

    def evaluate(self, model, result):
        k = sample_index(result.t, self.time)
        d = np.arange(model.ndof) if self.dofs is None else self.dofs
        dq = np.zeros_like(result.q)
        dqd = np.zeros_like(result.q)
        val = 0.0
        if self.q is not None:
            e = result.q[k, d] - self.q
            val += 0.5 * self.weight * float(e @ e)
            dq[k, d] = self.weight * e
        if self.qd is not None:
            e = result.qdot[k, d] - self.qd
            val += 0.5 * self.weight_qd * float(e @ e)
            dqd[k, d] = self.weight_qd * e
        return val, dq, dqd

    def to_dict(self) -> dict:
        out = {"type": self.kind, "weight": self.weight, "weight_qd": self.weight_qd}
        for key in ("q", "qd", "dofs"):
            v = getattr(self, key)
            if v is not None:
                out[key] = v.tolist()
        if self.time is not None:
            out["time"] = self.time
        return out


class Objective:
    """A sum of state terms plus ``(regularization / 2) |p|^2`` over the stacked parameter values."""

    def __init__(self, terms, regularization: float = 0.0):
        self.terms = list(terms) if isinstance(terms, (list, tuple)) else [terms]
        self.regularization = float(regularization)

    def evaluate(self, model, result):
        """``(value, dPdq, dPdqd)`` of the state terms (the regularisation is added by the caller)."""
        val = 0.0
        dq = np.zeros_like(result.q)
        dqd = np.zeros_like(result.q)
        for term in self.terms:
            v, gq, gv = term.evaluate(model, result)
            val += v
            dq += gq
            if gv is not None:
                dqd += gv
        return val, dq, dqd
