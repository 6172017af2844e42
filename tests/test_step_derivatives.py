"""step_derivatives: the (A, B) of one linearly implicit Euler step (redmax's integrator) and of one
semi-implicit step, against finite differences of the actual step and complex step of its equations, with
and without force elements (joint springs and dampers, body damping, a point spring)."""

import numpy as np
import pytest

import redmax as rm
from derivative_models import rel
from redmax.dynamics.step_derivatives import step
from redmax.forces import PointSpring, model_forces
from redmax.forces.base import Force
from redmax.forces.builtin import JointTorque
from redmax.integrators.euler import euler_step, euler_system
from redmax.model import ModelBuilder, State
from redmax.testing.models import random_model, random_placement

from tolerances import CS_REL, CS_STEP, FD_REL


class ConstantTorque(Force):
    """Joint torques tau on every DOF (in place of the model's own)."""

    space = "reduced"
    name = "tau"

    def __init__(self, tau):
        self.tau = tau

    def accumulate(self, model, kin, t, terms):
        terms.fr += self.tau
        terms.fr_rhs += self.tau


def _forces(model, tau):
    return [f for f in model_forces(model) if not isinstance(f, JointTorque)] + [ConstantTorque(tau)]


def _models():
    rng = np.random.default_rng(4)
    plain = random_model(rng, n=5, topology="chain", joints="revprism")
    elems = random_model(rng, n=5, topology="binary", joints="multi", damping=True, stiffness=True)
    b = ModelBuilder("spring-arm", (0.0, 0.0, -9.81))
    for k in range(4):
        b.add_body(f"b{k}", rm.Cuboid(1.0, 0.3, 0.2), rm.Revolute(rng.normal(size=3)),
                   parent=f"b{k - 1}" if k else None, joint_placement=random_placement(rng, 0.5), damping=0.2)
    b.add_force(PointSpring(("b3", (0.5, 0.0, 0.0)), (None, (1.0, 1.0, 0.0)), 30.0, 2.0))
    return [plain, elems, b.build()]


MODELS = _models()


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_linearly_implicit_step_derivatives(model):
    rng = np.random.default_rng(model.ndof)
    q, qd = 0.5 * rng.normal(size=(2, model.ndof))
    tau = rng.normal(size=model.ndof)
    h, t = 0.01, 0.3
    st = State(q, qd, t, model.jstate0.copy())
    A, B = rm.step_derivatives(model, st, h, tau)
    # the step itself is redmax's Euler step
    q1, qd1, _ = euler_step(model, q, qd, model.jstate0, t + h, h, _forces(model, tau))
    s1 = step(model, st, h, tau)
    assert rel(s1[1], qd1) < 1e-12 and rel(s1[0], q1) < 1e-12

    def x1_of(x, u):  # complex-capable: euler_system solved directly
        Am, rhs = euler_system(model, x[:model.ndof], x[model.ndof:], model.jstate0, t + h, h, _forces(model, u))
        v = np.linalg.solve(Am, rhs)
        return np.concatenate([x[:model.ndof] + h * v, v])

    x = np.concatenate([q, qd])
    cA = np.stack([x1_of(x + 1j * CS_STEP * e, tau).imag / CS_STEP for e in np.eye(x.size)], axis=1)
    cB = np.stack([x1_of(x.astype(complex), tau + 1j * CS_STEP * e).imag / CS_STEP
                   for e in np.eye(model.ndof)], axis=1)
    assert rel(A, cA) < CS_REL and rel(B, cB) < CS_REL
    # finite differences of the actual integrator step
    eps = 1e-6
    fd = []
    for e in np.eye(x.size):
        xp, xm = x + eps * e, x - eps * e
        p = euler_step(model, xp[:model.ndof], xp[model.ndof:], model.jstate0, t + h, h, _forces(model, tau))
        m = euler_step(model, xm[:model.ndof], xm[model.ndof:], model.jstate0, t + h, h, _forces(model, tau))
        fd.append((np.concatenate(p[:2]) - np.concatenate(m[:2])) / (2 * eps))
    assert rel(A, np.stack(fd, axis=1)) < FD_REL


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_semi_implicit_step_derivatives(model):
    rng = np.random.default_rng(model.ndof + 1)
    n = model.ndof
    q, qd = 0.5 * rng.normal(size=(2, n))
    tau = rng.normal(size=n)
    h = 0.02
    A, B = rm.step_derivatives(model, (q, qd), h, tau, scheme="semi_implicit")

    def x1_of(x, u):  # qd1 = qd + h aba(q, qd, tau + f), every force explicit
        from redmax.dynamics.step_derivatives import _force_terms, _split_forces

        passive, _ = _split_forces(model, None)
        f = _force_terms(model, x[:n], x[n:], h, model.jstate0, passive)[0] if passive else 0.0
        v = x[n:] + h * rm.aba(model, x[:n], x[n:], u + f)
        return np.concatenate([x[:n] + h * v, v])

    x = np.concatenate([q, qd])
    assert rel(x1_of(x, tau), np.concatenate(step(model, (q, qd), h, tau, "semi_implicit"))) < 1e-12
    cA = np.stack([x1_of(x + 1j * CS_STEP * e, tau).imag / CS_STEP for e in np.eye(2 * n)], axis=1)
    cB = np.stack([x1_of(x.astype(complex), tau + 1j * CS_STEP * e).imag / CS_STEP for e in np.eye(n)], axis=1)
    assert rel(A, cA) < CS_REL and rel(B, cB) < CS_REL


def test_bad_arguments():
    m = MODELS[0]
    z = np.zeros(m.ndof)
    with pytest.raises(rm.SimulationError, match="scheme"):
        rm.step_derivatives(m, (z, z), 0.01, z, scheme="rk4")
    with pytest.raises(rm.SimulationError, match="time step"):
        rm.step_derivatives(m, (z, z), -1.0, z)
    with pytest.raises(rm.SimulationError, match="tau"):
        rm.step_derivatives(m, (z, z), 0.01, np.zeros(2))
    b = ModelBuilder("ball", (0, 0, -9.81))
    b.add_body("b", rm.Cuboid(1, 1, 1), rm.SphericalExp(), q=(5.0, 0.0, 0.0))
    mb = b.build()
    with pytest.raises(rm.SimulationError, match="re-parameterised"):
        rm.step_derivatives(mb, (mb.q0, np.zeros(3)), 0.01, np.zeros(3))
