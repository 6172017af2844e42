"""The linearised Euler step: its matrix and right-hand side against the dense RedMax equations, the O(n)
products, the compiled loop against the stage-by-stage path, and the velocity Jacobian of the bias."""

import numpy as np
import pytest

import redmax as rm
from redmax import forces as fc
from redmax._kernels.workspace import work_offsets
from redmax.dynamics import redmax_system
from redmax.integrators import StepOptions, linearized_step
from redmax.integrators._velocity import bias_velocity_jacobian
from redmax.kinematics import jacobian, kinematics
from redmax.solvers import DenseSolver
from redmax.spatial import Ad, trans
from redmax.testing.models import random_model, random_state

from tolerances import STEP_REL, rel


def _forced_chain(n=5, seed=0, gravity=(0, 0, -9.81)):
    """A chain with every compiled force kind: springs (symmetric and full), a spring-damper, a cable, ground
    contact, a world force, joint limits, joint springs and damping, body damping."""
    rng = np.random.default_rng(seed)
    b = rm.ModelBuilder("forced", gravity=gravity)
    names = []
    for k in range(n):
        j = rm.Revolute((0, 1, 0) if k % 2 == 0 else (0, 0, 1))
        names.append(b.add_body(f"l{k}", rm.Cuboid(0.4, 0.1, 0.1), j, parent=names[-1] if names else None,
                                joint_placement=None if k == 0 else trans(0.4, 0, 0), body_placement=trans(0.2, 0, 0),
                                q=[0.3 * rng.normal()], qd=[rng.normal()], stiffness=2.0, joint_damping=0.3,
                                damping=0.05))
    b.add_force(fc.PointSpring(("l0", (0.1, 0, 0)), ("l3", (0, 0.05, 0)), ks=40.0, kd=0.5, stiffness="symmetric",
                               name="s1"))
    b.add_force(fc.PointSpring((None, (0.3, 0.2, 0.1)), ("l4", (0.1, 0, 0)), ks=30.0, name="s2", stiffness="full"))
    b.add_force(fc.SpringDamper(("l1", (0, 0, 0.05)), ("l4", (0, 0.05, 0)), k=50.0, d=2.0, name="sd",
                                stiffness="full"))
    b.add_force(fc.Cable([("l0", (0, 0, 0.05)), ("l2", (0, 0.05, 0)), ("l4", (0, 0, 0.05))], k=80.0, d=1.0,
                         rest_length=0.05, name="cable", stiffness="full"))
    b.add_force(fc.GroundContact([("l4", (0.2, 0.05, 0.05)), ("l3", (-0.2, 0.05, -0.05))], kn=1e3, kd=5.0, kt=20.0,
                                 mu=0.5, origin=(0, 0, 0.1), name="ground"))
    b.add_force(fc.WorldPointForce("l2", (0.1, 0, 0), (0.3, -0.2, 1.0), name="push"))
    b.add_force(fc.JointLimit("l2", -0.1, 0.1, stiffness=50.0, damping=1.0, name="lim"))
    return b.build()


def _dense_reference(model, q, qd, js, h, t_next, symmetric_only=False):
    """A and b by RedMax Eq. 2 written densely in body frames (the wave-one assembly): independent oracle."""
    kin = kinematics(model, q, qd, js)
    J, Jd = jacobian(model, q, qd, js, kin=kin)
    sys = redmax_system(model, q, qd, t_next, js, want_K=True, want_D=True, kin=kin)
    d = sys.terms.dense(kin, "body")
    A = sys.Mr + J.T @ (h * d["Dm"] - h * h * d["Km"]) @ J + h * d["Dr"] - h * h * d["Kr"]
    # right-hand side: M qd + h (J^T (f + D phi) - Mm Jdot qd) + fr + Dr qd + tau)
    T = np.zeros((6 * model.nb, 6 * model.nb))
    for i in range(model.nb):
        T[6 * i:6 * i + 6, 6 * i:6 * i + 6] = Ad(kin.E_wb[i])
    from redmax.dynamics.redmax import gravity_wrenches
    from redmax.forces.builtin import coriolis_wrenches

    fm_rhs, fr_rhs = sys.terms.rhs(kin)
    f_rhs = (T.T @ fm_rhs.reshape(-1)).reshape(-1, 6)
    fm = gravity_wrenches(model, kin) + coriolis_wrenches(model.M_body, kin.phi) + f_rhs
    qvv = sys.Mm * (Jd @ qd)
    b = sys.Mr @ qd + h * (J.T @ (fm.reshape(-1) - qvv) + fr_rhs + model.inputs.torque(t_next))
    return A, b


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_step_matrix_and_rhs_equal_the_dense_redmax_equations(seed):
    m = _forced_chain(seed=seed)
    q, qd = m.q0.copy(), m.qd0.copy()
    h = 1e-3
    step = linearized_step(m, rm.State(q, qd, 0.0, m.jstate0), h)
    A_ref, b_ref = _dense_reference(m, q, qd, m.jstate0, h, h)
    A = step.dense()
    assert rel(A, A_ref) < STEP_REL
    assert rel(step.b, b_ref) < STEP_REL
    assert not step.symmetric  # "full" stiffness modes: exact, unsymmetric K
    x = np.random.default_rng(seed).normal(size=m.ndof)
    assert rel(step.apply(x), A @ x) < STEP_REL


def test_symmetric_options_give_a_symmetric_matrix_and_cholesky():
    m = _forced_chain(seed=3)
    step = linearized_step(m, m.initial_state(), 1e-3, symmetrize=True)
    A = step.dense()
    assert step.symmetric and np.abs(A - A.T).max() < STEP_REL * np.abs(A).max()
    A_ref, _ = _dense_reference(m, m.q0, m.qd0, m.jstate0, 1e-3, 1e-3)
    assert not np.allclose(A, A_ref)  # the symmetrised stiffness differs from the exact one
    assert np.all(np.linalg.eigvalsh(0.5 * (A + A.T)) > 0)


_KINDS = {"chain": {}, "tree": {"topology": "random", "joints": "multi"}, "mixed": {"joints": "mixed", "n": 12},
          "floating": {"topology": "binary", "floating": True, "joints": "revprism"}}


def _random(kind, seed):
    rng = np.random.default_rng(seed)
    kw = dict(_KINDS[kind])
    m = random_model(rng, n=kw.pop("n", 7), **kw)
    q, qd = random_state(rng, m)
    return rng, m, q, qd


@pytest.mark.parametrize("kind", ["chain", "tree", "mixed", "floating"])
def test_products_J_JT_M_without_forming_J(kind):
    rng, m, q, qd = _random(kind, 5)
    q, qd = random_state(rng, m)
    step = linearized_step(m, rm.State(q, qd, 0.0, m.jstate0), 1e-2, forces=[])
    kin = kinematics(m, step.q, step.qd, step.jstate)
    J, _ = jacobian(m, step.q, step.qd, step.jstate, kin=kin)
    T = np.zeros((6 * m.nb, 6 * m.nb))
    for i in range(m.nb):
        T[6 * i:6 * i + 6, 6 * i:6 * i + 6] = Ad(kin.E_wb[i])
    Jw = T @ J  # world twists at the origin
    x = rng.normal(size=m.ndof)
    y = rng.normal(size=(m.nb, 6))
    assert rel(step.J(x).reshape(-1), Jw @ x) < STEP_REL
    assert rel(step.JT(y), Jw.T @ y.reshape(-1)) < STEP_REL
    assert rel(step.M(x), rm.crba(m, step.q, step.jstate) @ x) < STEP_REL


def test_preconditioner_blocks():
    m = _forced_chain(seed=4)
    step = linearized_step(m, m.initial_state(), 1e-3)
    Bd = step.body_blocks()
    for i in range(m.nb):
        expect = sum((blk for (a, c), blk in zip(step.bpair, step.bB, strict=True) if a == c == i), np.zeros((6, 6)))
        assert np.allclose(Bd[i], expect)
    jb = step.joint_blocks()
    h = step.h
    for i in range(m.nb):
        k = m.idx[i]
        # joint spring 2, damping 0.3 on every joint (plus the limit on l2 only when violated)
        assert jb[i].shape == (1, 1) and jb[i][0, 0] >= h * 0.3 + h * h * 2.0 - 1e-15
        assert abs(step.rdiag[k] - jb[i][0, 0]) < 1e-15


def test_maximal_blocks_are_block_sparse():
    """A 100-link chain with 98 springs: each spring contributes 4 blocks of 6x6, never (6nb)^2."""
    b = rm.ModelBuilder("chain", gravity=(0, 0, -9.81))
    prev = None
    for k in range(100):
        prev = b.add_body(f"l{k}", rm.Cuboid(0.1, 0.02, 0.02), rm.Revolute((0, 1, 0) if k % 2 else (0, 0, 1)),
                          parent=prev, joint_placement=None if k == 0 else trans(0.1, 0, 0),
                          body_placement=trans(0.05, 0, 0))
    for k in range(2, 100):
        b.add_force(fc.PointSpring((f"l{k - 2}", (0, 0, 0)), (f"l{k}", (-0.15, 0, 0)), ks=100.0, name=f"s{k}"))
    m = b.build()
    out = m.forces[0].evaluate(m, kinematics(m, m.q0, m.qd0), 0.0)
    assert out.K.blocks.shape == (4, 6, 6) and out.D.blocks.shape == (0, 6, 6)  # no damping: no D blocks
    step = linearized_step(m, m.initial_state(), 1e-3)
    assert step.bB.shape == (4 * 98, 6, 6)


class _PythonDense(DenseSolver):
    name = "dense-python"
    compiled = False


@pytest.mark.parametrize("coriolis", ["explicit", "implicit"])
def test_compiled_loop_equals_the_stage_by_stage_path(coriolis):
    m = _forced_chain(seed=6)
    r1 = rm.simulate(m, integrator="euler", dt=2e-3, duration=0.2, coriolis=coriolis)
    r2 = rm.simulate(m, integrator="euler", dt=2e-3, duration=0.2, coriolis=coriolis, solver=_PythonDense())
    assert r1.meta["compiled"] and not r2.meta["compiled"]
    assert np.abs(r1.q - r2.q).max() < STEP_REL and np.abs(r1.qdot - r2.qdot).max() < 1e-10
    for k in r1.energy:
        assert rel(r1.energy[k], r2.energy[k]) < STEP_REL


def test_python_law_shares_the_mapping():
    """A GenericSpring with the spring-damper's tension gives the compiled SpringDamper's trajectory."""
    def build(generic):
        b = rm.ModelBuilder("gs", gravity=(0, 0, -9.81))
        b.add_body("a", rm.Cuboid(0.4, 0.1, 0.1), rm.Revolute((0, 1, 0)), body_placement=trans(0.2, 0, 0), q=[0.3])
        b.add_body("b", rm.Cuboid(0.4, 0.1, 0.1), rm.Revolute((0, 0, 1)), parent="a", joint_placement=trans(0.4, 0, 0),
                   body_placement=trans(0.2, 0, 0), qd=[1.0])
        p0, p1, k, d, L = (None, (0.1, 0.2, 0.0)), ("b", (0.1, 0, 0)), 300.0, 3.0, 0.2
        if generic:
            b.add_force(fc.GenericSpring(p0, p1, lambda l, ld: k * (l - L) / L + d * ld / L, lambda l, ld: k / L,
                                         lambda l, ld: d / L, potential=lambda l: 0.5 * k * ((l - L) / L) ** 2 * L))
        else:
            b.add_force(fc.SpringDamper(p0, p1, k=k, d=d, rest_length=L))
        return b.build()

    r1 = rm.simulate(build(False), integrator="euler", dt=1e-3, duration=0.3)
    r2 = rm.simulate(build(True), integrator="euler", dt=1e-3, duration=0.3)
    assert r1.meta["compiled"] and not r2.meta["compiled"]
    assert np.abs(r1.q - r2.q).max() < STEP_REL
    assert rel(r1.energy["total"], r2.energy["total"]) < STEP_REL


@pytest.mark.parametrize("kind", ["chain", "tree", "mixed", "floating"])
def test_bias_velocity_jacobian_equals_central_differences(kind):
    """dc/dqd by the O(n d) recursion against central differences of RNEA's velocity terms (quadratic in qd, so
    the central difference is exact up to rounding)."""
    _, m, q, qd = _random(kind, 11)
    js = m.jstate0
    Ii, Ff = m.packed
    W = np.zeros(work_offsets(m.nb, m.ndof).size)
    from redmax.integrators._stages import kinematics_stage

    kinematics_stage(Ii, Ff, q, qd, js, W)
    C = np.zeros((m.ndof, m.ndof))
    bias_velocity_jacobian(Ii, Ff, W, q, qd, js, C)
    z = np.zeros(m.ndof)
    e = 1e-3
    C_fd = np.array([(rm.rnea(m, q, qd + e * ek, z, jstate=js, gravity=False)
                      - rm.rnea(m, q, qd - e * ek, z, jstate=js, gravity=False)) / (2 * e) for ek in np.eye(m.ndof)]).T
    assert rel(C, C_fd) < 1e-8


def test_implicit_coriolis_step_uses_the_exact_derivative():
    """With coriolis='implicit' A gains h dc/dqd and b gains h dc/dqd qd (MuJoCo's implicit)."""
    m = _forced_chain(seed=8)
    s0 = linearized_step(m, m.initial_state(), 1e-3)
    s1 = linearized_step(m, m.initial_state(), 1e-3, coriolis="implicit")
    C = s1.Cv
    assert rel(s1.dense() - s0.dense(), 1e-3 * C) < STEP_REL
    assert rel(s1.b - s0.b, 1e-3 * C @ s0.qd) < STEP_REL


def test_step_options_are_validated():
    with pytest.raises(rm.SimulationError, match="coriolis"):
        StepOptions(coriolis="semi")
    m = _forced_chain(seed=1)
    with pytest.raises(rm.SimulationError, match="unknown linear solver"):
        rm.simulate(m, integrator="euler", dt=1e-3, duration=0.01, solver="pcg-not-yet")

