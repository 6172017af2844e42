"""The backward sweep of the adjoint method over a recorded forward run (Sueda notes §3.5).

Stack the stage unknowns of a run (every Newton solve m: BDF1 and BDF2 steps, both stages of each SDIRK2 step, the
SDIRK2 start of BDF2, stage a included) into ``xbar`` and their residuals into ``gbar``; ``gbar(xbar, p) = 0`` is
block lower triangular in ``xbar``.  For an objective ``P(xbar, p)`` the adjoint ``zbar`` solves
``(dgbar/dxbar)^T zbar = dP/dxbar`` by back substitution,

    z_m = H_m^-T (y_m),   y_l <- y_l - (dg_m/dx_l)^T z_m   for every earlier unknown l that g_m reads,

and ``dP/dp = dP/dp|_explicit - sum_m z_m^T dg_m/dp``.  Every stage residual is ``M (x_m - base_m) - c2 f(x_m,
qd_m)`` with ``qd_m = (c1/c2)(x_m - z_m)``, and ``base_m``, ``z_m`` are recorded as linear combinations
``{l: B_ml}``, ``{l: Z_ml}`` of earlier unknowns and of the initial state (:mod:`redmax.integrators.bdf`), so the
coupling blocks are

    dg_m/dx_l = -B_ml M_m + c1_m Z_ml D_m

with M and ``D = df/dqd`` at the solution.  This reproduces the blocks of notes Eqs. 3.92 and 3.100 (BDF1:
``-2 M + h D``, ``M``; BDF2: ``-8/3 M + 8/9 h D``, ``22/9 M - 2/9 h D``, ``-8/9 M``, ``1/9 M``) and those of the SDIRK2
start (notes §3.5.2).  Stage a is kept: the notes drop its row and column of Eq. 3.105 when the objective does not
read stage a, which also needs ``dg_a/dp = 0`` and fails for torque parameters.  Its blocks are ``dg_1/dq_a =
-(2(1-a)/a) M_1 + (1-a) h D_1`` (from ``dqd_1/dq_a = -(1-a)/(a^2 h)`` and the force factor ``(a h)^2``; notes
Eq. 3.98 prints ``((1-a)/a) h D_1``), ``dg_2/dq_a = -8(a-1)/(9a^2) M_2`` and ``dg_3/dq_a = 2(a-1)/(9a^2) M_3``.  The
tangent factors are those of the forward Newton solves, taken at the returned points; each backward step costs one
pair of triangular solves and two matrix-vector products.  Keys "q0" and "qd0" collect the gradient with respect
to the initial state.

Rates in the objective: ``dP/dqd_k`` at a sample maps to the unknowns through ``qd_m = (c1/c2)(x_m - z_m)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from redmax.errors import SimulationError

__all__ = ["AdjointSolution", "adjoint_sweep"]


@dataclass
class AdjointSolution:
    """Adjoint of a recorded run.

    Attributes:
        z: (R, n) one adjoint vector per stage record.  dq0, dqd0: (n,) total derivatives of the objective with
        respect to the initial coordinates and rates (through the dynamics and the objective's own terms).
    """

    z: np.ndarray
    dq0: np.ndarray
    dqd0: np.ndarray


def adjoint_sweep(tape, dPdq: np.ndarray, dPdqd: np.ndarray | None = None) -> AdjointSolution:
    """Backward sweep (module docstring).

    Args:
        tape: the :class:`redmax.integrators.bdf.Tape` of a forward run with ``record=True``.
        dPdq, dPdqd: (N+1, n) partial derivatives of the objective with respect to the sampled coordinates and
            rates (``dPdqd`` may be None).
    """
    if tape.reparameterized:
        raise SimulationError("the adjoint method does not transport the adjoint through a chart switch or "
                              "re-parameterisation, and one happened during this run; shorten "
                              "the run or start in a chart that does not switch")
    recs = tape.records
    R = len(recs)
    n = tape.q0.size
    y = np.zeros((R, n))
    y0 = {"q0": np.zeros(n), "qd0": np.zeros(n)}

    def add(key, v):
        if isinstance(key, str):
            y0[key] += v
        else:
            y[key] += v

    N = tape.outputs.size
    for k in range(N):
        m = int(tape.outputs[k])
        gq = dPdq[k]
        gv = None if dPdqd is None else dPdqd[k]
        if m < 0:
            y0["q0"] += gq
            if gv is not None:
                y0["qd0"] += gv
            continue
        y[m] += gq
        if gv is not None and np.any(gv):
            rec = recs[m]
            kappa = rec.c1 / rec.c2
            y[m] += kappa * gv
            for key, c in rec.Z.items():
                add(key, -kappa * c * gv)
    z = np.zeros((R, n))
    for m in range(R - 1, -1, -1):
        rec = recs[m]
        if rec.lu is None:
            raise SimulationError("the run was not recorded for the adjoint (simulate_implicit(..., record=True))")
        zm = sla.lu_solve(rec.lu, y[m], trans=1)
        z[m] = zm
        keys = set(rec.B) | set(rec.Z)
        if not keys:
            continue
        Mz = rec.M @ zm
        Dz = rec.D.T @ zm
        for key in keys:
            add(key, rec.B.get(key, 0.0) * Mz - rec.c1 * rec.Z.get(key, 0.0) * Dz)
    return AdjointSolution(z, y0["q0"], y0["qd0"])
