"""Build the Pinocchio model of a redmax Model, and convert states and forces between the two.

Only needed by tests and benchmarks; Pinocchio (``pip install pin``) is imported lazily.  Supported
joints: revolute and prismatic (any axis), fixed, and a free 3D root.  Pinocchio spatial vectors are
linear-first, redmax's angular-first; Pinocchio's free-flyer velocity is ``[v; w]`` in the joint frame
while redmax's free joint uses the rates of (translation in the parent frame, rotation vector).
"""

from __future__ import annotations

import numpy as np

from redmax.spatial import right_jacobian_so3

__all__ = ["free_flyer_maps", "to_pinocchio"]


def to_pinocchio(model):
    """A ``pinocchio.Model`` with the same joints (one per redmax joint, same order), placements,
    inertias and gravity.  Fixed joints are added as ``JointModelFixed``-free frames: their bodies are
    appended to the parent joint (Pinocchio's own treatment of fixed links)."""
    import pinocchio as pin

    pm = pin.Model()
    pm.gravity = pin.Motion(np.asarray(model.gravity, dtype=float), np.zeros(3))
    jid = {-1: 0}
    acc = {}  # redmax body -> (pin joint id, placement of the redmax joint frame in that pin joint)
    for i in range(model.nb):
        j = model.joints[i]
        p = model.parent[i]
        pj, E_pin_parent = (0, np.eye(4)) if p < 0 else acc[p]
        E = E_pin_parent @ model.E_pj0[i]
        placement = pin.SE3(E[:3, :3].copy(), E[:3, 3].copy())
        params = model.jparam[model.jp_off[i] : model.jp_off[i + 1]]
        if j.kind == "revolute":
            jm = pin.JointModelRevoluteUnaligned(np.asarray(params[:3], dtype=float))
        elif j.kind == "prismatic":
            jm = pin.JointModelPrismaticUnaligned(np.asarray(params[:3], dtype=float))
        elif j.kind == "free3d" and j.rotation == "exp":
            jm = pin.JointModelFreeFlyer()
        elif j.kind == "fixed":
            jm = None
        else:
            raise ValueError(f"joint '{model.joint_names[i]}' ({j.kind}) has no Pinocchio equivalent here")
        # body inertia: mass, centre of mass and rotational inertia about it, in the joint frame
        Ejb = model.E_jb[i]
        R = Ejb[:3, :3]
        Ic = R @ np.diag(model.I_body[i]) @ R.T
        if jm is None:
            com = E[:3, :3] @ Ejb[:3, 3] + E[:3, 3]
            inertia = pin.Inertia(float(model.mass[i]), com, E[:3, :3] @ Ic @ E[:3, :3].T)
            pm.appendBodyToJoint(pj, inertia, pin.SE3.Identity())
            acc[i] = (pj, E)
            continue
        new = pm.addJoint(pj, jm, placement, model.joint_names[i])
        pm.appendBodyToJoint(new, pin.Inertia(float(model.mass[i]), Ejb[:3, 3].copy(), Ic), pin.SE3.Identity())
        acc[i] = (new, np.eye(4))
        jid[i] = new
    return pm


def free_flyer_maps(q_rot, qd_rot=None):
    """For a free 3D joint: redmax rates -> Pinocchio free-flyer velocity ``v_pin = T qd_rm``.

    With rotation vector r (R = exp([r])): linear ``v = R^T xdot``, angular ``w = J_r(r) rdot``.
    Returns T (6, 6) (Pinocchio order: linear, angular), and, if ``qd_rot`` (the redmax rates, (6,))
    is given, also Tdot so that ``a_pin = T qdd_rm + Tdot qd_rm``.
    """
    from redmax.joints.spherical_exp import sph_exp_S
    from redmax.spatial import exp_so3

    r = np.asarray(q_rot, dtype=float)
    R = exp_so3(r)
    T = np.zeros((6, 6))
    T[:3, :3] = R.T
    Jr = right_jacobian_so3(r)
    T[3:, 3:] = Jr
    if qd_rot is None:
        return T
    qd = np.asarray(qd_rot, dtype=float)
    St = np.zeros((3, 3))
    Sd = np.zeros((3, 3))
    sph_exp_S(r, qd[3:], St, Sd)
    w = Jr @ qd[3:]  # body angular velocity
    Td = np.zeros((6, 6))
    Td[:3, :3] = -np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]]) @ R.T
    Td[3:, 3:] = Sd
    return T, Td
