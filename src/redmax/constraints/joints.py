"""Joints as velocity-level equality constraints between free rigid bodies (Sueda notes §1.10, §1.12).

For joint i between parent body p (or the world) and body i, frame A sits on the parent at the joint's
rest placement and frame B on the child at the joint frame:

    E_wA = E_wb[p] E_jb[p]^-1 E_pj0[i],   E_wB = E_wb[i] E_jb[i]^-1,   E_AB = E_wA^-1 E_wB = Q(q) ideally.

The relative twist of B with respect to A, in B, is ``V_rel = Ad(E_jb[i]) phi_i - Ad(E_AB^-1) Ad(Y^-1) phi_p``
with ``Y = E_jb[p]^-1 E_pj0[i]`` (notes Eq. 1.84).  The joint allows ``V_rel`` in the span of S; the
constraint keeps the rows ``P`` orthogonal to it: ``P V_rel = 0`` ("dropping rows of the adjoint").

Baumgarte stabilisation (notes Eq. 1.97, velocity level): ``P V_rel = -gamma g`` with the position error
``g = P log(Q(q*)^-1 E_AB)``, where q* projects E_AB onto the joint (the joint angle, slide, rotation...),
so the logarithm is taken of a transform close to the identity and ``dg/dt = P V_rel`` to first order.

Supported joints: fixed, revolute, prismatic, planar, translational, spherical (any parameterisation),
and free joints (no constraint).
"""

from __future__ import annotations

import numpy as np

from redmax.errors import ModelError
from redmax.spatial import Ad, inv_se3, log_se3, skew

MAXIMAL_JOINT_KINDS = ("fixed", "revolute", "prismatic", "planar", "translational", "spherical_exp",
                       "spherical_euler", "free3d")


def _complement(S: np.ndarray) -> np.ndarray:
    """Orthonormal rows spanning the orthogonal complement of the columns of S (6, n)."""
    if S.shape[1] == 0:
        return np.eye(6)
    U, s, _ = np.linalg.svd(S, full_matrices=True)
    r = int(np.sum(s > 1e-12))
    return U[:, r:].T.copy()


def _joint_basis(joint, p) -> tuple[np.ndarray, str]:
    """Constant allowed-twist basis S (6, n) of a supported joint and its kind (``Joint.maximal_basis``)."""
    try:
        return joint.maximal_basis(p)
    except ModelError as e:
        raise ModelError(f"{e}; supported: {', '.join(MAXIMAL_JOINT_KINDS)}") from None


def _projected(kind: str, S: np.ndarray, E: np.ndarray) -> np.ndarray:
    """Q(q*): the closest transform the joint can produce to E (4, 4) = E_AB."""
    R, t = E[:3, :3], E[:3, 3]
    Q = np.eye(4)
    if kind == "revolute":
        a = S[:3, 0]
        s = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
        th = np.arctan2(a @ s, 0.5 * (np.trace(R) - a @ R @ a))  # sin and cos of the in-plane rotation
        W = skew(a)
        Q[:3, :3] = np.eye(3) + np.sin(th) * W + (1.0 - np.cos(th)) * (W @ W)
    elif kind in ("prismatic", "planar", "translational"):
        B = S[3:, :]
        x, *_ = np.linalg.lstsq(B, t, rcond=None)
        Q[:3, 3] = B @ x
    elif kind == "spherical":
        Q[:3, :3] = R
    elif kind == "free3d":
        Q = E.copy()
    return Q


def joint_constraints(model, E_wb: np.ndarray):
    """Constraint rows G (m, 6nb) and position errors g (m,) of all joints at body poses E_wb (nb, 4, 4).

    Returns:
        (G, g, rows): ``rows[i]`` is the slice of rows of joint i.
    """
    blocks, errs, rows = [], [], []
    nb = model.nb
    start = 0
    for i in range(nb):
        p = model.parent[i]
        S, kind = _joint_basis(model.joints[i], model.jparam[model.jp_off[i] : model.jp_off[i + 1]])
        P = _complement(S)
        m = P.shape[0]
        rows.append(slice(start, start + m))
        start += m
        if m == 0:
            continue
        Y = model.E_pj0[i] if p < 0 else inv_se3(model.E_jb[p]) @ model.E_pj0[i]
        E_wA = model.E_pj0[i] if p < 0 else E_wb[p] @ Y
        E_wB = E_wb[i] @ inv_se3(model.E_jb[i])
        E_AB = inv_se3(E_wA) @ E_wB
        Gi = np.zeros((m, 6 * nb))
        Gi[:, 6 * i : 6 * i + 6] = P @ Ad(model.E_jb[i])
        if p >= 0:
            Gi[:, 6 * p : 6 * p + 6] = -P @ Ad(inv_se3(E_AB)) @ Ad(inv_se3(Y))
        err = log_se3(np.ascontiguousarray(inv_se3(_projected(kind, S, E_AB)) @ E_AB))
        blocks.append(Gi)
        errs.append(P @ err)
    if not blocks:
        return np.zeros((0, 6 * nb)), np.zeros(0), rows
    return np.vstack(blocks), np.concatenate(errs), rows
