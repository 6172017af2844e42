"""Joint derivative kernels for every joint kind: dS/dq, dSdot/dq, dQ/dq from the core expansion
(:mod:`redmax.joints.core_expansion`).

**Core expansion.**  Every joint is written as a chain of *core joints* whose motion subspace is constant in
their own frame (the Lie-subgroup joints of Singh, Russell & Wensing, §II): screws (1 DOF), planar and
translational joints (2 and 3 DOFs), spherical joints (3 DOFs, ``S = [1; 0]``) and free joints (6 DOFs,
``S = 1_6``), separated by massless frames, with core rates ``nu = A(q) qd``:

* revolute, prismatic, planar, translational: one core joint, ``A = 1``;
* universal ``Rx(q1) Ry(q2)`` and Euler charts ``R_a1 R_a2 R_a3``: one screw per angle, ``A = 1``;
* spherical (exponential coordinates): one spherical core joint, ``A = J_r(q)`` (the right Jacobian of
  SO(3)); with ``tangent=True`` (and for Euler joints) ``A = 1``: the rates are the body angular velocity;
* spline curve ``Q = C exp(dC_2 Bt_2(u)) exp(dC_3 Bt_3(u)) exp(dC_4 Bt_4(u))``: three screws with
  ``A = dBt/du`` (3 x 1); spline surface ``Q = prod_k exp(e_k f_k(q))``: six screws, ``A = df/dq`` (6 x 2);
* composite ``Q = Q_1 ... Q_m``: the sub-joints' expansions in order; with ``tangent=True`` a composite of a
  translational and a spherical joint (``Free3D``) is one free core joint (rates: the body twist, angular
  first).

A joint's expansion gives, in its own (child) frame, the twist of every core DOF ``Sv`` (6, m) and the map
jets ``A`` (m, n), ``dA[c, a, b] = dA[c, a]/dq_b``, ``d2A[c, a, b, e]``, ``d3A[c, a, b, e, f]``, so that
``S = Sv A`` (Sueda notes Eq. 2.41 for composites; ``[S_k] = Q^-1 dQ/dq_k``).  The twist of core DOF c moves
with the core joints after its own: with ``P`` their product and ``W_b`` the body twist of ``P`` along
``q_b`` (``W_b = sum_{l after c} Sv[:, l] A[l, b]``), ``dSv[:, c]/dq_b = Sv[:, c] x W_b``.

**Interface for the integrators.**  :func:`joint_derivatives` returns, for one joint and in its
own frame, ``dS[:, a, k] = dS[:, a]/dq_k`` (6, n, n), ``dSdot[:, a, k] = dSdot[:, a]/dq_k`` (6, n, n) with
``Sdot = sum_k dS[:, :, k] qd_k``, and ``dQ[:, :, k] = dQ/dq_k = Q [S_k]`` (4, 4, n).  All kernels are
scalar-generic (complex q works: complex step).
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax.joints.core_expansion import core_count, core_groups, joint_expansion
from redmax.joints.dispatch import joint_calc

__all__ = ["derivatives", "joint_derivatives"]


# ---------------------------------------------------------------------------------------------------------
# layout
# ---------------------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------------------
# scalar jets
# ---------------------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------------------
# expansions
# ---------------------------------------------------------------------------------------------------------


@njit(cache=True)
def _cross6(x, y, out):
    """out = x x y (spatial cross product of twists, ad(x) y)."""
    out[0] = x[1] * y[2] - x[2] * y[1]
    out[1] = x[2] * y[0] - x[0] * y[2]
    out[2] = x[0] * y[1] - x[1] * y[0]
    out[3] = x[1] * y[5] - x[2] * y[4] + x[4] * y[2] - x[5] * y[1]
    out[4] = x[2] * y[3] - x[0] * y[5] + x[5] * y[0] - x[3] * y[2]
    out[5] = x[0] * y[4] - x[1] * y[3] + x[3] * y[1] - x[4] * y[0]


@njit(cache=True)
def joint_derivatives(code, p, q, qd, js, Q, S, Sdot, dS, dSdot, dQ):
    """Q (4, 4), S (6, n), Sdot (6, n), ``dS[:, a, k] = dS[:, a]/dq_k`` (6, n, n), ``dSdot[:, a, k] =
    dSdot[:, a]/dq_k`` (6, n, n) and ``dQ[:, :, k] = dQ/dq_k`` (4, 4, n) of one joint, in its own frame.

    From the core expansion (module docstring): with ``W[:, c, b] = sum_{l after c} Sv[:, l] A[l, b]``,
    ``dSv[:, c, b] = Sv[:, c] x W[:, c, b]`` and
    ``d2Sv[:, c, b, e] = dSv[:, c, e] x W[:, c, b] + Sv[:, c] x dW[:, c, b, e]``;
    ``dS = dSv A + Sv dA``, ``d2S`` by the product rule, ``Sdot = dS qd`` and ``dSdot = d2S qd``.
    Outputs need not be zero on entry.
    """
    dt = q.dtype
    n = q.shape[0]
    for r in range(4):
        for c in range(4):
            Q[r, c] = 0.0
    St = np.zeros((6, n), dtype=dt)
    Sd = np.zeros((6, n), dtype=dt)
    joint_calc(code, p, q, qd, js, Q, St, Sd)
    m = core_count(code, p, js, False)
    grp = np.zeros(max(m, 1), dtype=np.int64)
    core_groups(code, p, js, False, grp)
    Sv = np.zeros((6, m), dtype=dt)
    A = np.zeros((m, n), dtype=dt)
    dA = np.zeros((m, n, n), dtype=dt)
    d2A = np.zeros((m, n, n, n), dtype=dt)
    d3A = np.zeros((0, 0, 0, 0, 0), dtype=dt)
    joint_expansion(code, p, q, js, False, 2, Sv, A, dA, d2A, d3A)
    W = np.zeros((6, m, n), dtype=dt)
    for c in range(m):
        for l in range(m):
            if grp[l] > grp[c]:
                for b in range(n):
                    for r in range(6):
                        W[r, c, b] += Sv[r, l] * A[l, b]
    dSv = np.zeros((6, m, n), dtype=dt)
    tmp = np.zeros(6, dtype=dt)
    for c in range(m):
        for b in range(n):
            _cross6(Sv[:, c], W[:, c, b], tmp)
            dSv[:, c, b] = tmp
    dW = np.zeros((6, m, n, n), dtype=dt)
    for c in range(m):
        for l in range(m):
            if grp[l] > grp[c]:
                for b in range(n):
                    for e in range(n):
                        for r in range(6):
                            dW[r, c, b, e] += dSv[r, l, e] * A[l, b] + Sv[r, l] * dA[l, b, e]
    d2Sv = np.zeros((6, m, n, n), dtype=dt)
    t2 = np.zeros(6, dtype=dt)
    for c in range(m):
        for b in range(n):
            for e in range(n):
                _cross6(dSv[:, c, e], W[:, c, b], tmp)
                _cross6(Sv[:, c], dW[:, c, b, e], t2)
                for r in range(6):
                    d2Sv[r, c, b, e] = tmp[r] + t2[r]
    zero = np.zeros(1, dtype=dt)[0]
    for r in range(6):
        for a in range(n):
            s = zero
            for c in range(m):
                s += Sv[r, c] * A[c, a]
            S[r, a] = s
            for b in range(n):
                v = 0.0 * s
                for c in range(m):
                    v += dSv[r, c, b] * A[c, a] + Sv[r, c] * dA[c, a, b]
                dS[r, a, b] = v
    for r in range(6):
        for a in range(n):
            sd = 0.0 * S[r, a]
            for b in range(n):
                sd += dS[r, a, b] * qd[b]
            Sdot[r, a] = sd
            for e in range(n):
                v = 0.0 * sd
                for b in range(n):
                    d2 = 0.0 * sd
                    for c in range(m):
                        d2 += (d2Sv[r, c, b, e] * A[c, a] + dSv[r, c, b] * dA[c, a, e] + dSv[r, c, e] * dA[c, a, b]
                               + Sv[r, c] * d2A[c, a, b, e])
                    v += d2 * qd[b]
                dSdot[r, a, e] = v
    for k in range(n):
        Sh = np.zeros((4, 4), dtype=dt)
        Sh[0, 1] = -S[2, k]
        Sh[0, 2] = S[1, k]
        Sh[1, 0] = S[2, k]
        Sh[1, 2] = -S[0, k]
        Sh[2, 0] = -S[1, k]
        Sh[2, 1] = S[0, k]
        Sh[0, 3] = S[3, k]
        Sh[1, 3] = S[4, k]
        Sh[2, 3] = S[5, k]
        dQk = Q @ Sh
        for r in range(4):
            for c in range(4):
                dQ[r, c, k] = dQk[r, c]


def derivatives(model, i: int, q, qd, jstate=None):
    """Joint ``i`` of ``model`` at its coordinates ``q`` and rates ``qd`` (each (n_i,)): returns a dict with
    ``Q`` (4, 4), ``S``, ``Sdot`` (6, n_i), ``dS``, ``dSdot`` (6, n_i, n_i; ``[:, a, k] = d/dq_k`` of column a)
    and ``dQ`` (4, 4, n_i; ``[:, :, k] = dQ/dq_k``), all in the joint's own frame (see :func:`joint_derivatives`).
    Complex inputs are kept complex."""
    q = np.asarray(q)
    qd = np.asarray(qd)
    dt = np.result_type(q, qd, np.float64)
    q = np.array(q, dtype=dt)
    qd = np.array(qd, dtype=dt)
    n = int(model.idx[i + 1] - model.idx[i])
    if q.shape != (n,) or qd.shape != (n,):
        from redmax.errors import ModelError

        raise ModelError(f"{model.name}: joint '{model.joint_names[i]}' has {n} coordinates; got q of shape "
                         f"{q.shape} and qd of shape {qd.shape}")
    js = int(model.jstate0[i] if jstate is None else jstate[i])
    p = model.jparam[model.jp_off[i]:model.jp_off[i + 1]]
    out = {"Q": np.zeros((4, 4), dt), "S": np.zeros((6, n), dt), "Sdot": np.zeros((6, n), dt),
           "dS": np.zeros((6, n, n), dt), "dSdot": np.zeros((6, n, n), dt), "dQ": np.zeros((4, 4, n), dt)}
    joint_derivatives(int(model.jtype[i]), p, q, qd, js, out["Q"], out["S"], out["Sdot"], out["dS"], out["dSdot"],
                      out["dQ"])
    return out
