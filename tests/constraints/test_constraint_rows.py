"""Constraint rows (wave2.md §1.0): every row's G, explicit time term and acceleration term against finite
differences of its value along random motions, and the velocity-only rows against the kinematics."""

import numpy as np
import pytest

import redmax as rm
from constraint_models import constraint_model
from redmax.constraints.program import evaluate_rows, program_for
from redmax.integrators.constrained import _state_workspace

from tolerances import FD_REL, FD_STEP, ROUNDOFF, rel

_MODEL = {}


def _model():
    if "m" not in _MODEL:
        _MODEL["m"] = constraint_model()
    return _MODEL["m"]


def _rows(m, q, qd, t, mode=1):
    W = _state_workspace(m, q, qd, m.jstate0)
    return evaluate_rows(m, program_for(m), W, q, qd, t, mode)


def _block(m, rows, name):
    prog = program_for(m)
    k = prog.names.index(name)
    return slice(rows.roff[k], rows.roff[k + 1])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rows_match_finite_differences_of_their_values(seed):
    """dg/dt = G qd + gdot and d2g/dt2 = G qdd + ga along q(s) = q + s qd + s^2/2 qdd at random states, for every
    row type with a position-level value (loops are checked against point rows below: their directions are
    deliberately not differentiated)."""
    m = _model()
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-0.8, 0.8, m.ndof), rng.normal(size=m.ndof), rng.normal(size=m.ndof)
    t, e = rng.uniform(0.2, 1.8), FD_STEP
    R = _rows(m, q, qd, t)

    def value(s):
        return _rows(m, q + s * qd + 0.5 * s * s * qdd, qd + s * qdd, t + s)

    def rate(s):
        r = value(s)
        return r.G @ (qd + s * qdd) + r.gd

    dg = (value(e).g - value(-e).g) / (2 * e)
    d2g = (rate(e) - rate(-e)) / (2 * e)
    checked = set()
    for c in program_for(m).constraints:
        if c.type in ("loop", "self_collision"):
            continue
        s = _block(m, R, c.name)
        if not c.velocity_only:
            assert rel(dg[s], (R.G @ qd + R.gd)[s], 1.0) < FD_REL, c.name
        assert rel(d2g[s], (R.G @ qdd + R.ga)[s], 1.0) < FD_REL, c.name
        checked.add(c.type)
    assert checked == set(rm.constraints.CONSTRAINTS) - {"loop", "self_collision"}


def _axis_directions(a):
    """v1, v2 of the hinge-type loop (wave2.md §1.0), written again here."""
    a = a / np.linalg.norm(a)
    v1 = np.zeros(3)
    v1[int(np.argmin(np.abs(a)))] = 1.0
    v2 = np.cross(a, v1)
    v2 /= np.linalg.norm(v2)
    v1 = np.cross(v2, a)
    return np.stack([v1 / np.linalg.norm(v1), v2])


def test_hinge_loop_rows_are_point_rows_projected_on_the_axis_normals():
    b = rm.ModelBuilder("loops", (0, 0, -9.81))
    b.add_body("a", rm.Cuboid(1, 1, 4), rm.Revolute((1, 0, 0)), joint_name="ja",
               body_placement=rm.spatial.trans(0, 0, -2))
    b.add_body("c", rm.Cuboid(1, 1, 4), rm.Revolute((0.3, 1, 0.2)), parent="a", joint_name="jc",
               joint_placement=rm.spatial.trans(0, 0, -4), body_placement=rm.spatial.trans(0, 0, -2))
    b.add_body("d", rm.Cuboid(3, 1, 1), rm.Universal(), joint_name="jd", joint_placement=rm.spatial.trans(5, 0, 0))
    pts = [("c", (0.2, 0.1, -3.0)), ("d", (1.0, 0.5, 0.2))]
    b.add_constraint(rm.constraints.Loop(pts, name="loop"))
    b.add_constraint(rm.constraints.Point(pts, name="point"))
    # the world axis of c's revolute joint
    _loop_rows_are_projected_point_rows(b.build(), 4, lambda m, kin: kin.E_wj[1, :3, :3] @ m.joints[1].params("jc")[:3])


def _loop_rows_are_projected_point_rows(m, seed, world_axis):
    """At random states the rows of constraint "loop" are those of "point" projected on the normals of
    ``world_axis(model, kinematics)``."""
    rng = np.random.default_rng(seed)
    for _ in range(3):
        q, qd = rng.uniform(-1, 1, m.ndof), rng.normal(size=m.ndof)
        R = _rows(m, q, qd, 0.0)
        D = _axis_directions(world_axis(m, rm.evaluate_kinematics(m, q, qd)))
        L, P = _block(m, R, "loop"), _block(m, R, "point")
        for x in ("G", "g", "gd", "ga"):
            assert rel(getattr(R, x)[L], D @ getattr(R, x)[P], 1.0) < ROUNDOFF * 100, x


def test_velocity_only_rows_give_the_twist_components_and_the_joint_rate():
    m = _model()
    rng = np.random.default_rng(7)
    q, qd = rng.uniform(-0.8, 0.8, m.ndof), rng.normal(size=m.ndof)
    R = _rows(m, q, qd, 0.5, 0)
    kin = rm.evaluate_kinematics(m, q, qd)
    i6 = m.body_names.index("b6")
    s = _block(m, R, "pbody")  # all six body-frame twist components of b6: G qd = -phi
    assert rel(R.G[s] @ qd, -kin.phi[i6], 1.0) < ROUNDOFF * 100
    i5 = m.body_names.index("b5")
    s = _block(m, R, "pbody5")  # wz, vy of b5
    assert rel(R.G[s] @ qd, -kin.phi[i5][[2, 4]], 1.0) < ROUNDOFF * 100
    for name, joint in (("prate", "j7"), ("prate4", "j4")):  # G qd = the joint rate
        d = m.idx[m.joint_names.index(joint)]
        assert abs(R.G[_block(m, R, name)] @ qd - qd[d]).max() < 1e-12 * max(1.0, abs(qd[d]))


def test_targets_follow_their_profiles_and_world_frame_targets_use_the_start_rotation():
    m = _model()
    rng = np.random.default_rng(8)
    q, qd = rng.uniform(-0.8, 0.8, m.ndof), rng.normal(size=m.ndof)
    t = 1.3
    R = _rows(m, q, qd, t, 0)
    prog = program_for(m)
    pj = prog.constraints[prog.names.index("pj")]
    x, xd, _ = pj.profile.evaluate(t)
    s = _block(m, R, "pj")
    assert rel(R.g[s], x - q[pj.dofs]) < ROUNDOFF and rel(R.gd[s], xd) < ROUNDOFF
    pb = prog.constraints[prog.names.index("pbody")]
    kin = rm.evaluate_kinematics(m, q, qd)
    Rb = kin.E_wb[m.body_names.index("b6"), :3, :3]
    w, _, _ = pb.angular.evaluate(t)
    v, _, _ = pb.linear.evaluate(t)
    assert rel(R.gd[_block(m, R, "pbody")], np.concatenate([w, Rb.T @ v])) < ROUNDOFF * 10
    pr = prog.constraints[prog.names.index("prate")]
    assert R.gd[_block(m, R, "prate")][0] == pytest.approx(-pr.profile.evaluate(t)[0], rel=1e-14)


def test_limit_and_floor_rows_are_active_exactly_when_the_spec_says():
    b = rm.ModelBuilder("act", (0, 0, -9.81))
    b.add_body("l", rm.Cuboid(1, 1, 1), rm.Revolute((0, 1, 0)), joint_name="j")
    b.add_body("ball", rm.Sphere(0.5), rm.Translational(), joint_name="free")
    b.add_constraint(rm.constraints.Limit("j", -0.5, 0.5, name="lim"))
    b.add_constraint(rm.constraints.Floor("ball", radius=0.5, name="floor"))
    m = b.build()
    for qj, z, kinds in ((0.0, 1.0, [2, 2, 2]), (-0.5, 0.5, [1, 2, 2]), (0.5, 0.4999, [2, 1, 1]),
                         (0.7, 0.6, [2, 1, 2])):
        q = np.array([qj, 0.0, 0.0, z])
        R = _rows(m, q, np.zeros(4), 0.0, 0)
        assert list(R.kind) == kinds, (qj, z)
        assert R.g[0] == pytest.approx(-0.5 - qj) and R.g[1] == pytest.approx(qj - 0.5)  # c = ql - q, q - qu
        assert R.g[2] == pytest.approx(0.5 - z)  # c = r - z


@pytest.mark.parametrize("hold", [True, False])
def test_sigmoid_profile_holds_b_from_t1_unless_told_not_to(hold):
    """The compiled profile kernel equals the Python profile before, at and after t1; the rate and acceleration are
    the central differences of the value (away from the switch); ``hold=False`` (reference/20) keeps the formula
    at t >= t1, ``hold=True`` (reference/09) gives b with zero rate there; ``hold`` survives the scene-file form."""
    from redmax.constraints._row_kernels import profile_eval, profile_len
    from redmax.constraints.profiles import Sigmoid, profile_from

    p = Sigmoid(7.0, 1.3, 0.5, 3.0, hold=hold)
    cf = p.encode()
    assert profile_len(cf, 0) == cf.size
    for t in (0.2, 1.7, 2.999, 3.0, 3.4):
        x, xd, xdd = (float(v[0]) for v in p.evaluate(t))
        assert np.allclose(profile_eval(cf, 0, t, 0), (x, xd, xdd), rtol=1e-14, atol=0.0)
        if t < 3.0 or not hold:
            h = 1e-5
            f = [float(p.evaluate(t + s)[0][0]) for s in (-h, 0.0, h)]
            g = [float(p.evaluate(t + s)[1][0]) for s in (-h, h)]
            assert xd == pytest.approx((f[2] - f[0]) / (2 * h), rel=1e-7)
            assert xdd == pytest.approx((g[1] - g[0]) / (2 * h), rel=1e-6, abs=1e-9)
        if t >= 3.0:
            assert (x == 1.3 and xd == 0.0) if hold else (x < 1.3 and xd > 0.0)
    q = profile_from(p.to_scene())
    assert q.hold == hold and np.array_equal(q.encode(), cf)
    with pytest.raises(rm.ModelError, match="hold: expected true or false"):
        profile_from({"type": "sigmoid", "a": 7, "b": 1, "t0": 0, "t1": 1, "hold": 1})


def test_hinge_loop_with_an_axis_in_the_body_frame_projects_on_the_normals_of_the_rotated_axis():
    """``Loop(points, axis=...)`` (the umbrella's closures, whose bodies hang on universal joints): the axis is
    fixed in A's body frame, so its world direction is A's world rotation times it (the body placement's rotation
    included); the rows are the point rows projected on its normals.  A hanging on a universal joint is refused
    without the axis."""
    b = rm.ModelBuilder("loops", (0, 0, -9.81))
    tilt = rm.spatial.make_E(rm.spatial.rot_z(0.4) @ rm.spatial.rot_x(0.3), (0.0, 0.0, -2.0))
    b.add_body("a", rm.Cuboid(1, 1, 4), rm.Universal(), joint_name="ja", body_placement=tilt)
    b.add_body("d", rm.Cuboid(3, 1, 1), rm.Universal(), joint_name="jd", joint_placement=rm.spatial.trans(5, 0, 0))
    pts = [("a", (0.2, 0.1, -1.5)), ("d", (1.0, 0.5, 0.2))]
    axis = np.array([0.2, 1.0, -0.3])
    b.add_constraint(rm.constraints.Loop(pts, axis=axis, name="loop"))
    b.add_constraint(rm.constraints.Point(pts, name="point"))
    _loop_rows_are_projected_point_rows(b.build(), 5, lambda m, kin: kin.E_wb[0, :3, :3] @ axis)
    b2 = rm.ModelBuilder("refused", (0, 0, -9.81))
    b2.add_body("a", rm.Cuboid(1, 1, 4), rm.Universal())
    b2.add_constraint(rm.constraints.Loop([("a", (0, 0, 1)), ("world", (0, 0, 2))], name="loop"))
    with pytest.raises(rm.ModelError, match="revolute joint or its axis"):
        b2.build()
    with pytest.raises(rm.ModelError, match="axis"):
        rm.constraints.Loop(pts, axis=(0, 0, 0), name="bad")
