"""Balafoutis-Patel inverse dynamics (Guenter & Rose's report): torques equal RNEA's (1e-10), partials equal
complex step and IDSVA/CRBA, other joint kinds are refused; the spacetime objective's gradient is exact."""

import numpy as np
import pytest

import redmax as rm
from derivative_models import cs_first_order, rel
from redmax.testing.models import random_model, random_state
from redmax.testing.robots import robot_urdf

from tolerances import CS_REL, CS_STEP

bp = rm.balafoutis_patel


def _models():
    rng = np.random.default_rng(0)
    return [random_model(rng, n=10, topology="chain", joints="revprism", gravity=(0.3, -0.2, -9.81)),
            random_model(rng, n=14, topology="random", joints="revprism"),
            rm.load_urdf(robot_urdf("panda")), rm.load_urdf(robot_urdf("talos"))]


@pytest.mark.parametrize("model", _models(), ids=lambda m: m.name)
def test_torques_and_partials(model):
    rng = np.random.default_rng(model.ndof)
    q, qd = random_state(rng, model)
    qdd = rng.normal(size=model.ndof)
    tau, dq, dqd, dqdd = bp.inverse_dynamics(model, q, qd, qdd)
    assert rel(tau, rm.rnea(model, q, qd, qdd)) < 1e-10
    I = np.eye(model.ndof)
    (cq,) = cs_first_order(lambda x: bp.inverse_dynamics(model, x, qd, qdd)[:1], q, I)
    (cv,) = cs_first_order(lambda x: bp.inverse_dynamics(model, q, x, qdd)[:1], qd, I)
    (ca,) = cs_first_order(lambda x: bp.inverse_dynamics(model, q, qd, x)[:1], qdd, I)
    assert rel(dq, cq) < CS_REL and rel(dqd, cv) < CS_REL and rel(dqdd, ca) < CS_REL
    a, b = rm.rnea_derivatives(model, q, qd, qdd)
    assert rel(dq, a) < CS_REL and rel(dqd, b) < CS_REL and rel(dqdd, rm.crba(model, q)) < CS_REL
    t0, *_ = bp.inverse_dynamics(model, q, qd, qdd, gravity=False)
    assert rel(t0, rm.rnea(model, q, qd, qdd, gravity=False)) < 1e-10


def test_other_joint_kinds_are_refused():
    m = random_model(np.random.default_rng(1), n=3, joints="multi", floating=True)
    with pytest.raises(rm.ModelError, match="root_joint|b0"):
        bp.inverse_dynamics(m, np.zeros(m.ndof), np.zeros(m.ndof), np.zeros(m.ndof))


@pytest.mark.parametrize("rest", [True, False])
def test_spacetime_objective_gradient_is_exact(rest):
    rng = np.random.default_rng(2)
    m = random_model(rng, n=5, topology="chain", joints="revprism")
    path = rng.normal(size=(7, m.ndof))
    h = 0.05
    P, grad = bp.spacetime_objective(m, path, h, rest=rest)
    assert grad.shape == path.shape and P > 0
    num = np.zeros_like(path)
    for k in range(path.shape[0]):
        for i in range(m.ndof):
            x = path.astype(complex)
            x[k, i] += 1j * CS_STEP
            num[k, i] = bp.spacetime_objective(m, x, h, rest=rest)[0].imag / CS_STEP
    assert rel(grad, num) < CS_REL
    # the integrand: trapezoid rule of sum tau^2 with central differences
    qd, qdd = bp.trajectory_rates(path, h, rest)
    taus = np.array([rm.rnea(m, path[k], qd[k], qdd[k]) for k in range(len(path))])
    w = np.full(len(path), h)
    w[[0, -1]] *= 0.5
    assert abs(P - np.sum(w * np.sum(taus**2, axis=1))) < 1e-10 * P


def test_spacetime_objective_checks_inputs():
    m = random_model(np.random.default_rng(3), n=3)
    with pytest.raises(rm.ModelError, match="path must have shape"):
        bp.spacetime_objective(m, np.zeros((4, 2)), 0.1)
    with pytest.raises(rm.ModelError, match="h must be positive"):
        bp.spacetime_objective(m, np.zeros((4, 3)), 0.0)
