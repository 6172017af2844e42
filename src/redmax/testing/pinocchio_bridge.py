"""Build the Pinocchio model of a redmax Model, and convert states and forces between the two.

Only needed by tests and benchmarks; Pinocchio (``pip install pin``) is imported lazily.  Supported
joints: revolute and prismatic (any axis), fixed, spherical (exponential coordinates or Euler angles, as
Pinocchio's quaternion spherical joint) and free 3D joints.  Pinocchio spatial vectors are
linear-first, redmax's angular-first; Pinocchio's free-flyer velocity is ``[v; w]`` in the joint frame
while redmax's free joint uses the rates of (translation in the parent frame, rotation vector) or, for the
``tangent=True`` derivatives, the body twist ``[w; v]``: ``DofMap(model, pm, tangent=True)`` maps
Pinocchio's vectors, matrices and (nv, nv, nv) derivative tensors into that order.
"""

from __future__ import annotations

import numpy as np

from redmax.spatial import right_jacobian_so3

__all__ = ["DofMap", "free_flyer_maps", "joint_transform", "to_pinocchio"]


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
        elif j.kind == "free3d":
            jm = pin.JointModelFreeFlyer()
        elif j.kind in ("spherical_exp", "spherical_euler"):
            jm = pin.JointModelSpherical()
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


class DofMap:
    """Our DOFs <-> a Pinocchio model's (matched by joint name, for models built by Pinocchio's own URDF
    parser too): ``q_pin(q)`` (continuous joints are (cos, sin) in Pinocchio's q, a free joint's rotation
    vector becomes a quaternion), ``vec(x)`` (our DOF vector -> Pinocchio's v ordering), ``back(y)``
    (the reverse) and ``mat(M)`` (an (nv, nv) Pinocchio matrix in our ordering).  A free joint's
    velocity needs :func:`free_flyer_maps` besides the reordering.

    With ``tangent=True`` the velocity of a free joint is its body twist in our angular-first order, so a
    Pinocchio free flyer's ``[v; w]`` is swapped to ``[w; v]`` by ``vec``, ``back``, ``mat`` and ``tensor``
    (spherical joints need no change: both use the body angular velocity).  ``tensor(T)`` maps a
    Pinocchio (nv, nv, nv) tensor (``computeRNEADerivatives``' second-order tensors, ``dtau_dq``-like
    derivatives on every axis) into our DOF order."""

    def __init__(self, model, pm, tangent: bool = False):
        self.model, self.pm = model, pm
        self.v = np.empty(model.ndof, dtype=int)  # our dof k -> pinocchio v index
        self.q = []  # (our dof, pin q index, nq)
        for i, jn in enumerate(model.joint_names):
            a, b = model.idx[i], model.idx[i + 1]
            if b == a:
                continue
            jid = pm.getJointId(jn)
            if jid >= pm.njoints:
                raise ValueError(f"joint {jn!r} missing in the Pinocchio model")
            jm = pm.joints[jid]
            if jm.nv != b - a:
                raise ValueError(f"joint {jn!r}: {jm.nv} DOFs in Pinocchio, {b - a} in redmax")
            self.v[a:b] = np.arange(jm.idx_v, jm.idx_v + jm.nv)
            if tangent and jm.nv == 6:  # free flyer: ours [w; v], Pinocchio's [v; w]
                self.v[a:b] = jm.idx_v + np.array([3, 4, 5, 0, 1, 2])
            self.q.append((a, b, jm.idx_q, jm.nq, i))

    def q_pin(self, q, jstate=None):
        out = np.zeros(self.pm.nq)
        for a, b, iq, nq, i in self.q:
            if nq == b - a:
                out[iq : iq + nq] = q[a:b]
            elif nq == 2 and b - a == 1:  # continuous
                out[iq : iq + 2] = np.cos(q[a]), np.sin(q[a])
            elif nq == 7:  # free flyer: translation, quaternion (x, y, z, w)
                Q = joint_transform(self.model, i, q, jstate)
                out[iq : iq + 3] = Q[:3, 3]
                out[iq + 3 : iq + 7] = _quaternion_xyzw(Q[:3, :3])
            elif nq == 4 and b - a == 3:  # spherical: quaternion
                out[iq : iq + 4] = _quaternion_xyzw(joint_transform(self.model, i, q, jstate)[:3, :3])
            else:
                raise ValueError(f"unsupported joint with nq = {nq}")
        return out

    def vec(self, x):
        out = np.zeros(self.pm.nv)
        out[self.v] = x
        return out

    def back(self, y):
        return y[self.v]

    def mat(self, M):
        return M[np.ix_(self.v, self.v)]

    def tensor(self, T):
        """A Pinocchio (nv, nv, nv) tensor in our DOF order on all three axes."""
        return np.asarray(T)[np.ix_(self.v, self.v, self.v)]


def joint_transform(model, i, q, jstate=None) -> np.ndarray:
    """Q(q_i) (4, 4) of joint i of ``model`` at the model coordinates ``q`` (ndof,)."""
    from redmax.joints.dispatch import joint_calc

    a, b = int(model.idx[i]), int(model.idx[i + 1])
    qi = np.ascontiguousarray(q[a:b], dtype=float)
    Q = np.zeros((4, 4))
    S = np.zeros((6, b - a))
    js = int(model.jstate0[i] if jstate is None else jstate[i])
    joint_calc(int(model.jtype[i]), model.jparam[model.jp_off[i]:model.jp_off[i + 1]], qi, qi, js, Q, S, S.copy())
    return Q


def _quaternion_xyzw(R: np.ndarray) -> np.ndarray:
    """Unit quaternion (x, y, z, w) of a rotation matrix, in Pinocchio's coefficient order."""
    import pinocchio as pin

    return pin.Quaternion(R).coeffs()


def free_joint_maps(model, q, qd):
    """``(T, Tdot)`` (ndof, ndof) mapping our rates to Pinocchio's velocities for a whole model: identity except
    for the blocks of free 3D joints (:func:`free_flyer_maps`), so that ``v_pin = T qd`` and
    ``a_pin = T qdd + Tdot qd`` (in our DOF order)."""
    n = model.ndof
    T = np.eye(n)
    Td = np.zeros((n, n))
    for i, j in enumerate(model.joints):
        if j.kind == "free3d":
            a = model.idx[i]
            T6, Td6 = free_flyer_maps(q[a + 3 : a + 6], qd[a : a + 6])
            T[a : a + 6, a : a + 6], Td[a : a + 6, a : a + 6] = T6, Td6
    return T, Td


def compare_with_pinocchio(model, pm, rng, states: int = 3, algorithms=("rnea", "aba", "crba"),
                           conditioning: bool = False) -> dict:
    """Largest relative differences ``max|ours - theirs| / max|theirs|`` of rnea, aba and crba (and minv when
    asked) over ``states`` random states, between our ``model`` and Pinocchio's ``pm`` of the same robot (joints
    matched by name; free joints converted with :func:`free_joint_maps`).  Rotations of free joints are kept
    within |r| < 1.5 so that the rotation-vector chart stays away from its singular shells.

    ``conditioning=True`` (with "aba") adds ``"cond"``, the largest 2-norm condition number of our M(q) over the
    states, and ``"aba_backward"``, the largest normwise backward error of our aba (Rigal and Gaches),
    ``max|rnea(q, qd, qdd) - tau| / (max|M| max|qdd| + max|tau|)`` with ``qdd = aba(q, qd, tau)``: when M is
    ill-conditioned no double-precision forward dynamics (ours or Pinocchio's) is accurate beyond about
    ``cond * eps``, and the backward error is what the algorithm controls."""
    import redmax as rm

    pin = _pin()
    pd = pm.createData()
    mp = DofMap(model, pm)
    worst = dict.fromkeys(algorithms, 0.0)
    for _ in range(states):
        q = rng.normal(size=model.ndof)
        qd = rng.normal(size=model.ndof)
        for i, j in enumerate(model.joints):
            if j.kind == "free3d":
                a = model.idx[i]
                q[a + 3 : a + 6] *= 0.5
        T, Td = free_joint_maps(model, q, qd)
        qp = mp.q_pin(q)
        vp = mp.vec(T @ qd)
        if "rnea" in worst:
            qdd = rng.normal(size=model.ndof)
            theirs = T.T @ mp.back(pin.rnea(pm, pd, qp, vp, mp.vec(T @ qdd + Td @ qd)))
            worst["rnea"] = max(worst["rnea"], _rel(rm.rnea(model, q, qd, qdd), theirs))
        if "aba" in worst:
            tau = rng.normal(size=model.ndof)
            theirs = mp.back(pin.aba(pm, pd, qp, vp, mp.vec(np.linalg.solve(T.T, tau))))
            ours = rm.aba(model, q, qd, tau)
            worst["aba"] = max(worst["aba"], _rel(T @ ours + Td @ qd, theirs))
            if conditioning:
                M = rm.crba(model, q)
                cond = float(np.linalg.cond(M)) if model.ndof else 1.0
                scale = np.abs(M).max(initial=0.0) * np.abs(ours).max(initial=0.0) + np.abs(tau).max(initial=0.0)
                back = np.abs(rm.rnea(model, q, qd, ours) - tau).max(initial=0.0) / max(scale, 1e-300)
                worst["cond"] = max(worst.get("cond", 1.0), cond)
                worst["aba_backward"] = max(worst.get("aba_backward", 0.0), float(back))
        if "crba" in worst:
            Mp = mp.mat(_sym(pin.crba(pm, pd, qp)))
            worst["crba"] = max(worst["crba"], _rel(rm.crba(model, q), T.T @ Mp @ T))
        if "minv" in worst:
            Mi = mp.mat(_sym(pin.computeMinverse(pm, pd, qp)))
            worst["minv"] = max(worst["minv"], _rel(rm.minv(model, q), np.linalg.solve(T, np.linalg.solve(T, Mi.T).T)))
    return worst


def _pin():
    import pinocchio as pin

    return pin


def _sym(M):
    return np.triu(M) + np.triu(M, 1).T


def _rel(a, b) -> float:
    if a.size == 0:
        return 0.0
    return float(np.abs(a - b).max() / max(1e-300, np.abs(b).max()))
