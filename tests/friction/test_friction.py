"""Friction in joints and against floors (RedMax paper §5; issue 52): contact geometry, Coulomb's law on an
incline and a floor, breakaway of a loaded revolute joint, friction never adds energy, scene files and errors."""

import numpy as np
import pytest

import redmax as rm
from redmax import scenes
from redmax.friction import Ball, Box, Cylinder, contact_set
from redmax.friction.geometry import rotation_z_to
from redmax.spatial import make_E, rot_y

FRICTION_SCENES = ["reference/27", "reference/28", "reference/29", "reference/30", "reference/31", "reference/33"]
_RUNS: dict = {}


def _run(name, **kw):
    """``scenes.load(name).simulate(**kw)``, once per test process (several tests read the same runs)."""
    key = (name, tuple(sorted(kw.items())))
    if key not in _RUNS:
        _RUNS[key] = scenes.load(name).simulate(**kw)
    return _RUNS[key]


# -- geometry ---------------------------------------------------------------------------------------------------
def test_rotation_z_to_maps_e_z_onto_any_axis():
    rng = np.random.default_rng(0)
    for a in [*rng.normal(size=(20, 3)), (0, 0, 1), (0, 0, -1), (1, 0, 0), (0, -1, 0)]:
        a = np.asarray(a, float) / np.linalg.norm(a)
        R = rotation_z_to(a)
        assert np.allclose(R @ R.T, np.eye(3), atol=1e-14) and np.isclose(np.linalg.det(R), 1.0)
        assert np.allclose(R[:, 2], a, atol=1e-14)


@pytest.mark.parametrize("axis", [(0, 0, 1), (1, 0, 0), (0, -0.6, 0.8), (0.3, 0.4, -0.5)])
def test_a_cylinder_cage_holds_the_joint_except_its_rotation(axis):
    """16 normals at 8 points of the cylinder, inward (radial ones toward the axis, axial ones toward the middle),
    the tangents circumferential: the normals' rows span every relative motion but the rotation about the axis."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    cs = contact_set(Cylinder(0.5, 2.0), "revolute", axis)
    assert cs.size == 8 and cs.nn.sum() == 16 and cs.nt.sum() == 8
    rows = []
    for k in range(cs.size):
        x = cs.points[k]
        along = x @ a
        radial = x - along * a
        assert np.isclose(np.linalg.norm(radial), 0.5) and np.isclose(abs(along), 1.0)
        n_rad, n_ax = cs.normals[k]
        assert np.allclose(n_rad, -radial / 0.5) and np.allclose(n_ax, -np.sign(along) * a)
        t = cs.tangents[k, 0]
        assert np.isclose(np.linalg.norm(t), 1.0) and abs(t @ n_rad) < 1e-14 and abs(t @ n_ax) < 1e-14
        for n in (n_rad, n_ax):
            rows.append(np.concatenate([np.cross(x, n), n]))
    N = np.array(rows)
    assert np.linalg.matrix_rank(N) == 5
    assert np.abs(N @ np.concatenate([a, np.zeros(3)])).max() < 1e-14  # rotation about the axis is free


def test_a_box_blocks_everything_but_the_slide_and_a_ball_everything_but_rotation():
    cs = contact_set(Box((5.0, 0.5, 5.0)), "prismatic", (1, 0, 0))
    assert cs.size == 8 and cs.nn.sum() == 16
    N = np.array([np.concatenate([np.cross(cs.points[k], n), n]) for k in range(8) for n in cs.normals[k]])
    assert np.linalg.matrix_rank(N) == 5 and np.abs(N @ [0, 0, 0, 1, 0, 0]).max() < 1e-14
    assert np.allclose(cs.tangents[:, 0], [1, 0, 0])
    assert np.allclose(np.abs(cs.points), [2.5, 0.25, 2.5])
    ball = contact_set(Ball(2.0), "spherical_exp")
    assert ball.size == 6 and np.allclose(np.linalg.norm(ball.points, axis=1), 2.0)
    assert np.allclose(ball.normals[:, 0], -ball.points / 2.0)
    N = np.array([np.concatenate([np.cross(ball.points[k], ball.normals[k, 0]), ball.normals[k, 0]])
                  for k in range(6)])
    assert np.linalg.matrix_rank(N) == 3 and np.abs(N[:, :3]).max() < 1e-14  # (radial: no torque)
    for k in range(6):
        t = ball.tangents[k]
        assert abs(t[0] @ t[1]) < 1e-14 and abs(t[0] @ ball.normals[k, 0]) < 1e-14


def test_contact_geometry_that_does_not_fit_the_joint_is_refused_by_name():
    b = rm.ModelBuilder("bad")
    b.add_body("slider", rm.Cuboid(1, 1, 1), rm.Prismatic((1, 0, 0)), contact=Cylinder(1.0, 1.0))
    with pytest.raises(rm.ModelError, match=r"joint 'slider'.*prismatic joint takes a box contact"):
        b.build()
    b = rm.ModelBuilder("bad")
    b.add_body("u", rm.Cuboid(1, 1, 1), rm.Universal(), contact=Ball(1.0))
    with pytest.raises(rm.ModelError, match=r"joint 'u'.*universal joint has no contact geometry"):
        b.build()
    with pytest.raises(rm.ModelError, match="radius must be finite and > 0"):
        Cylinder(-1.0, 1.0)
    with pytest.raises(rm.ModelError, match=r"friction\.joint must be a finite number >= 0"):
        rm.ModelBuilder("bad", friction={"joint": -0.1})
    with pytest.raises(rm.ModelError, match=r"unknown key\(s\) \['wrold'\]"):
        rm.ModelBuilder("bad", friction={"wrold": 0.1})
    with pytest.raises(rm.ModelError, match="loop closure takes a cylinder contact"):
        rm.constraints.Loop([("a", (0, 0, 0)), ("b", (0, 0, 0))], contact=Ball(1.0))


# -- Coulomb's law ----------------------------------------------------------------------------------------------
def _incline(theta, mu, h):
    """A unit cube on a prismatic joint along an incline of angle theta (box contact centred at its centre)."""
    b = rm.ModelBuilder("incline", gravity=(0, 0, -9.81), friction={"joint": mu})
    b.add_body("block", rm.Cuboid(1, 1, 1), rm.Prismatic((1, 0, 0)), joint_placement=make_E(rot_y(theta)),
               contact=Box((1.0, 1.0, 1.0)))
    return rm.simulate(b.build(), dt=h, duration=0.2)


@pytest.mark.parametrize("theta,mu", [(np.radians(30), 0.2), (np.radians(60), 0.8), (np.radians(45), 0.3)])
def test_a_block_on_an_incline_slides_with_coulombs_acceleration(theta, mu):
    r = _incline(theta, mu, 1e-3)
    a = r.qdot[-1, 0] / r.t[-1]
    want = 9.81 * (np.sin(theta) - mu * np.cos(theta))
    assert abs(a - want) <= 1e-5 * want
    assert np.all(r.meta["friction_work"] <= 0.0)


@pytest.mark.parametrize("theta,mu", [(np.radians(30), 0.8), (np.radians(20), 0.37)])
def test_a_block_on_an_incline_stays_put_when_mu_exceeds_tan_theta(theta, mu):
    assert mu > np.tan(theta)
    r = _incline(theta, mu, 1e-3)
    v_free = 9.81 * np.sin(theta) * r.t[-1]  # the frictionless speed at the end: sticking leaves 1e-6 of it
    assert np.abs(r.qdot[:, 0]).max() < 1e-6 * v_free and np.abs(r.q[:, 0]).max() < 1e-6 * v_free * r.t[-1]


def _wheel(torque_factor, mu=0.5, r=0.2, m=2.0, g=9.81):
    b = rm.ModelBuilder("wheel", gravity=(0, 0, -g), friction={"joint": mu})
    b.add_body("wheel", mass=m, inertia=(0.1, 0.2, 0.1), joint=rm.Revolute((0, 1, 0)), contact=Cylinder(r, 0.1),
               torque=[torque_factor * mu * r * m * g])
    return rm.simulate(b.build(), dt=1e-3, duration=0.3)


def test_a_loaded_revolute_joint_holds_below_its_breakaway_torque_and_turns_above():
    """A wheel on a horizontal axle carries its weight m g on the cylinder; friction resists a torque up to about
    mu r m g (the bound of the contacts' least-squares normal impulses)."""
    for f in (0.0, 0.5, 0.9):
        res = _wheel(f)
        assert np.abs(res.q[:, 0]).max() < 1e-6, f
    for f in (1.5, 3.0):
        res = _wheel(f)
        assert res.q[-1, 0] > 0.1, f
    slow, fast = _wheel(1.5), _wheel(3.0)
    assert fast.q[-1, 0] > 2 * slow.q[-1, 0]


def test_a_ball_sliding_on_a_floor_decelerates_at_mu_g():
    g, mu, rad = 9.81, 0.3, 0.5
    b = rm.ModelBuilder("slide", gravity=(0, 0, -g), friction={"world": mu})
    b.add_body("ball", rm.Sphere(rad), rm.Planar((1, 0, 0), (0, 0, 1)), q=[0.0, rad - 1e-9], qd=[2.0, 0.0])
    b.add_constraint(rm.constraints.Floor("ball", radius=rad, name="floor"))
    r = rm.simulate(b.build(), dt=1e-3, duration=0.3)
    a = (r.qdot[1, 0] - r.qdot[-1, 0]) / (r.t[-1] - r.t[1])
    assert abs(a - mu * g) <= 1e-6 * mu * g
    none = rm.simulate(b.build(), dt=1e-3, duration=0.3, friction_solver="none")
    assert np.allclose(none.qdot[:, 0], 2.0)


def test_floors_are_frictionless_without_a_friction_table():
    b = rm.ModelBuilder("slide", gravity=(0, 0, -9.81))
    b.add_body("ball", rm.Sphere(0.5), rm.Planar((1, 0, 0), (0, 0, 1)), q=[0.0, 0.5 - 1e-9], qd=[2.0, 0.0])
    b.add_constraint(rm.constraints.Floor("ball", radius=0.5, name="floor"))
    r = rm.simulate(b.build(), dt=1e-3, duration=0.05)
    assert "friction_work" not in r.meta and np.allclose(r.qdot[:, 0], 2.0)


# -- scenes -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", FRICTION_SCENES)
def test_friction_never_adds_energy_on_the_friction_scenes(name):
    """Issue 52's bound: the work of each step's friction impulse on the velocity of the projection that made it
    is <= 1e-9 max(1, T(t_k), T(t_k+1)); the runs stay finite and lose energy to friction."""
    r = _run(name)
    T = r.energy["kinetic"]
    w = r.meta["friction_work"]
    assert w.shape == (r.meta["steps"],) and np.all(np.isfinite(r.energy["total"]))
    assert np.all(w <= 1e-9 * np.maximum(1.0, np.maximum(T[:-1], T[1:])))
    assert w.min() < 0.0  # friction acted
    it = r.meta["friction_iterations"]
    assert it.shape == (r.meta["steps"],) and np.all(it >= 2) and r.meta["friction_unconverged"].size == 0
    if name != "reference/33":  # (its motor does work)
        assert r.energy["total"][-1] < _run(name, friction_solver="none").energy["total"][-1]


def _travel_done(r, n, share=0.99):
    """The time each joint has made ``share`` of its travel (the integral of |qd|): robust to the brief re-slips
    of a stopped joint when the links beyond it swing."""
    travel = np.cumsum(np.abs(r.qdot[1:]) * np.diff(r.t)[:, None], axis=0)
    return np.array([r.t[1 + np.searchsorted(travel[:, j], share * travel[-1, j])] for j in range(n)])


def test_the_chain_comes_to_rest_from_the_root_outward():
    """The paper's CHAIN (Fig. 5a, its default radius 0.5) at a step that resolves the motion: the root joint,
    which carries the most weight, comes to rest first and the joints follow outward (0.78, 0.89, 0.96, ... s when
    measured); the whole chain is at rest (|qd| < 0.02 rad/s) well before 2 s."""
    n = 10
    r = scenes.load("paper/chain", n=n).simulate(duration=2.0, dt=2e-3)
    done = _travel_done(r, n)
    assert done[0] < done[1:].min() and np.all(np.diff(done[:8]) > 0.0)
    assert np.abs(r.qdot[-1]).max() < 2e-2 and np.abs(r.qdot[r.t > 1.7]).max() < 2e-2


def test_a_larger_joint_radius_stops_the_chain_earlier():
    """Paper Fig. 5b: at the same mu a larger joint radius lets friction apply more torque, so the CHAIN comes to
    rest sooner (kinetic energy below 1e-3 of its peak from then on) and its root falls less (radius 0.25 and 1,
    cylinders of height 1: at rest at 2.11 and 1.27 s, root at -95 and -41 degrees when measured)."""
    def run(radius):
        r = scenes.load("paper/chain", n=10, radius=radius).simulate(duration=2.5)
        T = r.energy["kinetic"]
        return r.t[np.flatnonzero(T > 1e-3 * T.max())[-1] + 1], -np.degrees(r.q[-1, 0])

    (rest_small, fall_small), (rest_large, fall_large) = run(0.25), run(1.0)
    assert rest_large < rest_small - 0.5 and fall_large < fall_small - 30.0


def test_friction_scenes_round_trip_through_scene_files(tmp_path):
    s = scenes.load("reference/31")
    s.friction_solver, s.compat = "none", "original"
    path = tmp_path / "s.toml"
    scenes.save(s, str(path))
    t = scenes.load(str(path))
    assert t.model.friction == {"joint": 0.1, "world": 0.2} and t.friction_solver == "none" and t.compat == "original"
    assert t.model.contacts[0] == Cylinder(1.0, 1.0) and t.model.contacts[2] is None
    text = path.read_text().replace('contact = { type = "cylinder", radius = 1.0, height = 1.0 }',
                                    'contact = { type = "cylinder", radius = 1.0, hieght = 1.0 }', 1)
    path.write_text(text)
    with pytest.raises(rm.SceneError, match=r"bodies\[0\]\.joint\.contact.*unknown key\(s\) \['hieght'\]"):
        scenes.load(str(path))
    path.write_text(text.replace("hieght", "height").replace('friction_solver = "none"', 'friction_solver = "sp2"'))
    with pytest.raises(rm.SceneError, match=r"scene\.friction_solver"):
        scenes.load(str(path))


def test_loop_contacts_round_trip_and_bad_options_are_named(tmp_path):
    loop = rm.constraints.Loop([("b3", (0.0, 0.0, -5.0)), ("b4", (10.0, 0.0, 0.0))], contact={"type": "cylinder",
                                                                                             "radius": 0.5,
                                                                                             "height": 0.5})
    assert loop.to_scene()["contact"] == {"type": "cylinder", "radius": 0.5, "height": 0.5}
    with pytest.raises(rm.SimulationError, match="friction_solver must be one of"):
        scenes.load("reference/27").simulate(friction_solver="sp2")
    with pytest.raises(rm.SimulationError, match="compat must be None or 'original'"):
        scenes.load("reference/27").simulate(compat="orig")


def test_the_maximal_rows_times_j_are_the_rows():
    """Maximal rows (mode 3 of the row kernels): ``G_m J = G`` for loops and prescribed twists; rows on joint
    coordinates are zero."""
    from redmax.constraints.program import evaluate_rows, maximal_rows, program_for
    from redmax.integrators.euler import linearized_step

    for name, nmax in [("reference/04", 2), ("reference/13", 3), ("reference/08", 2), ("reference/20", 3)]:
        m = scenes.load(name).model.coordinate_model
        rng = np.random.default_rng(1)
        st = rm.State(m.q0 + 0.1 * rng.normal(size=m.ndof), rng.normal(size=m.ndof), 0.0, m.jstate0)
        step = linearized_step(m, st, 1e-2)
        prog = program_for(m)
        rows = evaluate_rows(m, prog, step.W, step.q, step.qd, 0.01, 0)
        Gm = maximal_rows(m, prog, step.W, step.q, step.qd, 0.01)
        J = np.array([step.J(e).reshape(-1) for e in np.eye(m.ndof)]).T
        nz = np.abs(Gm).sum(axis=1) > 0
        assert nz.sum() == nmax
        assert np.abs(Gm[nz] @ J - rows.G[nz]).max() <= 1e-12 * max(1.0, np.abs(rows.G).max())


def test_the_walking_four_bar_walks_on_floor_friction_and_reports_its_motor_torque():
    """reference/33: the crank turns at the prescribed -4 pi rad/s; with floor friction the car walks (its root
    moves along -x, tens of times farther than without friction, where the wheels slip), and the motor's required
    torque is the prescribed row's reaction."""
    r = _run("reference/33")
    free = _run("reference/33", friction_solver="none")
    assert np.allclose(r.qdot[1:, 6], -4 * np.pi, rtol=1e-6)
    m = scenes.load("reference/33").model
    x, x_free = (rm.forward_kinematics(m, res.q[-1])[0][0, 0, 3] for res in (r, free))  # the root joint's world x
    assert x < -10.0 and abs(x_free) < 0.1 * abs(x)
    assert r.reactions["motor"].shape[0] == r.meta["steps"] + 1 and np.all(np.isfinite(r.reactions["motor"]))
    assert np.abs(r.reactions["motor"]).max() > 0.0


# -- the Staggered Projections baseline ---------------------------------------------------------------------------
def _stops(r, n):
    return np.array([r.t[np.flatnonzero(np.abs(r.qdot[:, j]) > 2e-2)[-1] + 1] for j in range(n)])


def test_sp_and_bisp_agree_on_a_chain():
    """The maximal-coordinate baseline against BiSP on the CHAIN at a resolved step: one link ends within 2 degrees
    (both hold the same joint by the same cage), three links stop in the same order (root first) and end within 5
    degrees of each other (the issue's bound; 0.8 measured; 8-15 with the spec's fixed 5 1/s stabilisation, whose
    drifted cages overload the outer joints); SP's friction never adds energy either."""
    one = scenes.load("paper/chain", n=1)
    a, b = one.simulate(dt=2e-3, duration=1.2), one.simulate(dt=2e-3, duration=1.2, friction_solver="sp")
    assert abs(np.degrees(a.q[-1, 0] - b.q[-1, 0])) < 2.0
    assert b.meta["friction_solver"] == "sp" and b.q.shape == a.q.shape
    assert b.meta["contact_stabilisation"] == pytest.approx(0.5 / 2e-3)
    three = scenes.load("paper/chain", n=3)
    a, b = three.simulate(dt=2e-3, duration=1.2), three.simulate(dt=2e-3, duration=1.2, friction_solver="sp")
    assert np.all(np.argsort(_stops(a, 3)) == np.argsort(_stops(b, 3))) and _stops(b, 3)[0] < _stops(b, 3)[-1]
    assert np.all(np.abs(np.degrees(a.q[-1] - b.q[-1])) < 5.0)
    T, w = b.energy["kinetic"], b.meta["friction_work"]
    assert np.all(w <= 1e-9 * np.maximum(1.0, np.maximum(T[:-1], T[1:]))) and w.min() < 0.0


def test_sp_refuses_what_it_cannot_represent_by_name():
    with pytest.raises(rm.SimulationError, match=r"joint 'joint3' \(fixed\) has none"):
        scenes.load("reference/31").simulate(friction_solver="sp", duration=0.02)
    b = rm.ModelBuilder("limited", friction={"joint": 0.5})
    b.add_body("l0", rm.Cuboid(1, 0.1, 0.1), rm.Revolute((0, 0, 1)), contact=Cylinder(0.1, 0.1))
    b.add_constraint(rm.constraints.Limit("l0", -0.5, 0.5, name="stop"))
    with pytest.raises(rm.SimulationError, match=r"constraint 'stop' \(limit\) is not supported"):
        rm.simulate(b.build(), dt=1e-2, duration=0.02, friction_solver="sp")


def _closed_chain():
    """Three links on y hinges with cylinders, the tip closed to the world point where it starts (a loop with a
    cylinder too), mu 0.3."""
    def build(point):
        b = rm.ModelBuilder("closed", gravity=(0, 0, -9.81), friction={"joint": 0.3})
        for k, q in enumerate((0.3, -0.6, 0.2)):
            b.add_body(f"l{k}", rm.Cuboid(1, 0.1, 0.1), rm.Revolute((0, 1, 0)), parent=f"l{k - 1}" if k else None,
                       joint_placement=rm.spatial.trans(1, 0, 0) if k else None,
                       body_placement=rm.spatial.trans(0.5, 0, 0), contact=Cylinder(0.05, 0.1), q=[q])
        if point is not None:
            b.add_constraint(rm.constraints.Loop([("l2", (0.5, 0, 0)), ("world", tuple(point))],
                                                 contact=Cylinder(0.05, 0.1), name="loop"))
        return b.build()

    _, E_wb = rm.forward_kinematics(build(None), build(None).q0)
    tip = (E_wb[2] @ np.array([0.5, 0.0, 0.0, 1.0]))[:3]
    return build(tip), tip


def test_sp_holds_loop_closures_as_bilateral_rows():
    """A closed chain with friction in its joints and its loop: SP keeps the closure (bilateral rows of its contact
    QP, Baumgarte 20) and ends within 10 degrees of BiSP, both well away from the frictionless run."""
    m, tip = _closed_chain()
    runs = {fs: rm.simulate(m, dt=2e-3, duration=1.0, friction_solver=fs, baumgarte=20.0)
            for fs in ("bisp", "sp", "none")}
    for fs, r in runs.items():
        _, E_wb = rm.forward_kinematics(m, r.q[-1])
        assert np.linalg.norm((E_wb[2] @ np.array([0.5, 0.0, 0.0, 1.0]))[:3] - tip) < 1e-3, fs
    b, s_, n = (np.degrees(runs[k].q[-1]) for k in ("bisp", "sp", "none"))
    assert np.abs(b - s_).max() < 10.0 and np.abs(n - b).max() > 15.0


def test_sp_reads_joint_coordinates_back_from_the_poses():
    from redmax.friction.sp import joint_coordinates
    from redmax.kinematics import kinematics

    for name in ("reference/27", "reference/28", "reference/29"):
        m = scenes.load(name).model
        rng = np.random.default_rng(2)
        q = m.q0 + 0.3 * rng.normal(size=m.ndof)
        kin = kinematics(m, q, np.zeros(m.ndof), m.jstate0)
        E = np.einsum("kij,kjl->kil", kin.E_wb, np.linalg.inv(m.E_jb))  # body frames -> joint frames
        q_back, ideal = joint_coordinates(m, E)
        assert np.allclose(q_back, q, atol=1e-12) and np.allclose(ideal, E, atol=1e-12)


def test_klann_is_a_closed_one_dof_per_crank_walker_that_walks():
    """paper/klann: six Klann legs (crank, rod, leg, two rockers, two closures each) on two coupled cranks driven at
    2 pi rad/s by 'motor'; the closures are closed at the start, and with floor friction the frame walks forward
    and stays upright."""
    from redmax.constraints.program import evaluate_rows, program_for
    from redmax.integrators.constrained import coordinate_state
    from redmax.integrators.euler import linearized_step

    s = scenes.load("paper/klann")
    m = s.model
    assert m.ndof == 6 + 1 + 6 * 4 and sum(c.type == "loop" for c in m.constraints) == 12
    full = m.coordinate_model
    step = linearized_step(full, coordinate_state(m, m.initial_state()), s.dt)
    rows = evaluate_rows(full, program_for(full), step.W, step.q, step.qd, 0.0, 0)
    assert np.abs(rows.g[rows.kind == 0]).max() < 1e-10
    r = s.simulate(duration=0.25)
    assert np.allclose(r.qdot[1:, 6], 2 * np.pi, rtol=1e-6)
    assert r.q[-1, 0] > 2.0 and abs(r.q[-1, 4]) < 0.3
    T, w = r.energy["kinetic"], r.meta["friction_work"]
    assert np.all(np.isfinite(r.energy["total"])) and np.all(w <= 1e-9 * np.maximum(1.0, np.maximum(T[:-1], T[1:])))


# -- validation mode: the original's numbers ------------------------------------------------------------------------
# The final energies H = T + V - V(0) of the original code (sueda/redmax, matlab/testRedMaxScenes.m, REDMAX_EULER),
# whose own regression rule is |H - expected| <= 1e-2.
_ORIGINAL_H = {"reference/27": -137371.1285153437056579, "reference/28": -184565.9459125697612762,
               "reference/29": -256391.5065969563729595, "reference/30": -14581.1508526040543074,
               "reference/31": -90558.1346001959173009, "reference/33": 19598.8605086512579874}


@pytest.mark.parametrize("name", sorted(_ORIGINAL_H))
def test_validation_mode_reproduces_the_originals_final_energies(name):
    r = scenes.load(name).simulate(compat="original")
    E = r.energy["total"]
    assert abs((E[-1] - E[0] + r.energy["kinetic"][0]) - _ORIGINAL_H[name]) <= 1e-2


def test_the_loop_cage_is_built_in_the_first_bodys_frame():
    """Spec §2.5: a loop's contact cage is built in body A's frame (its first contact on A's own x axis), not in
    A's joint frame; on reference/30's rocker the two differ by the rocker's tilt.  The original's final energies of
    reference/30 and 33 (both with a loop cage) tell them apart: built in the joint frame they were 190 and 11 off."""
    from redmax.friction.setup import friction_setup

    m = scenes.load("reference/30").model.coordinate_model
    (lc,) = friction_setup(m).loops
    R_jb, p_jb = m.E_jb[lc.A, :3, :3], m.E_jb[lc.A, :3, 3]
    xb = (lc.cs.points - p_jb) @ R_jb  # the cage in A's body frame
    centre = xb.mean(axis=0)
    assert np.allclose(centre, (-6.0, 0.0, 0.0), atol=1e-12)
    assert np.allclose(xb[0] - centre, (0.5, -0.25, 0.0), atol=1e-12) or np.allclose(xb[0] - centre, (0.5, 0.25, 0.0),
                                                                                     atol=1e-12)
