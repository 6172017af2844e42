"""Forces in motion: the linearly implicit Euler formula with maximal and reduced K and D, the order of
energy drift, ground contact with static and dynamic friction, maximal-coordinate mode, and the
force scenes."""

import numpy as np
import pytest

from redmax import dynamics as dyn
from redmax import forces as fc
from redmax import scenes
from redmax.bodies import Cuboid
from redmax.builder import ModelBuilder
from redmax.derivatives.eom import total_force
from redmax.forces import model_forces
from redmax.integrators import accelerations, euler_step, simulate
from redmax.integrators.maximal import simulate_maximal
from redmax.joints import Free3D, Revolute, SphericalExp
from redmax.kinematics import forward_kinematics, kinematics
from redmax.model import State
from redmax.spatial import trans

from tolerances import FD_REL, FD_STEP


def test_euler_step_with_maximal_and_reduced_stiffness_and_damping():
    """One step equals RedMax Eq. 2 assembled here from the forces' own f, K, D."""
    m2 = scenes.load("diff/12").model  # two spring-dampers (one to the world)
    h = 1e-2
    rng = np.random.default_rng(0)
    q0 = m2.q0 + 0.1 * rng.normal(size=m2.ndof)
    qd0 = rng.normal(size=m2.ndof)
    fs = [*model_forces(m2), fc.JointLimit("joint1", -10.0, -1.0, 50.0, 2.0)]
    fs[-1].bind_joints(m2)
    qd1 = euler_step(m2, State(q0, qd0, 0.0, m2.jstate0), h, forces=fs).qd
    sysm = dyn.redmax_system(m2, q0, qd0, h, None, fs, want_K=True, want_D=True)
    J, Jd = sysm.J, sysm.Jdot
    Mm = np.diag(m2.M_body.reshape(-1))
    Km = np.zeros((6 * m2.nb, 6 * m2.nb))
    Dm = np.zeros_like(Km)
    fm = np.zeros(6 * m2.nb)
    kin = kinematics(m2, q0, qd0)
    for f in m2.forces:
        w, K, D = f.wrenches(m2, kin, True)
        fm += w.reshape(-1) + D @ kin.phi.reshape(-1)
        Km += K
        Dm += D
    grav = np.zeros(6 * m2.nb)
    for i in range(m2.nb):
        grav[6 * i + 3 : 6 * i + 6] = m2.mass[i] * kin.E_wb[i, :3, :3].T @ m2.gravity
    cor = fc.builtin.coriolis_wrenches(m2.M_body, kin.phi).reshape(-1)
    lim = fs[-1]
    qa = q0[lim.dofs]
    active = (qa > lim.upper) | (qa < lim.lower)
    e = np.where(qa > lim.upper, qa - lim.upper, 0.0) + np.where(qa < lim.lower, qa - lim.lower, 0.0)
    fr = np.zeros(m2.ndof)
    fr[lim.dofs] = -lim.k * e
    Kr = np.zeros((m2.ndof, m2.ndof))
    Dr = np.zeros_like(Kr)
    Kr[lim.dofs, lim.dofs] = -lim.k * active
    Dr[lim.dofs, lim.dofs] = lim.d * active
    Mr = J.T @ Mm @ J
    A = Mr + J.T @ (h * Dm - h * h * Km) @ J + h * Dr - h * h * Kr
    rhs = Mr @ qd0 + h * (J.T @ (fm + grav + cor - Mm @ Jd @ qd0) + fr)
    expect = np.linalg.solve(A, rhs)
    assert np.abs(qd1 - expect).max() < 1e-10 * np.abs(expect).max()


def _spatial_springs():
    """A 3D chain (spherical, spherical, revolute) held by spring-dampers with the exact (unsymmetric)
    stiffness matrix, between the bodies and to the world."""
    b = ModelBuilder("3d springs", (0, 0, -980))
    b.add_body("b0", Cuboid(4, 1, 1), SphericalExp(), body_placement=trans(2, 0, 0), q=[0.2, -0.3, 0.1])
    b.add_body("b1", Cuboid(4, 1, 1), SphericalExp(), parent="b0", joint_placement=trans(4, 0, 0),
               body_placement=trans(2, 0, 0), q=[0.4, 0.1, -0.2], qd=[0.5, 0.0, 1.0])
    b.add_body("b2", Cuboid(3, 1, 1), Revolute((0, 0.6, 0.8)), parent="b1", joint_placement=trans(4, 0, 0),
               body_placement=trans(1.5, 0, 0), q=[0.7])
    b.add_force(fc.SpringDamper((None, (6.0, 3.0, 2.0)), ("b1", (1.0, 0.5, 0.0)), k=5e3, d=5.0, rest_length=2.0,
                                stiffness="full"))
    b.add_force(fc.SpringDamper(("b0", (-1.0, 0.0, 0.5)), ("b2", (1.0, 0.0, 0.3)), k=3e3, d=2.0, rest_length=5.0,
                                stiffness="full",
                                name="inner"))
    return b.build()


def test_symmetrize_switch():
    from redmax.integrators.euler import euler_system

    s = scenes.load("reference/24")
    K = dyn.redmax_system(s.model, s.model.q0, s.model.qd0, 0.0, None, model_forces(s.model),
                          want_K=True).terms.Km.dense()
    assert np.abs(K - K.T).max() < 1e-9 * np.abs(K).max()  # reference/24 asks for symmetric K
    m = _spatial_springs()
    fs = model_forces(m)
    h = 1e-2
    A, _ = euler_system(m, m.q0, m.qd0, m.jstate0, h, h, fs)
    As, _ = euler_system(m, m.q0, m.qd0, m.jstate0, h, h, fs, symmetrize=True)
    assert np.abs(A - A.T).max() > 1e-4 * np.abs(A).max()  # the exact K makes the system unsymmetric
    assert np.abs(As - As.T).max() < 1e-12 * np.abs(As).max()  # the switch makes it symmetric
    # both linearisations are first-order accurate: their trajectories differ by O(h)
    diff = []
    for dt in (4e-3, 2e-3, 1e-3):
        a = simulate(m, integrator="euler", dt=dt, duration=0.1)
        b = simulate(m, integrator="euler", dt=dt, duration=0.1, symmetrize=True)
        diff.append(np.abs(a.q[-1] - b.q[-1]).max())
    assert diff[0] > 1e-2, diff  # the switch matters at this step size (measured 0.097 rad)
    assert 1.8 < diff[0] / diff[1] < 2.2 and 1.8 < diff[1] / diff[2] < 2.2, diff  # measured 1.95, 1.97


def _spring_mass():
    """Undamped: a pendulum held by a zero-rest-length spring to a world point, and gravity."""
    b = ModelBuilder("spring-mass", (0, 0, -980))
    b.add_body("bob", Cuboid(2, 2, 2), SphericalExp(), joint_name="ball", body_placement=trans(0, 0, -10),
               q=[0.3, 0.2, 0.0], qd=[0.0, 1.0, 0.5])
    b.add_force(fc.PointSpring((None, (5.0, 0.0, -10.0)), ("bob", (0.0, 0.0, 0.0)), ks=200.0))
    return b.build()


def test_energy_drift_shrinks_at_first_order():
    m = _spring_mass()
    drift = []
    for h in (2e-3, 1e-3, 5e-4):
        r = simulate(m, integrator="euler", dt=h, duration=0.5)
        assert r.energy["springs"].max() > 0
        drift.append(np.abs(r.energy["total"] - r.energy["total"][0]).max())
    ratios = [drift[0] / drift[1], drift[1] / drift[2]]
    assert all(1.7 < x < 2.3 for x in ratios), (drift, ratios)
    # the ODE integrator conserves it
    r = simulate(m, integrator="dop853", dt=1e-2, duration=0.5, rtol=1e-10, atol=1e-10)
    assert np.abs(r.energy["total"] - r.energy["total"][0]).max() < 1e-7 * r.energy["kinetic"].max()


def _box_on_incline(angle_deg: float, mu: float = 0.5):
    """A unit box on the plane z = 0 with gravity tilted by ``angle`` (the incline)."""
    a = np.radians(angle_deg)
    b = ModelBuilder("incline", (-980.0 * np.sin(a), 0.0, -980.0 * np.cos(a)))
    b.add_body("box", Cuboid(1, 1, 1), Free3D(), joint_name="free", q=[0, 0, 0.5, 0, 0, 0])
    corners = [(sx * 0.5, sy * 0.5, sz * 0.5) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    b.add_force(fc.GroundContact([("box", c) for c in corners], kn=1e5, kd=50.0, kt=1e4, mu=mu))
    return b.build()


@pytest.mark.parametrize("angle,slides", [(15.0, False), (40.0, True)])
def test_box_rests_below_and_slides_above_the_friction_angle(angle, slides):
    """mu = 0.5: friction angle atan(0.5) = 26.6 degrees."""
    m = _box_on_incline(angle)
    r = simulate(m, integrator="euler", dt=1e-3, duration=1.0)
    x = r.q[:, 0]
    v_end = (x[-1] - x[-101]) / 0.1  # mean speed along the slope over the last 0.1 s
    assert abs(r.q[-1, 2] - 0.5) < 0.05  # stays on the plane
    if slides:
        expect = 980 * (np.sin(np.radians(angle)) - 0.5 * np.cos(np.radians(angle))) * 0.95  # a t at t ~ 0.95
        assert v_end < -0.8 * expect  # sliding down (-x), close to the Coulomb prediction
        assert v_end > -1.2 * expect
    else:
        assert abs(v_end) < 0.2  # static friction holds it (penalty creep only)


@pytest.mark.parametrize("angle,slides", [(15.0, False), (40.0, True)])
def test_box_dropped_on_a_tilted_plane(angle, slides):
    """The same with vertical gravity and the plane itself tilted (normal (sin a, 0, cos a) through a point
    off the origin); the box, aligned with the plane, is dropped from 0.05 above it."""
    a = np.radians(angle)
    n = np.array([np.sin(a), 0.0, np.cos(a)])
    down = np.array([np.cos(a), 0.0, -np.sin(a)])  # downhill direction in the plane
    origin = np.array([1.0, 2.0, -0.5])
    b = ModelBuilder("tilted plane", (0.0, 0.0, -980.0))
    x0 = origin + 0.55 * n
    b.add_body("box", Cuboid(1, 1, 1), Free3D(), joint_name="free", q=[*x0, 0.0, a, 0.0])
    corners = [(sx * 0.5, sy * 0.5, sz * 0.5) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    b.add_force(fc.GroundContact([("box", c) for c in corners], kn=1e5, kd=50.0, kt=1e4, mu=0.5, normal=n,
                                 origin=origin))
    r = simulate(b.build(), integrator="euler", dt=1e-3, duration=1.0)
    x = r.q[:, :3]
    assert abs((x[-1] - origin) @ n - 0.5) < 0.05  # resting on the plane, not through it
    v_end = (x[-1] - x[-101]) @ down / 0.1  # mean downhill speed over the last 0.1 s
    if slides:
        expect = 980 * (np.sin(a) - 0.5 * np.cos(a)) * 0.95
        assert 0.8 * expect < v_end < 1.2 * expect
    else:
        assert abs(v_end) < 0.2


def test_maximal_coordinates_converge_to_reduced():
    s = scenes.load("reference/-1")
    m = s.model
    ref = s.simulate("dop853", dt=1e-3, duration=0.3, rtol=1e-11, atol=1e-11)
    E_ref = forward_kinematics(m, ref.q[-1])[1]
    errs = []
    for h in (2e-3, 1e-3, 5e-4):
        r = simulate_maximal(m, h, 0.3)
        errs.append(np.abs(r.E_wb[-1][:, :3, 3] - E_ref[:, :3, 3]).max())
        assert r.violation.max() < 50 * h
    assert errs[0] / errs[1] > 1.7 and errs[1] / errs[2] > 1.7 and errs[2] < 0.05


def test_baumgarte_stabilisation_holds_the_joints_together():
    """Without stabilisation the velocity-level constraints let the joints drift apart; gamma = 5 / s keeps
    the position violation several times smaller (reference/-1, 2 s at h = 1e-2)."""
    m = scenes.load("reference/-1").model
    free = simulate_maximal(m, 1e-2, 2.0, baumgarte=0.0).violation
    held = simulate_maximal(m, 1e-2, 2.0, baumgarte=5.0).violation
    assert free.max() > 0.5  # measured 1.95 (cm)
    assert held.max() < 0.2 * free.max()  # measured 0.28


def test_maximal_mode_with_springs_and_damping_and_bad_forces():
    s = scenes.load("reference/23")
    r = simulate_maximal(s.model, 1e-3, 0.05)
    assert r.energy["springs"][0] > 0 and np.all(np.isfinite(r.energy["total"]))
    with pytest.raises(Exception, match="maximal forces only"):
        simulate_maximal(scenes.load("reference/11").model, 1e-3, 0.01)


@pytest.mark.parametrize("name", ["reference/10", "reference/23", "reference/24", "diff/10", "diff/11", "diff/12",
                                  "diff/13", "diff/14"])
def test_force_scenes_run_with_euler(name):
    """The scene runs, and its energy book balances: at states of the run the total energy changes at the power of
    the inputs and of the forces' dissipative parts (see ``_power_balance``)."""
    s = scenes.load(name)
    r = s.simulate(duration=min(s.duration, 0.3))
    e = r.energy
    assert np.all(np.isfinite(r.q))
    assert {"kinetic", "gravity", "joint_springs", "springs", "total"} <= set(e)
    if name in ("reference/23", "reference/24", "diff/10", "diff/12", "diff/13"):
        assert e["springs"].max() > 0
    for k in (len(r.t) // 2, len(r.t) - 1):  # (the runs start at rest)
        dE_dt, power, tol = _power_balance(s, r, k)
        assert abs(dE_dt - power) < tol, (name, float(r.t[k]), dE_dt, power, tol)


def _power_balance(scene, r, k):
    """``(dE/dt, P, tol)`` at sample k of run r.  dE/dt: central differences of the total energy along the motion
    (qd, qdd) with qdd from the forward dynamics.  P = qd . (tau_in + sum of the non-conservative force terms): all
    of a force without an energy entry, ``F(q, qd) - F(q, 0)`` (its damping) of one with a potential, each force's
    reduced force F from ``total_force`` with that force alone minus that with none (gravity and Coriolis terms)."""
    m = scene.model
    fs = scene.forces or model_forces(m)
    t, q, qd, js = float(r.t[k]), r.q[k], r.qdot[k], r.jstate[k]
    qdd = accelerations(m, q, qd, t, js, fs)

    def energy(s):
        return dyn.energies(m, q + s * qd, qd + s * qdd, jstate=js, forces=fs)

    dE_dt = (energy(FD_STEP)["total"] - energy(-FD_STEP)["total"]) / (2 * FD_STEP)
    zero = np.zeros(m.ndof)

    def force(f, v):
        return total_force(m, q, v, t, js, forces=[f], tau=zero) - total_force(m, q, v, t, js, forces=[], tau=zero)

    tau = m.inputs.torque(t)
    power, scale = qd @ tau, abs(qd @ tau) + abs(qd @ dyn.crba(m, q, jstate=js) @ qdd)
    for f in fs:
        F = force(f, qd)
        power += qd @ (F if f.energy_key is None else F - force(f, zero))
        scale += abs(qd @ F)
    e0 = energy(0.0)
    rounding = 100 * np.finfo(float).eps * sum(abs(v) for key, v in e0.items() if key != "total") / FD_STEP
    return dE_dt, power, FD_REL * scale + rounding


def test_force_errors_name_the_force():
    b = ModelBuilder("m")
    b.add_body("a", Cuboid(1, 1, 1), Revolute())
    b.add_force(fc.PointSpring(("a", (0, 0, 0)), ("ghost", (0, 0, 0)), ks=1.0, name="tether"))
    with pytest.raises(Exception, match="force 'tether': point 1 is attached to unknown body 'ghost'"):
        b.build()
    b = ModelBuilder("m")
    b.add_body("a", Cuboid(1, 1, 1), Revolute())
    b.add_force(fc.JointLimit("elbow", 0, 1, 10.0, name="lim"))
    with pytest.raises(Exception, match="force 'lim': unknown joint 'elbow'"):
        b.build()
    b = ModelBuilder("m")
    b.add_body("a", Cuboid(1, 1, 1), Revolute())
    b.add_force(fc.SpringDamper(("a", (0, 0, 0)), (None, (1, 0, 0)), k=-1.0, name="bad"))
    with pytest.raises(Exception, match="force 'bad': k: must be >= 0"):
        b.build()
