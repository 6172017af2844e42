"""Analytic derivatives of the RedMax equations (issue 13): joint jets (dQ, dA, dAdot, dS, dSdot) of every joint
kind, dJ/dq and dJdot/dq (notes Alg. 11), dM/dq, the quadratic velocity vector's K and D, the O(n^2) products, and
K = df/dq, D = df/dqd of the total reduced force with every force of the library, each against complex step or
(for the force library, whose kernels run in float64) fourth-order central differences, relative 1e-7."""

import numpy as np
import pytest

from derivative_models import central4, force_model, regular_kinds
from redmax.bodies import Cuboid
from redmax.builder import ModelBuilder
from redmax.derivatives.eom import equations_derivatives, total_force
from redmax.derivatives.jacobian import (
    dJ_product,
    dJdot_product,
    dJT_product,
    dM_product,
    jacobian_derivatives,
    mass_matrix_derivative,
    quadratic_velocity_derivatives,
)
from redmax.dynamics import crba
from redmax.joints import Revolute, SphericalEuler
from redmax.joints.jets import joint_jets
from redmax.kinematics import jacobian
from redmax.testing.models import random_model, random_placement, random_state

from tolerances import CS_STEP, DERIV_REL, rel

H = CS_STEP


def _cs(fun, x, k):
    z = np.asarray(x, dtype=complex).copy()
    z[k] += 1j * H
    return np.imag(fun(z)) / H


def _kinds_model(seed: int, n: int = 10, topology: str = "random"):
    return random_model(np.random.default_rng(seed), n, topology, "mixed")


MODELS = [_kinds_model(1, 13, "chain"), _kinds_model(2, 9, "random")]


@pytest.mark.parametrize("kind", range(len(regular_kinds(np.random.default_rng(0)))))
def test_joint_jets_equal_complex_step(kind):
    rng = np.random.default_rng(10 + kind)
    joint = regular_kinds(rng)[kind]
    b = ModelBuilder("one", (0, 0, -9.81))
    b.add_body("a", Cuboid(1, 1, 1), Revolute((0, 1, 0)), q=[0.3])
    q0 = rng.uniform(0.2, 0.8, 2) if joint.kind == "spline_surface" else rng.normal(size=joint.nq)
    b.add_body("b", Cuboid(1, 2, 1), joint, parent="a", joint_placement=random_placement(rng), q=q0)
    m = b.build()
    a, e = m.idx[1], m.idx[2]
    q, qd = m.q0[a:e].copy(), rng.normal(size=e - a)
    d = joint_jets(m, 1, q, qd, m.jstate0)
    if e == a:  # a joint without DOF (Fixed): constant transform, no columns, no derivatives, no velocity terms
        assert joint.nq == 0
        for key, shape in (("S", (6, 0)), ("Sdot", (6, 0)), ("dQ", (4, 4, 0)), ("dA", (6, 6, 0)), ("dAdot", (6, 6, 0)),
                           ("dS", (6, 0, 0)), ("dSdot", (6, 0, 0))):
            assert d[key].shape == shape, (key, d[key].shape)
        assert np.all(d["Adot"] == 0.0)
        assert np.allclose(d["Q"][3], [0, 0, 0, 1]) and np.allclose(d["Q"][:3, :3] @ d["Q"][:3, :3].T, np.eye(3))
        assert rel(d["A"][:3, :3], d["Q"][:3, :3]) < 1e-15
        return
    for k in range(e - a):
        for key in ("Q", "A", "Adot", "S", "Sdot"):
            ref = _cs(lambda z, key=key: joint_jets(m, 1, z, qd.astype(complex), m.jstate0)[key], q, k)
            assert rel(d["d" + key][..., k], ref) < DERIV_REL, (joint.kind, key, k)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_dJ_dJdot_dM_qvv_equal_complex_step(model):
    m = model
    rng = np.random.default_rng(3)
    q, qd = random_state(rng, m)
    js = m.jstate0
    jd = jacobian_derivatives(m, q, qd, js)
    J, Jd = jacobian(m, q, qd, js)
    assert rel(jd.J, J) < 1e-13 and rel(jd.Jdot, Jd) < 1e-12
    dM = mass_matrix_derivative(m, q, js)
    f, K, D = quadratic_velocity_derivatives(m, q, qd, js)
    qc = qd.astype(complex)
    sJ, sJd, sM = np.abs(J).max(), np.abs(Jd).max(), np.abs(crba(m, q, js)).max()
    for k in range(m.ndof):  # errors relative to the largest entry of the reference or of the differentiated array
        assert rel(jd.dJ[:, :, k], _cs(lambda z: jacobian(m, z, qc, js)[0], q, k), sJ) < DERIV_REL
        assert rel(jd.dJdot[:, :, k], _cs(lambda z: jacobian(m, z, qc, js)[1], q, k), sJd) < DERIV_REL
        assert rel(dM[:, :, k], _cs(lambda z: crba(m, z, js), q, k), sM) < DERIV_REL
    Kc = np.stack([_cs(lambda z: quadratic_velocity_derivatives(m, z, qc, js)[0], q, k) for k in range(m.ndof)], 1)
    Dc = np.stack([_cs(lambda z: quadratic_velocity_derivatives(m, q.astype(complex), z, js)[0], qd, k)
                   for k in range(m.ndof)], 1)
    assert rel(K, Kc) < DERIV_REL and rel(D, Dc) < DERIV_REL
    # Jdot = sum_k dJ/dq_k qd_k and the quadratic velocity vector of the dense equations
    assert rel(np.einsum("rak,k->ra", jd.dJ, qd), jd.Jdot) < 1e-12
    Mm = m.M_body.reshape(-1)
    assert rel(f, -jd.J.T @ (Mm * (jd.Jdot @ qd))) < 1e-13


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_products_equal_the_dense_tensors(model):
    m = model
    rng = np.random.default_rng(4)
    q, qd = random_state(rng, m)
    x = rng.normal(size=m.ndof)
    w = rng.normal(size=(m.nb, 6))
    js = m.jstate0
    jd = jacobian_derivatives(m, q, qd, js)
    dM = mass_matrix_derivative(m, q, js, jacobian_derivatives(m, q, None, js))
    assert rel(dJ_product(m, q, x, js), np.einsum("rak,a->rk", jd.dJ, x)) < 1e-12
    assert rel(dJdot_product(m, q, qd, x, js), np.einsum("rak,a->rk", jd.dJdot, x)) < 1e-12
    assert rel(dJT_product(m, q, w, js), np.einsum("rak,r->ak", jd.dJ, w.reshape(-1))) < 1e-12
    assert rel(dM_product(m, q, x, js), np.einsum("ijk,j->ik", dM, x)) < 1e-12


def _ground_depth(model, q, js):
    from redmax.kinematics import kinematics

    kin = kinematics(model, q, None, js)
    return np.array([kin.E_wb[k, :3, :3] @ [0.3, 0.2, -0.4] + kin.E_wb[k, :3, 3] for k in range(8)])


@pytest.mark.parametrize("method", ["recursive", "dense"])
def test_K_D_of_the_reduced_equations_with_every_force(method):
    m = force_model()
    rng = np.random.default_rng(11)
    q = m.q0.copy()
    qd = 0.5 * rng.normal(size=m.ndof)
    js = m.jstate0
    f_all = total_force(m, q, qd, 0.0, js)
    ed = equations_derivatives(m, q, qd, 0.0, js, method=method)
    assert rel(ed.f, f_all) < 1e-12
    Kc = np.stack([central4(lambda z: total_force(m, z, qd, 0.0, js), q, k) for k in range(m.ndof)], axis=1)
    Dc = np.stack([central4(lambda z: total_force(m, q, z, 0.0, js), qd, k) for k in range(m.ndof)], axis=1)
    assert rel(ed.K, Kc) < DERIV_REL
    assert rel(ed.D, Dc) < DERIV_REL


def test_every_force_is_active_in_the_force_test():
    """Guards the test above: contacts penetrate, the cable is taut, the limit is violated."""
    from redmax.dynamics.redmax import applied_terms
    from redmax.kinematics import kinematics

    m = force_model()
    kin = kinematics(m, m.q0, np.ones(m.ndof), m.jstate0)
    for f in m.forces:
        out = f.evaluate(m, kin, 0.0, True, True)
        assert np.abs(out.f).max() > 0, f.name
    assert np.any(_ground_depth(m, m.q0, m.jstate0) @ np.array([0.1, 0.2, 1.0]) < 0)
    assert applied_terms(m, kin).fr.any()


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_K_D_without_forces_equal_complex_step(model):
    """Gravity, Coriolis and the quadratic velocity terms alone, complex step, both methods agreeing."""
    m = model
    rng = np.random.default_rng(5)
    q, qd = random_state(rng, m)
    js = m.jstate0
    a = equations_derivatives(m, q, qd, 0.0, js, method="recursive")
    b = equations_derivatives(m, q, qd, 0.0, js, method="dense")
    assert rel(a.K, b.K) < 1e-11 and rel(a.D, b.D) < 1e-11
    qc, qdc = q.astype(complex), qd.astype(complex)
    Kc = np.stack([_cs(lambda z: total_force(m, z, qdc, 0.0, js), q, k) for k in range(m.ndof)], axis=1)
    Dc = np.stack([_cs(lambda z: total_force(m, qc, z, 0.0, js), qd, k) for k in range(m.ndof)], axis=1)
    assert rel(a.K, Kc) < DERIV_REL and rel(a.D, Dc) < DERIV_REL


def test_euler_chart_words_are_used():
    b = ModelBuilder("euler", (0, 0, -9.81))
    b.add_body("a", Cuboid(1, 1, 2), SphericalEuler("ZXZ"), q=[0.3, 1.0, -0.2], qd=[0.1, 0.2, 0.3])
    m = b.build()
    js = m.jstate0.copy()
    ed = equations_derivatives(m, m.q0, m.qd0, 0.0, js)
    Kc = np.stack([_cs(lambda z: total_force(m, z, m.qd0.astype(complex), 0.0, js), m.q0, k) for k in range(3)], 1)
    assert rel(ed.K, Kc) < DERIV_REL
