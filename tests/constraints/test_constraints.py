"""Constrained simulation (issue 12): reactions, loops and equalities, limits and contact, QP optimality, ODE
against Euler, and the constraint scenes."""

import numpy as np
import pytest

import redmax as rm
from redmax import constraints as cs
from redmax.errors import SimulationError
from redmax.spatial import trans

from tolerances import CONSTRAINT_VIOLATION_REL, ENERGY_DOP853_REL, QP_KKT, rel

CLOSURES = ("loop", "point", "weld", "universal", "joint_ratio", "linear")


def _chain(n=3, gravity=(0, 0, -980.0), **kw):
    b = rm.ModelBuilder("chain", gravity)
    prev = None
    for k in range(n):
        prev = b.add_body(f"b{k + 1}", rm.Cuboid(10, 1, 1), rm.Revolute((0, 1, 0)), parent=prev, joint_name=f"j{k + 1}",
                          joint_placement=None if k == 0 else trans(10, 0, 0), body_placement=trans(5, 0, 0), **kw)
    return b


def _prescribed_chain():
    """A 3-link chain, joint 1 prescribed; joint 1 also carries a spring, damping and an input torque (which must
    not show in its required torque) and the other joints springs (which do not act on row 1)."""
    b = _chain(3, stiffness=300.0, joint_damping=20.0)
    b.set_torque("j1", [500.0])
    profile = cs.Sinusoid(0.8, 0.7, 0.1, 0.05)
    x, xd, _ = profile.evaluate(0.0)
    b.set_state("j1", q=x, qd=xd)  # a consistent start
    b.add_constraint(cs.PrescribedJoint("j1", profile, name="drive"))
    return b.build()


@pytest.mark.parametrize("path", ["compiled", "python"])
def test_prescribed_joint_reaction_is_the_rnea_torque_of_the_realised_motion_euler(path):
    m = _prescribed_chain()
    h = 1e-2
    r = rm.simulate(m, dt=h, duration=0.6, constraint_solver="auto" if path == "compiled" else "qp")
    assert r.meta["compiled"] == (path == "compiled")
    tq = r.reactions["drive"]
    assert np.all(tq[0] == 0.0)
    for k in range(r.t.size - 1):
        qdd = (r.qdot[k + 1] - r.qdot[k]) / h
        want = rm.rnea(m, r.q[k], r.qdot[k], qdd)[0]
        assert abs(tq[k + 1, 0] - want) <= 1e-9 * max(1.0, abs(want)), k


@pytest.mark.parametrize("method", ["redmax", "recursive"])
def test_prescribed_joint_reaction_is_the_rnea_torque_of_the_realised_motion_ode(method):
    from redmax.integrators.ode_constrained import constrained_accelerations

    m = _prescribed_chain()
    r = rm.simulate(m, integrator="dop853", dt=0.05, duration=0.5, method=method, rtol=1e-9, atol=1e-9)
    for k in range(1, r.t.size):
        qdd = constrained_accelerations(m, r.q[k], r.qdot[k], r.t[k], r.jstate[k], method=method)
        want = rm.rnea(m, r.q[k], r.qdot[k], qdd)[0]
        assert abs(r.reactions["drive"][k, 0] - want) <= 1e-9 * max(1.0, abs(want))
    # the prescribed joint follows q* with the acceleration-level Baumgarte law from a consistent start
    x = np.array([m.constraints[0].profile.evaluate(t)[0][0] for t in r.t])
    assert np.abs(r.q[:, 0] - x).max() < 1e-6


def test_recursive_and_redmax_ode_methods_agree_with_constraints():
    s = rm.scenes.load("reference/20")
    a = s.simulate(integrator="dop853", duration=2.0, method="redmax", rtol=1e-10, atol=1e-10)
    b = s.simulate(integrator="dop853", duration=2.0, method="recursive", rtol=1e-10, atol=1e-10)
    assert rel(b.q, a.q) < 1e-7
    for name in a.reactions:
        assert rel(b.reactions[name], a.reactions[name], 1.0) < 1e-6, name


def test_gears_keep_q4_equal_to_minus_q2():
    r = rm.scenes.load("reference/34").simulate()
    m = r.meta
    names = rm.scenes.load("reference/34").model.dof_names
    q2, q4 = r.q[:, names.index("j2")], r.q[:, names.index("j4")]
    assert np.abs(q4 + q2).max() < 1e-10
    assert np.abs(q2).max() > 0.1 and m["compiled"]  # the gears turn


def _size(model) -> float:
    _, E = rm.forward_kinematics(model, model.q0, model.jstate0)
    p = E[:, :3, 3]
    return float(np.linalg.norm(p.max(axis=0) - p.min(axis=0)))


def _closure_violation(s, r) -> float:
    return max(np.abs(r.constraint_violation[c.name]).max() for c in s.model.constraints if c.type in CLOSURES)


@pytest.mark.parametrize("name", ["reference/04", "reference/07", "reference/08", "reference/34"])
def test_loop_and_equality_violation_stays_below_1e3_of_the_model_size(name):
    s = rm.scenes.load(name)
    assert _closure_violation(s, s.simulate()) < CONSTRAINT_VIOLATION_REL * _size(s.model)


@pytest.mark.parametrize("name", ["reference/15", "reference/32"])
def test_fast_loops_drift_first_order_in_h(name):
    """Velocity-level Baumgarte lets a loop drift by O(h v^2 / (beta R)) per unit time; on the two fast
    mechanisms (a slider reaching 70 cm/s, a crank at 4 pi rad/s) that is ~1e-2 of the size at the reference
    step (as in the original) and shrinks in proportion to h."""
    s = rm.scenes.load(name)
    v1 = _closure_violation(s, s.simulate())
    v4 = _closure_violation(s, s.simulate(dt=s.dt / 4))
    assert v1 < 1e-2 * _size(s.model)
    assert v4 < 0.3 * v1


def test_conservative_loop_scene_keeps_its_energy_under_dop853():
    r = rm.scenes.load("reference/04").simulate(integrator="dop853", rtol=1e-10, atol=1e-10)
    E = r.energy["total"]
    scale = max(np.abs(r.energy["kinetic"]).max(), np.abs(r.energy["gravity"] - r.energy["gravity"][0]).max())
    assert np.abs(E - E[0]).max() < ENERGY_DOP853_REL * scale
    assert np.abs(r.constraint_violation["loop"]).max() < 1e-6


def test_joint_limit_overshoot_is_at_most_one_step_of_travel():
    s = rm.scenes.load("reference/06")
    r = s.simulate()
    q2, v2 = r.q[:, 1], r.qdot[:, 1]
    lim = np.pi / 4
    travel = s.dt * np.abs(v2).max()
    assert np.abs(q2).max() > lim - 1e-3  # the limit is reached
    assert np.abs(q2).max() <= lim + travel
    # entering: at most that step's travel past the limit; then pushed back at rate beta times the violation
    over = np.abs(q2) - lim
    for k in range(1, r.t.size):
        if over[k] > 0 and over[k - 1] <= 0:
            assert over[k] <= s.dt * abs(v2[k]) + 1e-12
        elif over[k] > 0:
            assert over[k] <= (1 - s.dt * s.baumgarte) * over[k - 1] + 1e-12
    assert np.abs(r.constraint_violation["limit_J2"]).max() <= travel


def _ball_on_plane(normal=(0.0, 0.0, 1.0)):
    b = rm.ModelBuilder("ball", (0, 0, -980.0))
    b.add_body("ball", rm.Sphere(1.0), rm.Translational(), joint_name="free", q=[0.0, 0.0, 6.0], qd=[30.0, 0.0, 0.0])
    b.add_constraint(cs.Floor("ball", radius=1.0, origin=(0, 0, 0), normal=normal, name="floor"))
    return b.build()


def test_a_ball_dropped_on_a_plane_comes_to_rest_without_penetrating():
    m = _ball_on_plane()
    h = 1e-2
    r = rm.simulate(m, dt=h, duration=3.0)
    z, vz = r.q[:, 2], r.qdot[:, 2]
    travel = h * np.abs(vz).max()
    assert z.min() >= 1.0 - travel
    # at rest on the plane (the Baumgarte push-back decays as (1 - h beta)^k; no friction: it slides on)
    assert abs(vz[-1]) < 1e-6 * np.abs(vz).max() and abs(z[-1] - 1.0) < 1e-5
    assert r.qdot[-1, 0] == pytest.approx(30.0, rel=1e-12)
    assert r.reactions["floor"][-1, 5] == pytest.approx(m.mass[0] * 980.0, rel=1e-3)  # the floor carries the weight


def test_box_corners_rest_on_a_tilted_plane_as_a_constrained_slide():
    b = rm.ModelBuilder("box", (0, 0, -980.0))
    corners = [(sx, sy, -0.5) for sx in (-1, 1) for sy in (-1, 1)]
    b.add_body("box", rm.Cuboid(2, 2, 1), rm.Translational(), joint_name="slide", q=[0, 0, 2.0])
    n = np.array([0.0, 0.2, 1.0]) / np.linalg.norm([0.0, 0.2, 1.0])
    b.add_constraint(cs.Floor("box", corners=corners, normal=n, name="floor"))
    m = b.build()
    r = rm.simulate(m, dt=1e-2, duration=1.5)
    # frictionless: once down, the box slides along the plane with the tangential component of gravity
    a = (r.qdot[-1] - r.qdot[-2]) / 1e-2
    g = np.array([0, 0, -980.0])
    assert rel(a - (a @ n) * n, g - (g @ n) * n) < 1e-12
    assert abs(r.qdot[-1] @ n) < 1e-3 and np.abs(r.constraint_violation["floor"][-1]).max() < 1e-3


def test_qp_of_a_step_satisfies_its_kkt_conditions():
    from redmax.integrators.constrained import constrained_step
    from redmax.solvers.constrained import QPSolver
    from redmax.solvers.linear import DenseSolver

    b = _chain(3, q=None)
    b.add_constraint(cs.Limit("j2", -0.1, 0.1, name="lim2"))
    b.add_constraint(cs.Limit("j3", -0.2, 0.05, name="lim3"))
    b.add_constraint(cs.JointRatio(["j1", "j3"], 0.5, name="ratio"))
    b.set_state("j2", q=[0.15], qd=[3.0])
    b.set_state("j3", q=[0.06], qd=[-1.0])
    m = b.build()
    st = m.initial_state()
    step = rm.linearized_step(m, st, 1e-2)
    x, rows, lam, _, act = constrained_step(m, step, 5.0, QPSolver(), DenseSolver())
    A, bb = step.dense(), step.b
    use = rows.kind <= 1
    G, r = rows.G[use], (-rows.gd - 5.0 * rows.g)[use]
    mu = lam[use]
    ineq = rows.kind[use] == 1
    assert act.size == 2
    assert rel(A @ x - bb + G.T @ mu, np.zeros_like(bb), np.abs(bb).max()) < QP_KKT  # stationarity
    assert np.abs(G[~ineq] @ x - r[~ineq]).max() < QP_KKT * max(1.0, np.abs(r).max())
    assert (G[ineq] @ x - r[ineq]).max() < QP_KKT * max(1.0, np.abs(r).max())  # primal feasibility
    assert mu[ineq].min() >= -QP_KKT * max(1.0, np.abs(mu).max())  # dual feasibility
    assert np.abs(mu[ineq] * (r[ineq] - G[ineq] @ x)).max() < QP_KKT * max(1.0, np.abs(mu).max())  # complementarity


@pytest.mark.slow
@pytest.mark.parametrize("name", ["reference/09", "reference/13", "reference/20"])
def test_ode_and_euler_paths_agree_as_h_goes_to_zero(name):
    s = rm.scenes.load(name)
    ode = s.simulate(integrator="dop853", rtol=1e-10, atol=1e-10)
    e1 = s.simulate()
    e8 = s.simulate(dt=s.dt / 8)
    assert abs(e8.H - ode.H) < abs(e1.H - ode.H)


def test_an_infeasible_qp_names_the_step_the_time_and_the_constraints():
    b = _chain(2)
    b.add_constraint(cs.Limit("j2", upper=0.05, name="limit_J2"))
    b.add_constraint(cs.PrescribedJoint("j2", cs.Constant(0.5), name="drive_J2"))
    m = b.build()
    with pytest.raises(SimulationError, match=r"step \d+ \(t = [0-9.]+\): QP infeasible: .*limit_J2.*drive_J2"):
        rm.simulate(m, dt=1e-2, duration=1.0)


def test_kkt_solver_refuses_active_inequalities_and_unknown_solvers():
    m = _ball_on_plane()
    with pytest.raises(SimulationError, match="inequality constraints need constraint_solver"):
        rm.simulate(m, dt=1e-2, duration=0.1, constraint_solver="kkt")
    with pytest.raises(SimulationError, match="unknown constraint solver"):
        rm.simulate(m, dt=1e-2, duration=0.1, constraint_solver="nope")


def test_redundant_rows_are_dropped_not_fatal():
    """A ball-socket closure of a planar loop repeats a zero row (the out-of-plane direction)."""
    from redmax.scenes.reference import loop_mechanism_04

    b = rm.ModelBuilder("r04-point", (0, 0, -980.0))
    loop_mechanism_04(b)
    b.add_constraint(cs.Point([("b3", (0.0, 0.0, -5.0)), ("b4", (10.0, 0.0, 0.0))], name="point"))
    m = b.build()
    a = rm.simulate(m, dt=1e-2, duration=1.0)
    ref = rm.scenes.load("reference/04").simulate(duration=1.0)
    assert rel(a.q, ref.q) < 1e-9


@pytest.mark.parametrize("inequalities", [False, True])
def test_reported_reactions_applied_as_forces_reproduce_the_constrained_step(inequalities):
    """Independent check of the reactions' frames, points and signs: the constrained step solves
    ``A qd1 = b - G^T lam``, so applying every reported reaction as a generalized force (body wrenches through the
    body Jacobian, ``J_i^T w``; joint torques on their DOFs), times h, must close ``A qd1 - b`` exactly.  Every
    constraint here acts on one body (or on coordinates only), so its reported reaction is all of its force."""
    b = rm.ModelBuilder("reactions", (0, 0, -980.0))
    b.add_body("b1", rm.Cuboid(1, 1, 10), rm.Universal(), joint_name="j1", body_placement=trans(0, 0, -5),
               q=[0.3, 0.2], qd=[1.0, -0.5])
    b.add_body("b2", rm.Cuboid(1, 1, 10), rm.Universal(), parent="b1", joint_name="j2",
               joint_placement=trans(0, 0, -10), body_placement=trans(0, 0, -5), q=[-0.2, 0.4], qd=[0.5, 2.0])
    b.add_body("b3", rm.Cuboid(8, 1, 1), rm.Revolute((0, 1, 0)), parent="b1", joint_name="j3",
               joint_placement=trans(0, 0, -10), body_placement=trans(4, 0, 0), q=[0.12], qd=[3.0])
    b.add_body("ball", rm.Sphere(1.0), rm.Translational(), joint_name="jb", joint_placement=trans(30, 0, 0),
               q=[0.0, 0.0, 0.95], qd=[1.0, 0.5, -20.0])
    m0 = b.build()
    _, E = rm.forward_kinematics(m0, m0.q0)
    tip = E[1, :3, :3] @ np.array([0.0, 0.0, -5.0]) + E[1, :3, 3]
    b.add_constraint(cs.Point([("b2", (0.0, 0.0, -5.0)), ("world", tip)], name="hold"))
    b.add_constraint(cs.PrescribedBody("ball", ["vx", "vy"], linear=cs.Sinusoid([2.0, 1.0, 0.0], 0.5), name="push"))
    if inequalities:
        b.add_constraint(cs.Limit("j3", -0.1, 0.1, name="lim3"))
        b.add_constraint(cs.Floor("ball", radius=1.0, normal=(0.1, 0.0, 1.0), name="floor"))
    m = b.build()
    h = 1e-2
    r = rm.simulate(m, dt=h, duration=0.1)
    assert r.meta["compiled"] == (not inequalities)  # equalities only: the compiled KKT loop; else the QP path
    for k in range(r.t.size - 1):
        st = rm.State(r.q[k], r.qdot[k], r.t[k])
        step = rm.linearized_step(m, st, h)
        lhs = step.dense() @ r.qdot[k + 1] - step.b
        J, _ = rm.jacobian(m, r.q[k], r.qdot[k])
        rhs = np.zeros(m.ndof)
        for c in m.constraints:
            w = r.reactions[c.name][k + 1]
            if c.family == "maximal":
                i = m.body_names.index(c.react_labels[0].split(".")[0])
                rhs += h * J[6 * i : 6 * i + 6].T @ w
            else:
                rhs[c.dofs] += h * w
        assert rel(lhs, rhs, np.abs(step.b).max()) < 1e-10, k
    active = {c.name: np.abs(r.reactions[c.name][1:]).max() > 0 for c in m.constraints}
    assert all(active.values()), active


def test_recursive_hybrid_dynamics_is_the_dense_kkt_solve_and_follows_the_baumgarte_law():
    """At random states of a tree with two prescribed joints (one a root, one inside the tree) and a ratio row,
    the O(n) hybrid dynamics of ``method="recursive"`` equals the dense RedMax KKT solve, reactions included, and
    every prescribed joint obeys ``qdd = qdd* + 2 b1 (qd* - qd) + b2^2 (q* - q)`` exactly."""
    from redmax.integrators.ode_constrained import constrained_accelerations

    b = _chain(4, stiffness=200.0, joint_damping=5.0)
    b.add_body("side", rm.Cuboid(1, 1, 6), rm.Universal(), parent="b2", joint_name="js",
               joint_placement=trans(5, 0, 0), body_placement=trans(0, 0, -3))
    p1, p3 = cs.Sinusoid(0.7, 0.4, 0.2, 0.1), cs.Sigmoid(7.0, 1.2, 0.0, 3.0)
    b.add_constraint(cs.PrescribedJoint("j1", p1, name="d1"))
    b.add_constraint(cs.PrescribedJoint("j3", p3, name="d3"))
    b.add_constraint(cs.JointRatio(["j2", "j4"], -0.5, name="gear"))
    b.set_torque("j3", [300.0])
    m = b.build()
    rng = np.random.default_rng(11)
    b1, b2 = 3.0, 4.0
    for _ in range(3):
        q, qd, t = rng.uniform(-1, 1, m.ndof), rng.normal(size=m.ndof), rng.uniform(0.1, 2.9)
        a, ra = constrained_accelerations(m, q, qd, t, None, method="redmax", baumgarte_acc=(b1, b2),
                                          want_reactions=True)
        c, rc = constrained_accelerations(m, q, qd, t, None, method="recursive", baumgarte_acc=(b1, b2),
                                          want_reactions=True)
        assert rel(c, a, 1.0) < 1e-10 and rel(rc, ra, 1.0) < 1e-9
        for j, p in (("j1", p1), ("j3", p3)):
            d = m.dof_names.index(j)
            x, xd, xdd = (np.asarray(v, float)[0] for v in p.evaluate(t))
            assert a[d] == pytest.approx(xdd + 2 * b1 * (xd - qd[d]) + b2 * b2 * (x - q[d]), rel=1e-10, abs=1e-9)
        k = m.dof_names.index
        assert a[k("j4")] == pytest.approx(-0.5 * a[k("j2")] - 2 * b1 * (qd[k("j4")] + 0.5 * qd[k("j2")])
                                           - b2 * b2 * (q[k("j4")] + 0.5 * q[k("j2")]), rel=1e-9, abs=1e-9)
