"""Forward kinematics, body twists, J, Jdot and the O(n) Jacobian products."""

import numpy as np
import pytest

from redmax import kinematics as kn
from redmax import spatial as sp
from redmax.scenes import load
from redmax.testing.models import random_model, random_state

from tolerances import CS_REL, CS_STEP, FD_REL, FD_STEP, ROUNDOFF

CASES = [("chain", "revolute", False), ("binary", "revprism", False), ("random", "mixed", False),
         ("chain", "revolute", True), ("random", "mixed", True)]


def unbracket(M):
    return np.concatenate([sp.unskew(M[:3, :3]), M[:3, 3]])


def body_twists_from_poses(E0, Ed):
    """phi_i = unbracket(E_i^-1 dE_i/dt) for all bodies."""
    return np.array([unbracket(np.linalg.inv(E0[i]) @ Ed[i]) for i in range(E0.shape[0])])


@pytest.mark.parametrize("case", CASES, ids=["-".join(map(str, c)) for c in CASES])
def test_twists_J_and_Jdot(case):
    rng = np.random.default_rng(11)
    m = random_model(rng, n=8, topology=case[0], joints=case[1], floating=case[2])
    for _ in range(3):
        q, qd = random_state(rng, m)
        k = kn.kinematics(m, q, qd, jstate=m.jstate0)
        J, Jd = kn.jacobian(m, q, qd, kin=k, jstate=m.jstate0)
        # J qd stacks the body twists of the velocity recursion
        assert np.abs(J @ qd - k.phi.reshape(-1)).max() < ROUNDOFF * max(1, np.abs(k.phi).max())
        # ... and both equal the finite-difference rate of the body poses
        Ep = kn.forward_kinematics(m, q + FD_STEP * qd, jstate=m.jstate0)[1]
        Em = kn.forward_kinematics(m, q - FD_STEP * qd, jstate=m.jstate0)[1]
        phi_fd = body_twists_from_poses(k.E_wb, (Ep - Em) / (2 * FD_STEP))
        assert np.abs(phi_fd - k.phi).max() < FD_REL * max(1, np.abs(k.phi).max())
        # complex step of the poses
        Ec = kn.kinematics(m, q + 1j * CS_STEP * qd, qd.astype(complex), jstate=m.jstate0).E_wb
        phi_cs = body_twists_from_poses(k.E_wb, Ec.imag / CS_STEP)
        assert np.abs(phi_cs - k.phi).max() < CS_REL * max(1, np.abs(k.phi).max())
        # Jdot = d/dt J along qd
        Jp = kn.jacobian(m, q + FD_STEP * qd, qd, jstate=m.jstate0)[0]
        Jm = kn.jacobian(m, q - FD_STEP * qd, qd, jstate=m.jstate0)[0]
        assert np.abs((Jp - Jm) / (2 * FD_STEP) - Jd).max() < FD_REL * max(1, np.abs(Jd).max())
        Jc = kn.jacobian(m, q + 1j * CS_STEP * qd, qd.astype(complex), jstate=m.jstate0)[0]
        assert np.abs(Jc.imag / CS_STEP - Jd).max() < CS_REL * max(1, np.abs(Jd).max())


@pytest.mark.parametrize("case", CASES, ids=["-".join(map(str, c)) for c in CASES])
def test_linear_time_products_match_dense(case):
    rng = np.random.default_rng(5)
    m = random_model(rng, n=9, topology=case[0], joints=case[1], floating=case[2])
    q, qd = random_state(rng, m)
    k = kn.kinematics(m, q, qd, jstate=m.jstate0)
    J, Jd = kn.jacobian(m, q, qd, kin=k, jstate=m.jstate0)
    x = rng.normal(size=m.ndof)
    y = rng.normal(size=(m.nb, 6))
    scale = max(1.0, np.abs(J).max(), np.abs(Jd).max())
    assert np.abs(kn.J_product(k, m, x).reshape(-1) - J @ x).max() < ROUNDOFF * scale * 10
    assert np.abs(kn.Jdot_product(k, m, x).reshape(-1) - Jd @ x).max() < ROUNDOFF * scale * 10
    assert np.abs(kn.JT_product(k, m, y) - J.T @ y.reshape(-1)).max() < ROUNDOFF * scale * 10


def test_forward_kinematics_of_the_standard_chain():
    m = load("reference/-1").model  # q = (pi/2, pi/4); rev y joints along x
    E_wj, E_wb = kn.forward_kinematics(m, np.array([0.0, 0.0]), jstate=m.jstate0)
    assert np.allclose(E_wb[0][:3, 3], [5, 0, 0]) and np.allclose(E_wb[1][:3, 3], [15, 0, 0])
    q = np.array([np.pi / 2, -np.pi / 2])
    E_wj, E_wb = kn.forward_kinematics(m, q, jstate=m.jstate0)
    # Ry(pi/2) maps +x to -z: link 1 hangs down, link 2 turns back to +x
    assert np.allclose(E_wj[1][:3, 3], [0, 0, -10], atol=1e-12)
    assert np.allclose(E_wb[1][:3, 3], [5, 0, -10], atol=1e-12)
    assert np.allclose(E_wb[0][:3, 3], [0, 0, -5], atol=1e-12)


def test_jstate_changes_the_chart():
    from redmax.bodies import Cuboid
    from redmax.builder import ModelBuilder
    from redmax.joints import CHARTS, SphericalEuler

    b = ModelBuilder("m")
    b.add_body("a", Cuboid(1, 1, 1), SphericalEuler("XYZ"))
    m = b.build()
    q = np.array([0.1, 0.2, 0.3])
    R_xyz = kn.forward_kinematics(m, q, jstate=m.jstate0)[0][0][:3, :3]
    R_zyx = kn.forward_kinematics(m, q, jstate=np.array([CHARTS.index("ZYX")]))[0][0][:3, :3]
    assert np.allclose(R_xyz, sp.rot_x(0.1) @ sp.rot_y(0.2) @ sp.rot_z(0.3))
    assert np.allclose(R_zyx, sp.rot_z(0.1) @ sp.rot_y(0.2) @ sp.rot_x(0.3))
