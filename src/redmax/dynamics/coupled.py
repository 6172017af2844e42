"""The dynamics algorithms on hyper-reduced models (``ModelBuilder.couple``; RedMax paper Eqs. 8-10).

With joint coordinates ``q_j = T q + q_offset`` (``model.dofs``), T constant: ``qd_j = T qd``, ``qdd_j = T qdd``
(no ``Tdot`` term), generalized forces ``tau = T^T tau_j``, ``M_R = T^T M T`` and the bias ``c_R = T^T c``.  Each
function maps its arguments to the joint coordinates of ``model.coordinate_model``, runs the tree algorithm
there and maps back.  The coupled forward dynamics solve ``M_R qdd = tau - c_R`` densely (a coupling across
branches has no O(n) recursion); inverse dynamics, CRBA and the bias stay recursive.
"""

from __future__ import annotations

import numpy as np

from redmax.errors import ModelError

__all__ = ["aba", "bind", "crba", "hybrid_dynamics", "minv", "minv_product", "rnea"]

_TREE: dict = {}  # the tree algorithms of redmax.dynamics (bound at its import; no import cycle)


def bind(**functions) -> None:
    """Register the tree algorithms (``rnea``, ``crba``) this module maps through."""
    _TREE.update(functions)


def _vec(model, v, name):
    a = np.asarray(v)
    if a.shape != (model.ndof,):
        raise ModelError(f"{model.name}: {name} must have shape ({model.ndof},) (the model's DOFs), got {a.shape}")
    return a


def _q(model, q):
    """Joint coordinates of q given as DOFs (ndof,) or already as joint coordinates (ncoord,)."""
    a = np.asarray(q)
    if a.shape == (model.ncoord,):
        return a
    return model.dofs.expand(_vec(model, a, "q"))


def rnea(model, q, qd, qdd, f_ext=None, jstate=None, gravity: bool = True) -> np.ndarray:
    d = model.dofs
    full = model.coordinate_model
    tau = _TREE["rnea"](full, _q(model, q), d.expand_rate(_vec(model, qd, "qd")),
                        d.expand_rate(_vec(model, qdd, "qdd")), f_ext=f_ext, jstate=jstate, gravity=gravity)
    return d.reduce(tau)


def crba(model, q, jstate=None) -> np.ndarray:
    T = model.dofs.T
    M = _TREE["crba"](model.coordinate_model, _q(model, q), jstate=jstate)
    return T.T @ M @ T


def _bias(model, q, qd, f_ext, jstate, gravity):
    d = model.dofs
    qj = _q(model, q)
    qdj = d.expand_rate(_vec(model, qd, "qd"))
    c = _TREE["rnea"](model.coordinate_model, qj, qdj, np.zeros_like(qdj), f_ext=f_ext, jstate=jstate, gravity=gravity)
    return d.reduce(c)


def aba(model, q, qd, tau, f_ext=None, jstate=None, gravity: bool = True) -> np.ndarray:
    tau = _vec(model, tau, "tau")
    M = crba(model, q, jstate)
    return np.linalg.solve(M, tau - _bias(model, q, qd, f_ext, jstate, gravity))


def minv(model, q, jstate=None) -> np.ndarray:
    return np.linalg.inv(crba(model, q, jstate))


def minv_product(model, q, X, jstate=None, Pr=None, Pm=None) -> np.ndarray:
    """``(M_R + diag(Pr) + T^T J^T blkdiag(Pm) J T) Y = X`` (Pr per DOF, Pm (nb, 6, 6) in body frames)."""
    from redmax.kinematics import jacobian

    M = crba(model, q, jstate)
    if Pr is not None:
        M = M + np.diag(_vec(model, Pr, "Pr").astype(float))
    if Pm is not None:
        Pm = np.asarray(Pm, dtype=float)
        if Pm.shape != (model.nb, 6, 6):
            raise ModelError(f"{model.name}: Pm must be a ({model.nb}, 6, 6) array, got shape {Pm.shape}")
        J, _ = jacobian(model.coordinate_model, _q(model, q), None, jstate)
        JT = J @ model.dofs.T
        B = np.zeros((6 * model.nb, 6 * model.nb))
        for i in range(model.nb):
            B[6 * i:6 * i + 6, 6 * i:6 * i + 6] = Pm[i]
        M = M + JT.T @ B @ JT
    X = np.asarray(X)
    if X.ndim not in (1, 2) or X.shape[0] != model.ndof:
        raise ModelError(f"{model.name}: X must have shape ({model.ndof},) or ({model.ndof}, k), got {X.shape}")
    return np.linalg.solve(M, X)


def hybrid_dynamics(model, q, qd, tau, qdd, prescribed, f_ext=None, jstate=None, gravity: bool = True):
    """Hybrid dynamics on the DOFs: a DOF is prescribed when the joint that owns it is (``prescribed`` (nb,))."""
    tau = np.array(_vec(model, tau, "tau"), dtype=float)
    qdd = np.array(_vec(model, qdd, "qdd"), dtype=float)
    pres = np.asarray(prescribed, dtype=bool)
    if pres.shape != (model.nb,):
        raise ModelError(f"{model.name}: prescribed must have shape ({model.nb},), got {pres.shape}")
    p = pres[model.dofs.dof_joint]
    f = ~p
    M = crba(model, q, jstate)
    c = _bias(model, q, qd, f_ext, jstate, gravity)
    if f.any():
        rhs = tau[f] - c[f] - M[np.ix_(f, p)] @ qdd[p]
        qdd[f] = np.linalg.solve(M[np.ix_(f, f)], rhs)
    tau[p] = M[p] @ qdd + c[p]
    return qdd, tau
