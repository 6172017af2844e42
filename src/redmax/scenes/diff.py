"""The differentiable catalogue (diff/NN): joint set-ups diff/00 to diff/09, force set-ups diff/10 to diff/14, and
the adjoint reaching scenes diff/100 (BDF1) and diff/101 (BDF2) with their objective and parameters.

Defaults of that catalogue: duration 1 s, h = 1e-2, gravity (0, 0, -980).  These scenes are meant for
the fully implicit integrators ("bdf1", "sdirk2", "bdf2"); they also run with linearly implicit Euler.
Joint limits, ground contact and cables are penalty forces.
"""

from __future__ import annotations

import math

from redmax.bodies import Cuboid
from redmax.builder import ModelBuilder
from redmax.forces import Cable, GroundContact, JointLimit, PointSpring, SpringDamper
from redmax.joints import Fixed, Free2D, Free3D, Planar, Prismatic, Revolute, SphericalEuler, Translational
from redmax.objectives import Objective, PointTarget
from redmax.params import Torque
from redmax.scenes import Scene, register
from redmax.scenes.reference import G, X, Y, Z, _scene_16_17, _standard_chain, loop_mechanism_04, universal_pendulum
from redmax.spatial import make_E, rot_y, trans

PI = math.pi


def _links(b: ModelBuilder, joints, qs) -> None:
    """Links C[10 1 1] at [5 0 0], joints 10 apart along x (reference/00 and /01)."""
    prev = None
    for k, (joint, q) in enumerate(zip(joints, qs, strict=True)):
        name = f"link{k + 1}"
        b.add_body(name, Cuboid(10, 1, 1), joint, parent=prev, joint_name=f"joint{k + 1}",
                   joint_placement=None if k == 0 else trans(10, 0, 0), body_placement=trans(5, 0, 0), q=q)
        prev = name


@register("diff/00", "simple serial chain: revolute and fixed joints alternating (reference/00)")
def diff_00() -> Scene:
    b = ModelBuilder("diff/00", G)
    rev = [PI / 4]
    _links(b, [Revolute(Y), Fixed(), Revolute(Y), Fixed(), Revolute(Y)], [rev, None, rev, None, rev])
    return Scene("diff/00", b.build(), duration=1.0)


@register("diff/01", "different revolute axes: z, y, z (reference/01)")
def diff_01() -> Scene:
    b = ModelBuilder("diff/01", G)
    _links(b, [Revolute(Z), Revolute(Y), Revolute(Z)], [[0.0], [PI / 2], [PI / 2]])
    return Scene("diff/01", b.build(), duration=1.0)


@register("diff/02", "branching: a T-shaped tree of revolute joints (reference/02)")
def diff_02() -> Scene:
    b = ModelBuilder("diff/02", G)
    b.add_body("b1", Cuboid(1, 1, 10), Revolute(X), joint_name="j1", joint_placement=trans(0, 0, 15),
               body_placement=trans(0, 0, -5))
    b.add_body("b2", Cuboid(1, 20, 1), Revolute(Z), parent="b1", joint_name="j2", joint_placement=trans(0, 0, -10))
    b.add_body("b3", Cuboid(1, 1, 10), Revolute(X), parent="b2", joint_name="j3", joint_placement=trans(0, -10, 0),
               body_placement=trans(0, 0, -5), q=[PI / 4])
    b.add_body("b4", Cuboid(1, 1, 10), Revolute(Y), parent="b2", joint_name="j4", joint_placement=trans(0, 10, 0),
               body_placement=trans(0, 0, -5), q=[PI / 4])
    return Scene("diff/02", b.build(), duration=1.0)


@register("diff/03", "prismatic root carrying a pendulum")
def diff_03() -> Scene:
    b = ModelBuilder("diff/03", G)
    b.add_body("b1", Cuboid(20, 1, 1), Prismatic(X), joint_name="j1")
    b.add_body("b2", Cuboid(1, 1, 10), Revolute(Y), parent="b1", joint_name="j2", joint_placement=trans(-10, 0, 0),
               body_placement=trans(0, 0, -5), q=[PI / 2])
    return Scene("diff/03", b.build(), duration=1.0)


@register("diff/04", "planar root joint carrying two pendulums (reference/16)")
def diff_04() -> Scene:
    return Scene("diff/04", _scene_16_17("diff/04", Planar(), G, PI / 2, PI / 4, 0.0, 0.0).build(), duration=1.0)


@register("diff/05", "translational root joint carrying two spinning pendulums, no gravity")
def diff_05() -> Scene:
    b = _scene_16_17("diff/05", Translational(), (0.0, 0.0, 0.0), 0.0, 0.0, -10.0, 10.0)
    return Scene("diff/05", b.build(), duration=2.0)


@register("diff/06", "free 2D projectile: a spinning cube thrown in the xy plane")
def diff_06() -> Scene:
    b = ModelBuilder("diff/06", (0.0, -980.0, 0.0))
    b.add_body("box", Cuboid(1, 1, 1), Free2D(), joint_name="free", q=[-10.0, -10.0, 0.0], qd=[50.0, 200.0, 20.0])
    return Scene("diff/06", b.build(), duration=0.4, dt=5e-3)


@register("diff/07", "double pendulum on spherical joints in Euler angles (chart XYZ, switching near singularities)")
def diff_07() -> Scene:
    b = ModelBuilder("diff/07", G)
    b.add_body("b1", Cuboid(1, 1, 10), SphericalEuler("XYZ"), joint_name="j1", body_placement=trans(0, 0, -5),
               q=[PI / 8, 0.0, 0.0], qd=[2.0, 2.0, 2.0])
    b.add_body("b2", Cuboid(1, 1, 10), SphericalEuler("XYZ"), parent="b1", joint_name="j2",
               joint_placement=trans(0, 0, -10), body_placement=trans(0, 0, -5), q=[PI / 2, 0.0, 0.0])
    return Scene("diff/07", b.build(), duration=1.0, dt=2e-3)


@register("diff/08", "universal joints: a 3-link pendulum (reference/14)")
def diff_08() -> Scene:
    return Scene("diff/08", universal_pendulum("diff/08"), duration=1.0)


@register("diff/09", "free 3D joint in Euler angles: a tumbling cube under weak gravity")
def diff_09() -> Scene:
    b = ModelBuilder("diff/09", (0.0, 0.0, -1.0))
    b.add_body("cube", Cuboid(1, 1, 1), Free3D("euler", "XYZ"), joint_name="free", qd=[0, 0, 3, 0.2, 0.4, 0.6])
    return Scene("diff/09", b.build(), duration=6.0, dt=5e-2)


@register("diff/10", "penalty loop: reference/04 closed by a stiff point-to-point spring (ks 1e7)")
def diff_10() -> Scene:
    b = ModelBuilder("diff/10", G)
    loop_mechanism_04(b)
    b.add_force(PointSpring(("b3", (0.0, 0.0, -5.0)), ("b4", (10.0, 0.0, 0.0)), ks=1e7, kd=0.0, name="loop",
                            stiffness="full"))
    return Scene("diff/10", b.build(), duration=1.0)


@register("diff/11", "free 2D box bouncing on penalty ground with friction (the original's law, Geilinger 2020)")
def diff_11() -> Scene:
    """The original's penalty ground (``ForceGroundCuboid``), including its dynamic-friction sign (along the sliding
    direction, a defect of the original: ``GroundContact(dynamic_friction="original")``), so that the scene
    reproduces the original's BDF1/BDF2 regression energies (with Coulomb's direction, the BDF2 trajectory leaves
    the original's at t = 0.163 s)."""
    b = ModelBuilder("diff/11", (0.0, -980.0, 0.0))
    b.add_body("box", Cuboid(3, 1, 1), Free2D(), joint_name="free", q=[-1.0, 2.0, 0.0], qd=[5.0, 70.0, 2.0])
    corners = [(sx * 1.5, sy * 0.5, sz * 0.5) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    b.add_force(GroundContact([("box", c) for c in corners], kn=1e5, kd=30.0, kt=1e2, mu=0.5, normal=(0, 1, 0),
                              origin=(0, 0, 0), name="ground", dynamic_friction="original"))
    return Scene("diff/11", b.build(), duration=0.6, dt=5e-4)


@register("diff/12", "spring-dampers (k 1e6, d 1e3) on a 2-link chain, one to the world")
def diff_12() -> Scene:
    b = ModelBuilder("diff/12", G)
    names = _standard_chain(b, 2)
    b.add_force(SpringDamper((None, (-5.0, 0.0, -5.0)), (names[1], (0.0, 0.0, -2.0)), k=1e6, d=1e3, name="sd1",
                             stiffness="full"))
    b.add_force(SpringDamper((names[0], (0.0, 0.0, 2.0)), (names[1], (0.0, 0.0, 2.0)), k=1e6, d=1e3, name="sd2",
                             stiffness="full"))
    return Scene("diff/12", b.build(), duration=1.0)


@register("diff/13", "tension-only cable through via points pulling a spring-loaded slider")
def diff_13() -> Scene:
    b = ModelBuilder("diff/13", G)
    b.add_body("b1", Cuboid(0.1, 0.1, 0.1), Fixed(), joint_name="j1")
    b.add_body("b2", Cuboid(10, 1, 1), Revolute(Y), parent="b1", joint_name="j2", body_placement=trans(5, 0, 0),
               q=[PI / 2])
    b.add_body("b3", Cuboid(10, 1, 1), Revolute(Y), parent="b2", joint_name="j3", joint_placement=trans(10, 0, 0),
               body_placement=trans(5, 0, 0), q=[-PI / 2])
    # The slider hangs on the fixed root (the original's JointPrismatic(joints{1}, ...)), 10 cm along x; the catalogue
    # text's "of J3" would put it on the second link (and give other energies than the original's).
    b.add_body("b4", Cuboid(1, 1, 1), Prismatic((1, 0, 0)), parent="b1", joint_name="j4",
               joint_placement=trans(10, 0, 0), stiffness=1e4, joint_damping=1e3)
    b.add_force(Cable([("b4", (0.0, 0.0, 0.0)), ("b2", (-4.0, 0.0, 1.0)), ("b3", (-4.0, 0.0, 1.0))], k=1e6, d=1e3,
                      name="cable", stiffness="full"))
    return Scene("diff/13", b.build(), duration=1.0)


@register("diff/14", "penalty joint limits [-pi/2, 0] (k 1e5, d 1e2) on a 3-link chain with joint damping")
def diff_14() -> Scene:
    b = ModelBuilder("diff/14", G)
    names = _standard_chain(b, 3, q=(0.0, -PI / 6, -PI / 6), root_placement=make_E(rot_y(PI / 2)),
                            joint_damping=1e2)
    for k in range(len(names)):
        b.add_force(JointLimit(f"joint{k + 1}", -PI / 2, 0.0, stiffness=1e5, damping=1e2, name=f"limit{k + 1}"))
    return Scene("diff/14", b.build(), duration=1.0, dt=5e-3)


def _reaching(name: str, target, integrator: str) -> Scene:
    """diff/100 and diff/101: a 2-link chain with stiff, damped joints reaching a target with constant joint torques
    ``1e5 p``; objective ``1e2/2 |x - x*|^2 + 1e-2/2 |p|^2`` (Sueda notes §3.5, Eq. 3.82), x the world position of
    link2's point (5, 0, 0) at t = 1 s."""
    b = ModelBuilder(name, G)
    _standard_chain(b, 2, q=(PI / 2, PI / 4), qd=(1.0, 1.0), stiffness=1e4, joint_damping=1e4)
    objective = Objective(PointTarget("link2", (5.0, 0.0, 0.0), target, time=1.0, weight=1e2), regularization=1e-2)
    params = [Torque("joint1", scale=1e5), Torque("joint2", scale=1e5)]
    return Scene(name, b.build(), duration=1.0, integrator=integrator, objective_spec=objective,
                 parameter_specs=params)


@register("diff/100", "adjoint reaching with BDF1: constant joint torques move a 2-link tip to (10, 0, -10)")
def diff_100() -> Scene:
    return _reaching("diff/100", (10.0, 0.0, -10.0), "bdf1")


@register("diff/101", "adjoint reaching with BDF2: constant joint torques move a 2-link tip to (-10, 0, -10)")
def diff_101() -> Scene:
    return _reaching("diff/101", (-10.0, 0.0, -10.0), "bdf2")
