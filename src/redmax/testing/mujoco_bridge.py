"""Compare a redmax Model loaded from MJCF with MuJoCo's own dynamics of the same compiled ``mjModel``.

Only needed by tests and benchmarks (MuJoCo is an optional extra).  State conversion: hinge and slide
coordinates and rates are MuJoCo's ``qpos``/``qvel``; a ball joint's rotation vector ``r`` becomes the quaternion
of ``exp(r)`` and its rate ``rdot`` the angular velocity ``w = J_r(r) rdot``; a free joint's rates are (world
linear velocity, ``rdot``), MuJoCo's (world linear velocity, ``w``).  So ``qvel = T qd``, ``qacc = T qdd + Tdot qd``
with T the identity except 3x3 blocks ``J_r(r)``, and ``M_ours = T^T M_mj T``, ``tau_ours = T^T tau_mj``.
"""

from __future__ import annotations

import numpy as np

from redmax.spatial import exp_so3, right_jacobian_so3

__all__ = ["compare_with_mujoco", "mujoco_maps", "qpos_from_q"]


def _quat_wxyz(R: np.ndarray) -> np.ndarray:
    import mujoco

    qt = np.zeros(4)
    mujoco.mju_mat2Quat(qt, np.ascontiguousarray(R).reshape(-1))
    return qt


def qpos_from_q(model, m, q) -> np.ndarray:
    """MuJoCo's qpos (nq,) of our coordinates q (ndof,) (our DOFs follow MuJoCo's order)."""
    qpos = np.zeros(m.nq)
    d = 0
    for j in range(m.njnt):
        t, qa = int(m.jnt_type[j]), int(m.jnt_qposadr[j])
        if t == 0:
            qpos[qa : qa + 3] = q[d : d + 3]
            qpos[qa + 3 : qa + 7] = _quat_wxyz(exp_so3(q[d + 3 : d + 6]))
            d += 6
        elif t == 1:
            qpos[qa : qa + 4] = _quat_wxyz(exp_so3(q[d : d + 3]))
            d += 3
        else:
            qpos[qa] = q[d]
            d += 1
    return qpos


def mujoco_maps(m, q, qd):
    """(T, Tdot) (nv, nv): ``qvel = T qd`` and ``qacc = T qdd + Tdot qd``."""
    from redmax.joints.spherical_exp import sph_exp_S

    nv = m.nv
    T = np.eye(nv)
    Td = np.zeros((nv, nv))
    for j in range(m.njnt):
        t, da = int(m.jnt_type[j]), int(m.jnt_dofadr[j])
        if t in (0, 1):
            a = da + 3 if t == 0 else da
            r = q[a : a + 3]
            St, Sd = np.zeros((3, 3)), np.zeros((3, 3))
            sph_exp_S(np.asarray(r, dtype=float), np.asarray(qd[a : a + 3], dtype=float), St, Sd)
            T[a : a + 3, a : a + 3] = right_jacobian_so3(r)
            Td[a : a + 3, a : a + 3] = Sd
    return T, Td


def compare_with_mujoco(model, m, rng, states: int = 3) -> dict:
    """Largest relative differences, over ``states`` random states, of the mass matrix (``mj_fullM``), the bias
    forces (``qfrc_bias``: gravity, Coriolis and centrifugal) and the accelerations with contacts, constraints and
    actuators off (``mj_forward``'s qacc, fluid forces zeroed; ours without the model's constraint rows), each
    relative to MuJoCo's largest entry."""
    import mujoco

    import redmax as rm
    from redmax.dynamics.redmax import applied_terms
    from redmax.integrators import accelerations
    from redmax.kinematics import kinematics

    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT) | int(mujoco.mjtDisableBit.mjDSBL_ACTUATION)
    m.opt.density = 0.0
    m.opt.viscosity = 0.0
    d = mujoco.MjData(m)
    worst = {"M": 0.0, "bias": 0.0, "qacc": 0.0}
    for _ in range(states):
        q = model.q0 + rng.uniform(-1.0, 1.0, model.ndof)
        for i, jt in enumerate(model.joints):
            if jt.kind in ("free3d", "spherical_exp"):
                a = model.idx[i + 1] - 3
                q[a : a + 3] = rng.normal(size=3) * 0.5
        qd = rng.normal(size=model.ndof)
        T, Td = mujoco_maps(m, q, qd)
        d.qpos[:] = qpos_from_q(model, m, q)
        d.qvel[:] = T @ qd
        d.qfrc_applied[:] = 0.0
        mujoco.mj_forward(m, d)
        Mmj = np.zeros((m.nv, m.nv))
        _full_m(mujoco, m, d, Mmj)
        worst["M"] = max(worst["M"], _rel(rm.crba(model, q), T.T @ Mmj @ T))
        bias = T.T @ (d.qfrc_bias + Mmj @ (Td @ qd))  # our rnea at qdd = 0 (a_mj = Tdot qd)
        worst["bias"] = max(worst["bias"], _rel(rm.rnea(model, q, qd, np.zeros(model.ndof)), bias))
        if model.constraints:  # MuJoCo's constraints are off: compare the unconstrained dynamics
            kin = kinematics(model, q, qd, model.jstate0)
            terms = applied_terms(model, kin, 0.0)
            qdd = rm.aba(model, q, qd, terms.fr, f_ext=terms.fm_body(kin), jstate=kin.jstate)
        else:
            qdd = accelerations(model, q, qd, 0.0, model.jstate0, method="recursive")  # joint springs and dampers
        worst["qacc"] = max(worst["qacc"], _rel(T @ qdd + Td @ qd, d.qacc))
    return worst


def _full_m(mujoco, m, d, out) -> None:
    """``mj_fullM`` across MuJoCo versions: ``(m, d, dst)`` from 3.3 on, ``(m, dst, d.qM)`` before."""
    try:
        mujoco.mj_fullM(m, d, out)
    except TypeError:
        mujoco.mj_fullM(m, out, d.qM)


def _rel(a, b) -> float:
    if np.size(a) == 0:
        return 0.0
    return float(np.abs(a - b).max() / max(1e-300, np.abs(b).max()))
