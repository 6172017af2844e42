"""Cross-validation against Pinocchio (test extra): rnea, aba, crba and minv agree to 1e-9 (relative) on
example-robot-data robots, seeded random chains and trees, and floating bases."""

import numpy as np
import pinocchio as pin
import pytest

import redmax as rm
from redmax.testing.models import random_model, random_state
from redmax.testing.pinocchio_bridge import DofMap, free_flyer_maps, to_pinocchio
from redmax.testing.robots import robot_urdf

from tolerances import CROSS_REL, rel

TOL = CROSS_REL
FIXED_BASE = ["ur5", "ur10", "panda", "kinova", "z1", "double_pendulum"]
FLOATING = ["solo12", "anymal", "talos"]


def sym(M):
    return np.triu(M) + np.triu(M, 1).T


def _check(model, pm, rng, states=3):
    pd = pm.createData()
    mp = DofMap(model, pm)
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
    mp = DofMap(model, pm)
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
    a_pin = T qdd + Tdot qd: rnea, aba, crba and minv are each compared."""
    path = robot_urdf(name)
    model = rm.load_urdf(path, floating_base=True)
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    pd = pm.createData()
    mp = DofMap(model, pm)  # root_joint -> Pinocchio's "root_joint"
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
        tau = rng.normal(size=model.ndof)  # our forward dynamics against Pinocchio's, tau_pin = T^-T tau
        a_pin = mp.back(pin.aba(pm, pd, qp, vp, mp.vec(np.linalg.solve(T.T, tau))))
        assert rel(T @ rm.aba(model, q, qd, tau) + Td @ qd, a_pin) < TOL
        M_pin = mp.mat(sym(pin.crba(pm, pd, qp)))
        assert rel(rm.crba(model, q), T.T @ M_pin @ T) < TOL
        Minv_pin = mp.mat(sym(pin.computeMinverse(pm, pd, qp)))  # M^-1 = T^-1 M_pin^-1 T^-T
        assert rel(rm.minv(model, q), np.linalg.solve(T, np.linalg.solve(T, Minv_pin.T).T)) < TOL
