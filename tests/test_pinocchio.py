"""Cross-validation against Pinocchio (test extra): rnea, aba, crba and minv agree to 1e-9 (relative) on
example-robot-data robots, seeded random chains and trees, and floating bases."""

import numpy as np
import pinocchio as pin
import pytest

import redmax as rm
from redmax.spatial import exp_so3
from redmax.testing.models import random_model, random_state
from redmax.testing.pinocchio_bridge import free_flyer_maps, to_pinocchio
from redmax.testing.robots import robot_urdf

TOL = 1e-9
FIXED_BASE = ["ur5", "ur10", "panda", "kinova", "z1", "double_pendulum"]
FLOATING = ["solo12", "anymal", "talos"]


def rel(a, b):
    return np.abs(a - b).max() / max(1e-300, np.abs(b).max())


def sym(M):
    return np.triu(M) + np.triu(M, 1).T


class Mapping:
    """Our DOFs <-> Pinocchio's (by joint name); continuous joints are (cos, sin) in Pinocchio's q."""

    def __init__(self, model, pm):
        self.model, self.pm = model, pm
        self.v = np.empty(model.ndof, dtype=int)  # our dof k -> pinocchio v index
        self.q = []  # (our dof, pin q index, nq)
        for i, jn in enumerate(model.joint_names):
            a, b = model.idx[i], model.idx[i + 1]
            if b == a:
                continue
            jid = pm.getJointId(jn)
            assert jid < pm.njoints, f"joint {jn} missing in Pinocchio"
            jm = pm.joints[jid]
            if jm.nv != b - a:
                raise AssertionError(f"joint {jn}: nv {jm.nv} vs {b - a}")
            self.v[a:b] = np.arange(jm.idx_v, jm.idx_v + jm.nv)
            self.q.append((a, b, jm.idx_q, jm.nq))

    def q_pin(self, q):
        out = np.zeros(self.pm.nq)
        for a, b, iq, nq in self.q:
            if nq == b - a:
                out[iq : iq + nq] = q[a:b]
            elif nq == 2 and b - a == 1:  # continuous
                out[iq : iq + 2] = np.cos(q[a]), np.sin(q[a])
            elif nq == 7:  # free flyer: translation, quaternion (x, y, z, w)
                out[iq : iq + 3] = q[a : a + 3]
                out[iq + 3 : iq + 7] = pin.Quaternion(exp_so3(q[a + 3 : b])).coeffs()
            else:
                raise AssertionError("unsupported joint")
        return out

    def vec(self, x):
        out = np.zeros(self.pm.nv)
        out[self.v] = x
        return out

    def back(self, y):
        return y[self.v]

    def mat(self, M):
        return M[np.ix_(self.v, self.v)]


def _check(model, pm, rng, states=3):
    pd = pm.createData()
    mp = Mapping(model, pm)
    for _ in range(states):
        q, qd = random_state(rng, model)
        qdd = rng.normal(size=model.ndof)
        qp, vp, ap = mp.q_pin(q), mp.vec(qd), mp.vec(qdd)
        assert rel(rm.rnea(model, q, qd, qdd), mp.back(pin.rnea(pm, pd, qp, vp, ap))) < TOL
        tau = rng.normal(size=model.ndof)
        assert rel(rm.aba(model, q, qd, tau), mp.back(pin.aba(pm, pd, qp, vp, mp.vec(tau)))) < TOL
        assert rel(rm.crba(model, q), mp.mat(sym(pin.crba(pm, pd, qp)))) < TOL
        assert rel(rm.minv(model, q), mp.mat(sym(pin.computeMinverse(pm, pd, qp)))) < TOL


@pytest.mark.parametrize("name", FIXED_BASE)
def test_fixed_base_robots_agree_with_pinocchio(name):
    path = robot_urdf(name)
    model = rm.load_urdf(path)
    pm = pin.buildModelFromUrdf(path)
    assert model.ndof == pm.nv
    _check(model, pm, np.random.default_rng(1))


@pytest.mark.parametrize("topology,n", [("chain", 12), ("chain", 40), ("binary-dfs", 15), ("binary-dfs", 31)])
def test_random_chains_and_trees_agree_with_pinocchio(topology, n):
    rng = np.random.default_rng(n)
    model = random_model(rng, n=n, topology=topology, joints="revprism", gravity=(0.2, -0.3, -9.81))
    _check(model, to_pinocchio(model), rng)


def test_external_wrenches_agree_with_pinocchio():
    path = robot_urdf("panda")
    model = rm.load_urdf(path)
    pm = pin.buildModelFromUrdf(path)
    pd = pm.createData()
    mp = Mapping(model, pm)
    rng = np.random.default_rng(3)
    q, qd = random_state(rng, model)
    qdd = rng.normal(size=model.ndof)
    f_body = rng.normal(size=(model.nb, 6))
    fext = pin.StdVec_Force()
    fext.append(pin.Force.Zero())
    for jn in pm.names[1:]:
        i = model.joint_names.index(jn)
        fj = model.Ad_bj[i].T @ f_body[i]  # body wrench -> joint frame (= Pinocchio's local frame)
        fext.append(pin.Force(fj[3:], fj[:3]))
    qp, vp = mp.q_pin(q), mp.vec(qd)
    tau = rm.rnea(model, q, qd, qdd, f_ext=f_body)
    assert rel(tau, mp.back(pin.rnea(pm, pd, qp, vp, mp.vec(qdd), fext))) < TOL
    assert rel(rm.aba(model, q, qd, tau, f_ext=f_body), mp.back(pin.aba(pm, pd, qp, vp, mp.vec(tau), fext))) < TOL


@pytest.mark.parametrize("name", FLOATING)
def test_floating_base_robots_agree_after_free_flyer_conversion(name):
    """Pinocchio's free-flyer velocity is v_pin = T qd (linear velocity and angular velocity in the base
    frame); our free joint uses the rates of (translation, rotation vector).  So tau = T^T tau_pin and
    a_pin = T qdd + Tdot qd."""
    path = robot_urdf(name)
    model = rm.load_urdf(path, floating_base=True)
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    pd = pm.createData()
    mp = Mapping(model, pm)  # root_joint -> Pinocchio's "root_joint"
    rng = np.random.default_rng(7)
    for _ in range(3):
        q, qd = random_state(rng, model)
        q[3:6] *= 0.5
        qdd = rng.normal(size=model.ndof)
        T6, Td6 = free_flyer_maps(q[3:6], qd[:6])
        T = np.eye(model.ndof)
        Td = np.zeros((model.ndof, model.ndof))
        T[:6, :6], Td[:6, :6] = T6, Td6
        # Pinocchio's free-flyer v is (linear, angular): T6 maps our (xdot, rdot) to it
        qp, vp = mp.q_pin(q), mp.vec(T @ qd)
        ap = mp.vec(T @ qdd + Td @ qd)
        tau_pin = mp.back(pin.rnea(pm, pd, qp, vp, ap))
        assert rel(rm.rnea(model, q, qd, qdd), T.T @ tau_pin) < TOL
        a_pin = mp.back(pin.aba(pm, pd, qp, vp, mp.vec(np.linalg.solve(T.T, rm.rnea(model, q, qd, qdd)))))
        assert rel(a_pin, T @ qdd + Td @ qd) < TOL
        M_pin = mp.mat(sym(pin.crba(pm, pd, qp)))
        assert rel(rm.crba(model, q), T.T @ M_pin @ T) < TOL
        assert rel(rm.minv(model, q), np.linalg.solve(T, np.linalg.solve(T, np.linalg.inv(M_pin).T).T)) < 1e-8
