"""Forward kinematics, body twists, the RedMax Jacobian J and Jdot, and O(n) Jacobian products.

Recursions (RedMax supplemental §3, Sueda notes §2.1-2.2, §2.10), forward over ``i = 0..nb-1`` with
``parent[i] < i``:

* joint frame ``E_pj = E_pj0 Q(q)``, ``E_wj = E_wj(parent) E_pj``, body ``E_wb = E_wj E_jb``;
* joint twist ``V_i = Ad(E_pj^-1) V_p + S_i qd_i`` (joint frame), body twist ``phi_i = Ad_bj V_i``
  (supplemental Eq. 17);
* J rows of body i: diagonal block ``Ad_bj S_i``; ancestor blocks ``Ad_ip J(p, a)``;
  Jdot: ``Ad_bj Sdot_i`` and ``Addot_ip J(p, a) + Ad_ip Jdot(p, a)`` (notes Alg. 2, Eq. 2.17), with
  ``Ad_ip = Ad(E_wb_i^-1 E_wb_p)`` and ``Addot_ip = Ad_ip ad(phi_p) - ad(phi_i) Ad_ip`` (notes Eq. 2.18
  simplified with Eq. 1.19);
* products ``y = J x``, ``z = Jdot x`` (notes Alg. 5) and ``x = J^T y`` (notes Alg. 6) in O(n).

Maximal vectors are stored as (nb, 6) arrays (row i = body i's twist or wrench, body frame, angular
first); flattened row-major they are the 6nb maximal vectors of the notes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from redmax._jit import njit
from redmax._validate import check_model
from redmax.configuration import charts_for, check_foreign
from redmax.errors import ModelError
from redmax.joints.dispatch import joint_calc_gated
from redmax.joints.simple import PRISMATIC, calc_simple
from redmax.spatial import Ad, ad, compose, inv_se3

__all__ = [
    "JT_product",
    "J_product",
    "Jdot_product",
    "Kinematics",
    "body_twists",
    "forward_kinematics",
    "jacobian",
    "kinematics",
]


@njit(cache=True)
def joint_pass(jtype, idx, jp_off, jparam, E_pj0, q, qd, jstate):
    """Evaluate every joint: ``E_pj = E_pj0 Q(q)`` (nb,4,4), S (6,ndof) and Sdot (6,ndof), dtype of q.

    Shared by forward kinematics and the recursive dynamics algorithms.
    """
    nb = jtype.shape[0]
    n = q.shape[0]
    dt = q.dtype
    E_pj = np.zeros((nb, 4, 4), dtype=dt)
    S = np.zeros((6, n), dtype=dt)
    Sdot = np.zeros((6, n), dtype=dt)
    for i in range(nb):
        a = idx[i]
        b = idx[i + 1]
        Qi = np.zeros((4, 4), dtype=dt)
        Si = np.zeros((6, b - a), dtype=dt)
        Sdi = np.zeros((6, b - a), dtype=dt)
        if jtype[i] <= PRISMATIC:  # fixed, revolute, prismatic; the others only where jtype's type says so
            calc_simple(jtype[i], jparam[jp_off[i] : jp_off[i + 1]], q[a:b], qd[a:b], jstate[i], Qi, Si, Sdi)
        else:
            joint_calc_gated(jtype, jtype[i], jparam[jp_off[i] : jp_off[i + 1]], q[a:b], qd[a:b], jstate[i], Qi, Si,
                             Sdi)
        S[:, a:b] = Si
        Sdot[:, a:b] = Sdi
        E_pj[i] = compose(E_pj0[i].astype(dt), Qi)
    return E_pj, S, Sdot


@njit(cache=True)
def fk_kernel(parent, jtype, idx, jp_off, jparam, E_pj0, E_jb, Ad_bj, q, qd, jstate):
    """Forward pass: joint transforms, frames, twists and joint Jacobians.

    Returns:
        E_pj (nb,4,4), E_wj (nb,4,4), E_wb (nb,4,4), V (nb,6) joint twists in joint frames,
        phi (nb,6) body twists in body frames, S (6,ndof), Sdot (6,ndof).  dtype of q.
    """
    nb = parent.shape[0]
    dt = q.dtype
    E_pj, S, Sdot = joint_pass(jtype, idx, jp_off, jparam, E_pj0, q, qd, jstate)
    E_wj = np.zeros((nb, 4, 4), dtype=dt)
    E_wb = np.zeros((nb, 4, 4), dtype=dt)
    V = np.zeros((nb, 6), dtype=dt)
    phi = np.zeros((nb, 6), dtype=dt)
    for i in range(nb):
        a = idx[i]
        b = idx[i + 1]
        p = parent[i]
        Vi = np.ascontiguousarray(S[:, a:b]) @ qd[a:b]
        if p >= 0:
            E_wj[i] = compose(E_wj[p], E_pj[i])
            Vi = Vi + Ad(inv_se3(E_pj[i])) @ V[p]
        else:
            E_wj[i] = E_pj[i]
        E_wb[i] = compose(E_wj[i], E_jb[i].astype(dt))
        V[i] = Vi
        phi[i] = Ad_bj[i].astype(dt) @ Vi
    return E_pj, E_wj, E_wb, V, phi, S, Sdot


@njit(cache=True)
def _Ad_ip(E_wb, i, p):
    return Ad(compose(inv_se3(E_wb[i]), E_wb[p]))


@njit(cache=True)
def jacobian_kernel(parent, idx, Ad_bj, E_wb, phi, S, Sdot):
    """Dense J and Jdot (6nb, ndof) by notes Algorithm 2 (O(n^2) fill)."""
    nb = parent.shape[0]
    n = S.shape[1]
    dt = S.dtype
    J = np.zeros((6 * nb, n), dtype=dt)
    Jd = np.zeros((6 * nb, n), dtype=dt)
    for i in range(nb):
        a = idx[i]
        b = idx[i + 1]
        A = Ad_bj[i].astype(dt)
        J[6 * i : 6 * i + 6, a:b] = A @ np.ascontiguousarray(S[:, a:b])
        Jd[6 * i : 6 * i + 6, a:b] = A @ np.ascontiguousarray(Sdot[:, a:b])
        p = parent[i]
        if p >= 0 and a > 0:
            Aip = _Ad_ip(E_wb, i, p)
            Adot = Aip @ ad(phi[p]) - ad(phi[i]) @ Aip
            Jp = np.ascontiguousarray(J[6 * p : 6 * p + 6, 0:a])
            Jdp = np.ascontiguousarray(Jd[6 * p : 6 * p + 6, 0:a])
            J[6 * i : 6 * i + 6, 0:a] = Aip @ Jp
            Jd[6 * i : 6 * i + 6, 0:a] = Adot @ Jp + Aip @ Jdp
    return J, Jd


@njit(cache=True)
def J_product_kernel(parent, idx, Ad_bj, E_wb, phi, S, Sdot, x):
    """y = J x and z = Jdot x as (nb, 6) arrays in O(n) (notes Algorithm 5)."""
    nb = parent.shape[0]
    dt = S.dtype
    y = np.zeros((nb, 6), dtype=dt)
    z = np.zeros((nb, 6), dtype=dt)
    for i in range(nb):
        a = idx[i]
        b = idx[i + 1]
        A = Ad_bj[i].astype(dt)
        xi = np.ascontiguousarray(x[a:b])
        y[i] = A @ (np.ascontiguousarray(S[:, a:b]) @ xi)
        z[i] = A @ (np.ascontiguousarray(Sdot[:, a:b]) @ xi)
        p = parent[i]
        if p >= 0:
            Aip = _Ad_ip(E_wb, i, p)
            Adot = Aip @ ad(phi[p]) - ad(phi[i]) @ Aip
            y[i] += Aip @ y[p]
            z[i] += Aip @ z[p] + Adot @ y[p]
    return y, z


@njit(cache=True)
def JT_product_kernel(parent, idx, Ad_bj, E_wb, S, y):
    """x = J^T y (ndof,) for maximal y (nb, 6) in O(n) (notes Algorithm 6)."""
    nb = parent.shape[0]
    n = S.shape[1]
    dt = S.dtype
    acc = np.zeros((nb, 6), dtype=dt)
    for i in range(nb):
        acc[i] = y[i]
    x = np.zeros(n, dtype=dt)
    for i in range(nb - 1, -1, -1):
        a = idx[i]
        b = idx[i + 1]
        yi = acc[i]
        p = parent[i]
        if p >= 0:
            acc[p] += _Ad_ip(E_wb, i, p).T @ yi
        x[a:b] = np.ascontiguousarray(S[:, a:b]).T @ (Ad_bj[i].astype(dt).T @ yi)
    return x


# -------------------------------------------------------------------------------------------------
# Python API
# -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kinematics:
    """Kinematic quantities of one state (all in the dtype of q).

    Attributes:
        q, qd: (ndof,) coordinates and rates.  jstate: (nb,) chart words.
        E_pj: (nb,4,4) joint frames in their parent joint frames.  E_wj, E_wb: (nb,4,4) joint and
        body frames in the world.  V: (nb,6) joint twists (joint frames).  phi: (nb,6) body twists
        (body frames).  S, Sdot: (6, ndof) joint Jacobians and their time derivatives, column k
        belonging to the joint that owns DOF k.
    """

    q: np.ndarray
    qd: np.ndarray
    jstate: np.ndarray
    E_pj: np.ndarray
    E_wj: np.ndarray
    E_wb: np.ndarray
    V: np.ndarray
    phi: np.ndarray
    S: np.ndarray
    Sdot: np.ndarray

    @property
    def V_w(self) -> np.ndarray:
        """World twists of the bodies (nb, 6), at the world origin in world axes: ``Ad(E_wj) V``."""
        return np.array([Ad(self.E_wj[i]) @ self.V[i] for i in range(self.V.shape[0])]).reshape(-1, 6)


def _numbers(model, v, name: str) -> np.ndarray:
    """``v`` as an array of float64 or complex128 (long doubles and integers converted); a ModelError for
    booleans, text, objects or None."""
    try:
        a = np.asarray(v)
    except (TypeError, ValueError):
        raise ModelError(f"{model.name}: {name} must be an array of numbers, got {type(v).__name__}") from None
    if a.dtype.kind in "iuf":
        return a.astype(np.float64, copy=False)
    if a.dtype.kind == "c":
        return a.astype(np.complex128, copy=False)
    raise ModelError(f"{model.name}: {name} must hold numbers (float or complex), got "
                     f"{'None' if v is None else f'dtype {a.dtype}'}")


def _prepare(model, q, qd=None, jstate=None):
    q = _numbers(model, q, "q")
    qd = None if qd is None else _numbers(model, qd, "qd")
    dt = np.result_type(q, np.float64) if qd is None else np.result_type(q, qd, np.float64)
    q = np.array(q, dtype=dt)  # copies: writeable C arrays, one compiled type of fk_kernel (not one per read-only flag)
    qd = np.zeros_like(q) if qd is None else np.array(qd, dtype=dt)
    model.check_state(q, qd)
    return q, qd, charts_for(model, jstate)


def kinematics(model, q, qd=None, jstate=None) -> Kinematics:
    """Evaluate all kinematic quantities at (q, qd); qd defaults to zero, charts to the model's initial.

    Args:
        model: a compiled :class:`redmax.Model`.
        q, qd: (ndof,) real or complex (complex step) arrays.
        jstate: (nb,) chart words; required for models with Euler-angle joints (the initial charts
            otherwise).
    """
    check_model(model, "kinematics")
    if model.uncoupled is not None:  # hyper-reduced coordinates: evaluate at the joint coordinates T q + q_offset
        return kinematics(model.uncoupled, *_joint_coordinates(model, q, qd), jstate)
    q, qd, js = _prepare(model, q, qd, jstate)
    out = fk_kernel(*model.kernel_args(), q, qd, js)
    return Kinematics(q, qd, js, *out)


def _joint_coordinates(model, q, qd):
    """(q, qd) of a coupled model as joint coordinates: DOF vectors (ndof,) are mapped through ``model.dofs``,
    joint-coordinate vectors (ncoord,) pass."""
    d = model.dofs
    q = _numbers(model, q, "q")
    if q.shape != (d.ncoord,):
        model.check_state(q, qd)
        q = d.expand(q)
        qd = None if qd is None else d.expand_rate(qd)
    return q, qd


def forward_kinematics(model, q, jstate=None):
    """World frames of joints and bodies: returns ``(E_wj, E_wb)``, each (nb, 4, 4).

    ``jstate``: the chart words that go with q (Euler-angle joints); a chart other than a joint's own is accepted
    only where q is regular in it (:func:`redmax.configuration.check_foreign`)."""
    k = kinematics(check_model(model, "forward_kinematics"), q, None, jstate)
    if jstate is not None:
        check_foreign(model if model.uncoupled is None else model.uncoupled, k.jstate, k.q)
    return k.E_wj, k.E_wb


def body_twists(model, q, qd, jstate=None) -> np.ndarray:
    """Body twists ``phi`` (nb, 6), each in its body frame, angular first."""
    return kinematics(model, q, qd, jstate).phi


def jacobian(model, q, qd=None, jstate=None, kin: Kinematics | None = None):
    """Dense RedMax Jacobian J and its time derivative Jdot, each (6 nb, ndof) (notes Alg. 2); ``J T`` on a
    hyper-reduced model.

    ``J qd`` stacks the body twists; ``Jdot`` is the derivative along the motion with rates qd.
    """
    k = kinematics(model, q, qd, jstate) if kin is None else kin
    J, Jd = jacobian_kernel(model.parent, model.idx, model.Ad_bj, k.E_wb, k.phi, k.S, k.Sdot)
    if model.uncoupled is not None:  # J_mR = J_mr T (paper Eq. 9; T constant)
        T = model.dofs.T
        return J @ T, Jd @ T
    return J, Jd


def J_product(kin: Kinematics, model, x) -> np.ndarray:
    """``J x`` as (nb, 6) body twists, O(n) (notes Alg. 5)."""
    x = np.ascontiguousarray(x, dtype=kin.S.dtype)
    return J_product_kernel(model.parent, model.idx, model.Ad_bj, kin.E_wb, kin.phi, kin.S, kin.Sdot, x)[0]


def Jdot_product(kin: Kinematics, model, x) -> np.ndarray:
    """``Jdot x`` as (nb, 6), O(n) (notes Alg. 5); Jdot is taken along the rates ``kin.qd``."""
    x = np.ascontiguousarray(x, dtype=kin.S.dtype)
    return J_product_kernel(model.parent, model.idx, model.Ad_bj, kin.E_wb, kin.phi, kin.S, kin.Sdot, x)[1]


def JT_product(kin: Kinematics, model, y) -> np.ndarray:
    """``J^T y`` (ndof,) for maximal wrenches y (nb, 6) or (6 nb,), O(n) (notes Alg. 6)."""
    y = np.ascontiguousarray(np.reshape(y, (model.nb, 6)), dtype=kin.S.dtype)
    return JT_product_kernel(model.parent, model.idx, model.Ad_bj, kin.E_wb, kin.S, y)
