"""Integrators: energy conservation (DOP853), RedMax vs recursive trajectories, the linearly implicit
Euler formula and conventions of the reference, convergence, and re-parameterisation/chart switching."""

import numpy as np
import pytest

from redmax import dynamics as dyn
from redmax import kinematics as kn
from redmax.bodies import Cuboid
from redmax.builder import ModelBuilder
from redmax.errors import SimulationError
from redmax.forces import model_forces
from redmax.integrators import euler_step, simulate
from redmax.joints import Revolute, SphericalEuler, SphericalExp, euler_angles
from redmax.model import State
from redmax.scenes import load
from redmax.spatial import exp_so3, right_jacobian_so3, rot_x, trans

from tolerances import ENERGY_DOP853_REL

CONSERVATIVE = ["reference/-1", "reference/00", "reference/01", "reference/02", "reference/03", "reference/14",
                "reference/16", "reference/17", "reference/18", "reference/19", "reference/21", "reference/22",
                "reference/25", "reference/26", "reference/35"]


def energy_drift(res) -> float:
    e = res.energy
    V = e["total"] - e["kinetic"]
    scale = e["kinetic"].max() + np.abs(V - V[0]).max()
    return float(np.abs(e["total"] - e["total"][0]).max() / scale)


@pytest.mark.parametrize("name", CONSERVATIVE)
def test_dop853_conserves_energy(name):
    res = load(name).simulate("dop853", rtol=1e-10, atol=1e-10)
    assert set(res.energy) >= {"kinetic", "gravity", "joint_springs", "springs", "total"}
    assert res.energy["kinetic"].max() > 0.0
    assert energy_drift(res) < ENERGY_DOP853_REL
    if name in ("reference/03", "reference/18"):  # exponential coordinates pass |q| = 1.5 pi
        assert res.meta["reparameterizations"] >= 1


@pytest.mark.parametrize("name", ["reference/03", "reference/05", "reference/11", "reference/22"])
def test_redmax_and_recursive_trajectories_agree(name):
    s = load(name)
    a = s.simulate("dop853", duration=1.0, rtol=1e-11, atol=1e-11, method="redmax")
    b = s.simulate("dop853", duration=1.0, rtol=1e-11, atol=1e-11, method="recursive")
    assert np.abs(a.q - b.q).max() < 1e-7 * max(1.0, np.abs(a.q).max())


def test_rk45_runs_and_agrees_with_dop853():
    s = load("reference/01")
    a = s.simulate("rk45", duration=0.5, rtol=1e-10, atol=1e-10)
    b = s.simulate("dop853", duration=0.5, rtol=1e-10, atol=1e-10)
    assert np.abs(a.q - b.q).max() < 1e-6


def _two_link(damping=0.0, joint_damping=0.0, stiffness=0.0):
    b = ModelBuilder("two", (0, 0, -980))
    b.add_body("l1", Cuboid(10, 1, 1), Revolute((0, 1, 0)), joint_name="j1", body_placement=trans(5, 0, 0),
               q=[0.4], qd=[1.0], damping=damping, stiffness=stiffness, joint_damping=joint_damping)
    b.add_body("l2", Cuboid(10, 1, 1), Revolute((0, 1, 0)), parent="l1", joint_name="j2",
               joint_placement=trans(10, 0, 0), body_placement=trans(5, 0, 0), q=[0.7], qd=[-2.0], damping=damping,
               stiffness=stiffness, joint_damping=joint_damping)
    return b.build()


def test_euler_step_is_redmax_eq2_with_implicit_damping_and_stiffness():
    """One step equals (Mr + h J^T Dm J + h Dr + h^2 k) qd1 = Mr qd0 + h (J^T (fm - Mm Jdot qd0) + fr),
    assembled here from the undamped model: damping implicit only, stiffness on both sides."""
    d, dj, k, h = 3.0, 2.0, 50.0, 0.01
    m = _two_link(d, dj, k)
    m0 = _two_link(0.0, 0.0, 0.0)
    q0, qd0 = m.q0 + np.array([0.1, -0.2]), m.qd0
    out = euler_step(m, State(q0, qd0, 0.0, m.jstate0), h, forces=model_forces(m))
    q1, qd1 = out.q, out.qd
    sys0 = dyn.redmax_system(m0, q0, qd0)
    J = sys0.J
    spring = -k * (q0 - m.q0)
    A = sys0.Mr + h * d * (J.T @ J) + h * dj * np.eye(2) + h * h * k * np.eye(2)
    rhs = sys0.Mr @ qd0 + h * (sys0.fr + spring)
    expect = np.linalg.solve(A, rhs)
    assert np.abs(qd1 - expect).max() < 1e-12 * np.abs(expect).max()
    assert np.abs(q1 - (q0 + h * qd1)).max() == 0.0


def test_inputs_are_evaluated_at_the_end_of_each_step_on_a_multiplied_grid():
    seen = []

    def torque(t):
        seen.append(t)
        return [0.0]

    b = ModelBuilder("m", (0, 0, 0))
    b.add_body("a", Cuboid(1, 1, 1), Revolute(), torque=torque)
    m = b.build()
    res = simulate(m, integrator="euler", dt=0.05, duration=1.0)
    assert len(res.t) == 21
    assert seen == [0.05 * k for k in range(1, 21)]
    assert list(res.t) == [0.05 * k for k in range(21)]


def test_reference_05_switches_torques_at_the_multiplied_times():
    """t_60 = 60 * 0.05 = 3.0000000000000004 >= 3: the step ending at t = 3 already uses the second row."""
    s = load("reference/05")
    tau = s.model.joint_torque
    assert list(tau(60 * 0.05)) == [0.0, 100.0, -100.0]
    assert list(tau(59 * 0.05)) == [0.0, 0.0, 100.0]
    res = s.simulate()
    assert res.t.size == 201 and res.t[-1] == pytest.approx(10.0)
    # torques do work: the chain starts at rest and ends moving
    assert res.energy["kinetic"][0] == 0.0 and res.energy["kinetic"][-1] > 1.0


def test_euler_converges_at_first_order():
    s = load("reference/01")
    ref = s.simulate("dop853", duration=0.2, dt=1e-3, rtol=1e-12, atol=1e-12)
    errs = []
    for h in (4e-3, 2e-3, 1e-3):
        r = s.simulate("euler", dt=h, duration=0.2)
        errs.append(np.abs(r.q[-1] - ref.q[-1]).max())
    ratios = [errs[0] / errs[1], errs[1] / errs[2]]
    assert all(1.8 < r < 2.2 for r in ratios), (errs, ratios)


def test_joint_damping_dissipates_exactly_what_it_should():
    """reference/11: Euler energy decreases monotonically; under DOP853 the energy lost equals the
    work of the joint dampers, E(0) - E(T) = int sum d qd^2 dt."""
    s = load("reference/11")
    e = s.simulate().energy["total"]
    assert np.all(np.diff(e) <= 1e-9 * e[0]) and e[-1] < e[0]
    r = s.simulate("dop853", dt=1e-3, rtol=1e-11, atol=1e-11)
    power = np.sum(s.model.joint_damping * r.qdot**2, axis=1)
    work = np.sum(0.5 * (power[1:] + power[:-1]) * np.diff(r.t))
    lost = r.energy["total"][0] - r.energy["total"][-1]
    assert lost == pytest.approx(work, rel=1e-5)
    assert r.energy["joint_springs"].max() > 0


def test_euler_reparameterises_exponential_coordinates():
    res = load("reference/18").simulate()
    rot = res.q[:, 3:6]
    assert np.linalg.norm(rot, axis=1).max() < 1.5 * np.pi + 0.05
    # the rotation is continuous even though the coordinates jump
    R = np.array([exp_so3(r) for r in rot])
    assert np.abs(np.diff(R, axis=0)).max() < 0.1


def _double_ball(kind):
    b = ModelBuilder(f"ball-{kind}", (0, 0, -980))
    R1 = rot_x(np.pi / 8)
    if kind == "euler":
        q1 = euler_angles("XYZ", R1)
        j1, j2 = SphericalEuler("XYZ"), SphericalEuler("XYZ")
        q2 = euler_angles("XYZ", rot_x(np.pi / 2))
    else:
        q1, q2 = np.array([np.pi / 8, 0, 0]), np.array([np.pi / 2, 0, 0])
        j1, j2 = SphericalExp(), SphericalExp()
    b.add_body("b1", Cuboid(1, 1, 10), j1, joint_name="j1", body_placement=trans(0, 0, -5), q=q1)
    b.add_body("b2", Cuboid(1, 1, 10), j2, parent="b1", joint_name="j2", joint_placement=trans(0, 0, -10),
               body_placement=trans(0, 0, -5), q=q2)
    return b


def test_euler_angle_and_exponential_spherical_joints_give_the_same_motion():
    """Two parameterisations of the same double pendulum; the Euler one switches charts on the way."""
    be, bx = _double_ball("euler"), _double_ball("exp")
    w = np.array([2.0, 2.0, 2.0])  # body angular velocity of joint 1 (joint frame)
    me0 = be.build()
    S1 = kn.kinematics(me0, me0.q0, None, me0.jstate0).S[:3, 0:3]
    be.set_state("j1", qd=np.linalg.solve(S1, w))
    bx.set_state("j1", qd=np.linalg.solve(right_jacobian_so3(np.array([np.pi / 8, 0, 0])), w))
    me, mx = be.build(), bx.build()
    re = simulate(me, integrator="dop853", dt=1e-2, duration=1.5, rtol=1e-11, atol=1e-11)
    rx = simulate(mx, integrator="dop853", dt=1e-2, duration=1.5, rtol=1e-11, atol=1e-11)
    assert re.meta["reparameterizations"] >= 1
    assert len(np.unique(re.jstate[:, 0])) > 1 or len(np.unique(re.jstate[:, 1])) > 1
    for k in range(0, re.t.size, 15):
        Ee = kn.forward_kinematics(me, re.q[k], re.jstate[k])[1]
        Ex = kn.forward_kinematics(mx, rx.q[k], rx.jstate[k])[1]
        assert np.abs(Ee - Ex).max() < 1e-6
    assert energy_drift(re) < ENERGY_DOP853_REL
    # linearly implicit Euler also switches charts and stays close to the exponential version
    ee = simulate(me, integrator="euler", dt=1e-4, duration=0.3)
    ex = simulate(mx, integrator="euler", dt=1e-4, duration=0.3)
    Ee = kn.forward_kinematics(me, ee.q[-1], ee.jstate[-1])[1]
    Ex = kn.forward_kinematics(mx, ex.q[-1], ex.jstate[-1])[1]
    assert np.abs(Ee - Ex).max() < 1e-2


def test_failures_inside_the_ode_right_hand_side_become_simulation_errors(monkeypatch):
    """A ModelError raised while evaluating accelerations (e.g. a singular configuration reached during the
    motion) surfaces as a SimulationError with the time, not as an error from inside SciPy."""
    import redmax.integrators.ode as ode
    from redmax.errors import ModelError

    def fail(model, q, qd, t, *args):
        if t > 0.05:
            raise ModelError("joint 'x': singular")
        return np.zeros(model.ndof)

    monkeypatch.setattr(ode, "accelerations", fail)
    with pytest.raises(SimulationError, match=r"at t = 0\.0\d+: joint 'x': singular"):
        load("reference/-1").simulate("dop853", duration=0.2)


def test_bad_integrator_arguments():
    s = load("reference/-1")
    with pytest.raises(SimulationError, match="unknown integrator .rk4.; expected one of euler, rk45, dop853"):
        s.simulate("rk4")
    with pytest.raises(SimulationError, match="time step must be positive"):
        s.simulate("euler", dt=0.0)
    with pytest.raises(SimulationError, match="method"):
        s.simulate("dop853", method="magic")
    with pytest.raises(SimulationError, match="linearly implicit Euler"):
        s.simulate("euler", method="recursive")


def test_integrators_are_looked_up_in_one_registry():
    """A new integrator is one function plus one registration line; a taken name is refused unless replaced; an
    unknown name lists the registered ones, the built-ins first in their documented order."""
    from redmax.integrators import INTEGRATORS, Result

    assert list(INTEGRATORS)[:3] == ["euler", "rk45", "dop853"]
    seen = []

    def run(model, state, s):
        seen.append((s.integrator, s.dt, s.duration))
        return Result(np.array([state.t]), state.q[None], state.qd[None], state.jstate[None], {"total": np.zeros(1)})

    INTEGRATORS.register("test-only", run)
    try:
        m = load("reference/-1").model
        res = simulate(m, integrator="test-only", dt=0.5, duration=2.0)
        assert seen == [("test-only", 0.5, 2.0)] and res.q.shape == (1, m.ndof)
        with pytest.raises(SimulationError, match="'test-only' is registered already"):
            INTEGRATORS.register("test-only", lambda *a: None)
        with pytest.raises(SimulationError, match=r"unknown integrator 'nope'; expected one of euler, rk45, .*-only"):
            simulate(m, integrator="nope")
    finally:
        del INTEGRATORS["test-only"]
