"""step_derivatives: the (A, B) of one linearly implicit Euler step (exactly ``euler_step``, every option) and
of one semi-implicit step, against central differences of the step itself and complex step of the dense RedMax
equations of the step, with and without force elements (joint springs and dampers, body damping, point springs
in symmetric and full stiffness modes, a spring-damper, a cable, a Python-law spring)."""

import numpy as np
import pytest

import redmax as rm
from redmax import forces as fc
from redmax.dynamics import redmax_system
from redmax.dynamics.redmax import gravity_wrenches
from redmax.forces.builtin import coriolis_wrenches
from redmax.integrators import euler_step, linearized_step
from redmax.integrators.step_derivatives import step
from redmax.spatial import Ad, trans
from redmax.testing.models import random_model, random_placement

from tolerances import COND_REL, CS_REL, CS_STEP, FD_REL, rel


def _forced_chain():
    """A chain with springs in both stiffness modes, a spring-damper, a cable, joint springs and damping and
    body damping, and a SphericalExp joint (model coordinates: the rotation vector)."""
    b = rm.ModelBuilder("forced", gravity=(0, 0, -9.81))
    names = []
    for k in range(5):
        j = rm.SphericalExp() if k == 2 else rm.Revolute((0, 1, 0) if k % 2 == 0 else (0, 0, 1))
        names.append(b.add_body(f"l{k}", rm.Cuboid(0.4, 0.1, 0.1), j, parent=names[-1] if names else None,
                                joint_placement=None if k == 0 else trans(0.4, 0, 0), body_placement=trans(0.2, 0, 0),
                                stiffness=2.0, joint_damping=0.3, damping=0.05))
    b.add_force(fc.PointSpring(("l0", (0.1, 0, 0)), ("l3", (0, 0.05, 0)), ks=40.0, kd=0.5, stiffness="symmetric",
                               name="s1"))
    b.add_force(fc.PointSpring((None, (0.3, 0.2, 0.1)), ("l4", (0.1, 0, 0)), ks=30.0, name="s2", stiffness="full"))
    b.add_force(fc.SpringDamper(("l1", (0, 0, 0.05)), ("l4", (0, 0.05, 0)), k=50.0, d=2.0, name="sd",
                                stiffness="full"))
    b.add_force(fc.Cable([("l0", (0, 0, 0.05)), ("l2", (0, 0.05, 0)), ("l4", (0, 0, 0.05))], k=80.0, d=1.0,
                         rest_length=0.05, name="cable", stiffness="full"))
    return b.build()


def _models():
    rng = np.random.default_rng(4)
    plain = random_model(rng, n=5, topology="chain", joints="revprism")
    elems = random_model(rng, n=5, topology="binary", joints="multi", damping=True, stiffness=True)
    b = rm.ModelBuilder("spring-arm", (0.0, 0.0, -9.81))
    for k in range(4):
        b.add_body(f"b{k}", rm.Cuboid(1.0, 0.3, 0.2), rm.Revolute(rng.normal(size=3)),
                   parent=f"b{k - 1}" if k else None, joint_placement=random_placement(rng, 0.5), damping=0.2)
    b.add_force(fc.PointSpring(("b3", (0.5, 0.0, 0.0)), (None, (1.0, 1.0, 0.0)), 30.0, 2.0))
    return [plain, elems, b.build(), _forced_chain()]


MODELS = _models()
OPTIONS = {"reference": {}, "coriolis-implicit": {"coriolis": "implicit"}, "symmetrize": {"symmetrize": True},
           "gravity-implicit": {"gravity": "implicit"}}


def _start(model, seed):
    rng = np.random.default_rng(seed)
    q, qd = 0.4 * rng.normal(size=(2, model.ndof))
    return rm.State(q, qd, 0.3, model.jstate0.copy()), rng.normal(size=model.ndof)


def _x(st):
    return np.concatenate([st.q, st.qd])


def _fd(fun, x, tau, n, eps=1e-6):
    """Central differences of x1 = fun(x, tau) in x and tau."""
    cols = []
    for e in np.eye(x.size + n):
        p = fun(x + eps * e[:x.size], tau + eps * e[x.size:])
        m = fun(x - eps * e[:x.size], tau - eps * e[x.size:])
        cols.append((p - m) / (2 * eps))
    J = np.stack(cols, axis=1)
    return J[:, :x.size], J[:, x.size:]


def _dense_step(model, x, tau, t_next, h, js):
    """x1 of RedMax Eq. 2 written densely in body frames from the scalar-generic RedMax equations
    (``redmax_system``): an independent, complex-capable form of the step (explicit gravity and Coriolis)."""
    n = model.ndof
    q, qd = x[:n], x[n:]
    sys = redmax_system(model, q, qd, t_next, js, want_K=True, want_D=True, tau=tau)
    kin, J = sys.kin, sys.J
    d = sys.terms.dense(kin, "body")
    A = sys.Mr + h * (J.T @ d["Dm"] @ J + d["Dr"]) - h * h * (J.T @ d["Km"] @ J + d["Kr"])
    T = np.zeros((6 * model.nb, 6 * model.nb), dtype=J.dtype)
    for i in range(model.nb):
        T[6 * i:6 * i + 6, 6 * i:6 * i + 6] = Ad(kin.E_wb[i])
    fm_rhs, fr_rhs = sys.terms.rhs(kin)
    f_rhs = (T.T @ fm_rhs.reshape(-1)).reshape(-1, 6)
    fm = gravity_wrenches(model, kin) + coriolis_wrenches(model.M_body, kin.phi) + f_rhs
    b = sys.Mr @ qd + h * (J.T @ (fm.reshape(-1) - sys.Mm * (sys.Jdot @ qd)) + fr_rhs + tau)
    v = np.linalg.solve(A, b)
    return np.concatenate([q + h * v, v])


# (forced, symmetrize): the cable's symmetrised stiffness makes that step matrix indefinite, so the dense solver
# takes its Cholesky -> LU fallback there; the case checks that euler_step still solves its own system.
CASES = [(m, o) for m in MODELS for o in OPTIONS]


@pytest.mark.parametrize("model,opt", CASES, ids=lambda v: getattr(v, "name", v))
def test_linearly_implicit_step_derivatives_are_those_of_euler_step(model, opt):
    kw = OPTIONS[opt]
    st, tau = _start(model, model.ndof)
    h = 0.01
    n = model.ndof
    A, B = rm.step_derivatives(model, st, h, tau, **kw)

    def x1(x, u):
        s = euler_step(model, rm.State(x[:n], x[n:], st.t, st.jstate), h, u, **kw)
        return np.concatenate([s.q, s.qd])

    fA, fB = _fd(x1, _x(st), tau, n)
    assert rel(A, fA) < FD_REL and rel(B, fB) < FD_REL
    if kw:
        return
    # complex step of the dense RedMax equations (exact to rounding)
    x = _x(st)
    assert rel(_dense_step(model, x, tau, st.t + h, h, st.jstate), x1(x, tau)) < 1e-11
    cA = np.stack([_dense_step(model, x + 1j * CS_STEP * e, tau, st.t + h, h, st.jstate).imag / CS_STEP
                   for e in np.eye(2 * n)], axis=1)
    cB = np.stack([_dense_step(model, x.astype(complex), tau + 1j * CS_STEP * e, st.t + h, h, st.jstate).imag
                   / CS_STEP for e in np.eye(n)], axis=1)
    # both sides solve with the step matrix: rounding grows with its condition number
    tol = max(CS_REL, COND_REL * np.linalg.cond(linearized_step(model, st, h, tau).dense()))
    assert rel(A, cA) < tol and rel(B, cB) < tol


def test_implicit_coriolis_matrix_is_the_rnea_velocity_derivative():
    """The step's Cv (main's exact bias Jacobian) equals IDSVA's dtau/dqd: the two agree on c(q, qd)."""
    model = MODELS[3]
    st, tau = _start(model, 7)
    ls = linearized_step(model, st, 0.01, tau, coriolis="implicit")
    _, Tv = rm.rnea_derivatives(model, st.q, st.qd, np.zeros(model.ndof), jstate=st.jstate)
    assert rel(ls.Cv, Tv) < 1e-12


def _python_spring_model():
    rng = np.random.default_rng(5)
    b = rm.ModelBuilder("python-spring", (0.0, 0.0, -9.81))
    for k in range(4):
        b.add_body(f"b{k}", rm.Cuboid(1.0, 0.3, 0.2), rm.Revolute(rng.normal(size=3)),
                   parent=f"b{k - 1}" if k else None, joint_placement=random_placement(rng, 0.5))
    b.add_force(fc.GenericSpring(("b0", (0.1, 0.0, 0.0)), ("b3", (0.0, 0.1, 0.0)),
                                 lambda L, Ld: 20.0 * (L - 0.2) + 0.5 * Ld, lambda L, Ld: 20.0, lambda L, Ld: 0.5,
                                 name="py", stiffness="full"))
    return b.build()


def test_python_law_force_and_legacy_markers():
    """A Python-law force (no compiled kernel) goes through the same path; Coriolis(damping=True) in a force
    list means coriolis="implicit" as in the simulator."""
    model = _python_spring_model()
    n = model.ndof
    st, tau = _start(model, 11)
    h = 0.01
    for kw in ({}, {"symmetrize": True}):
        A, B = rm.step_derivatives(model, st, h, tau, **kw)

        def x1(x, u, kw=kw):
            s = euler_step(model, rm.State(x[:n], x[n:], st.t, st.jstate), h, u, **kw)
            return np.concatenate([s.q, s.qd])

        fA, fB = _fd(x1, _x(st), tau, n)
        assert rel(A, fA) < FD_REL and rel(B, fB) < FD_REL
    with pytest.warns(DeprecationWarning):
        A1, _ = rm.step_derivatives(model, st, h, tau, forces=[fc.Coriolis(damping=True)])
    A2, _ = rm.step_derivatives(model, st, h, tau, forces=[], coriolis="implicit")
    assert rel(A1, A2) < 1e-14 and rel(A1, rm.step_derivatives(model, st, h, tau, forces=[])[0]) > 1e-8


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_semi_implicit_step_derivatives(model):
    st, tau = _start(model, model.ndof + 1)
    n = model.ndof
    h = 0.02
    A, B = rm.step_derivatives(model, st, h, tau, scheme="semi_implicit")

    def x1_of(x, u):  # qd1 = qd + h aba(q, qd, tau + f), every force explicit, from the dense RedMax forces
        q, qd = x[:n], x[n:]
        sys = redmax_system(model, q, qd, st.t + h, st.jstate, tau=u)
        f = sys.J.T @ sys.terms.fm_body(sys.kin).reshape(-1) + sys.terms.fr
        v = qd + h * rm.aba(model, q, qd, u + f, jstate=st.jstate)
        return np.concatenate([q + h * v, v])

    x = _x(st)
    s1 = step(model, st, h, tau, "semi_implicit")
    assert rel(x1_of(x, tau), np.concatenate([s1.q, s1.qd])) < 1e-12
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
    with pytest.raises(rm.SimulationError, match="coriolis"):
        rm.step_derivatives(m, (z, z), 0.01, z, coriolis="semi")
    b = rm.ModelBuilder("ball", (0, 0, -9.81))
    b.add_body("b", rm.Cuboid(1, 1, 1), rm.SphericalExp(), q=(5.0, 0.0, 0.0))
    mb = b.build()
    with pytest.raises(rm.SimulationError, match="re-parameterised"):
        rm.step_derivatives(mb, (mb.q0, np.zeros(3)), 0.01, np.zeros(3))
    b = rm.ModelBuilder("euler", (0, 0, -9.81))
    b.add_body("b", rm.Cuboid(1, 1, 1), rm.SphericalEuler())
    me = b.build()
    with pytest.raises(rm.ModelError, match="jstate"):
        rm.step_derivatives(me, (me.q0, np.zeros(3)), 0.01, np.zeros(3))
