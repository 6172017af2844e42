"""The constraint scenes of the reference catalogue: loops, joint limits, equalities, mass-spring strands held by
attachment rows (reference/12), prescribed motion (reduced and maximal hybrid dynamics), a prescribed crank and
gears.

Units cm, g, s; density 1; gravity (0, 0, -980) unless stated.  Where the original has a defect (the upper joint
limit's sign, the prescribed-rate sign) the correct behaviour is built: reference/06 therefore differs from the
original's number, and reference/32 prescribes +4 pi for the crank to turn at +4 pi.
"""

from __future__ import annotations

import math

from redmax.bodies import Cuboid, Cylinder, Mesh
from redmax.builder import ModelBuilder
from redmax.constraints import Constant as ConstantProfile
from redmax.constraints import JointRatio, Limit, Loop, PiecewiseLinear, PrescribedBody, PrescribedJoint, PrescribedRate
from redmax.constraints import Sigmoid as SigmoidProfile
from redmax.deformables import Strand
from redmax.joints import Fixed, Prismatic, Revolute
from redmax.scenes import Scene, register
from redmax.scenes.reference import PI, G, Y, _standard_chain, loop_mechanism_04, reference_mesh_path
from redmax.spatial import make_E, rot_x, rot_y, rot_z, trans

__all__ = ["four_bar_30", "maximal_target_13"]


@register("reference/04", "loop: a four-bar closed by a hinge-type loop constraint, with a pendulum on the coupler")
def scene_04() -> Scene:
    b = ModelBuilder("reference/04", G)
    loop_mechanism_04(b)
    b.add_constraint(Loop([("b3", (0.0, 0.0, -5.0)), ("b4", (10.0, 0.0, 0.0))], name="loop"))
    return Scene("reference/04", b.build(), duration=2.0, dt=1e-2, baumgarte=5.0)


@register("reference/06", "joint limits: a 2-link chain, joint 2 limited to [-pi/4, pi/4] (QP, correct upper sign)")
def scene_06() -> Scene:
    b = ModelBuilder("reference/06", G)
    _standard_chain(b, 2)
    b.add_constraint(Limit("joint2", -PI / 4, PI / 4, name="limit_J2"))
    return Scene("reference/06", b.build(), duration=2.0, dt=1e-2, baumgarte=5.0)


@register("reference/07", "equality-constrained angles: q2 = 0.5 q1 and q3 = 0.5 q2 on a 3-link chain")
def scene_07() -> Scene:
    b = ModelBuilder("reference/07", G)
    _standard_chain(b, 3)
    b.add_constraint(JointRatio(["joint1", "joint2"], 0.5, name="ratio_12"))
    b.add_constraint(JointRatio(["joint2", "joint3"], 0.5, name="ratio_23"))
    return Scene("reference/07", b.build(), duration=2.0, dt=2e-2, baumgarte=5.0)


@register("reference/08", "equality and loop: a closed chain with q6 = 0.5 q3 and a spinning pendulum")
def scene_08() -> Scene:
    b = ModelBuilder("reference/08", G)
    b.add_body("b1", Cuboid(10, 1, 1), Fixed(), joint_name="j1")
    b.add_body("b2", Cuboid(1, 1, 10), Revolute(Y), parent="b1", joint_name="j2", joint_placement=trans(5, 0, 0),
               body_placement=trans(0, 0, -5))
    b.add_body("b3", Cuboid(1, 1, 10), Revolute(Y), parent="b2", joint_name="j3", joint_placement=trans(0, 0, -10),
               body_placement=trans(0, 0, -5))
    b.add_body("b4", Cuboid(10, 1, 1), Revolute(Y), parent="b3", joint_name="j4", joint_placement=trans(0, 0, -10),
               body_placement=trans(-5, 0, 0))
    b.add_body("b5", Cuboid(1, 1, 10), Revolute(Y), parent="b4", joint_name="j5", joint_placement=trans(-10, 0, 0),
               body_placement=trans(0, 0, 5))
    b.add_body("b6", Cuboid(1, 1, 10), Revolute(Y), parent="b5", joint_name="j6", joint_placement=trans(0, 0, 10),
               body_placement=trans(0, 0, 5))
    b.add_body("b7", Cuboid(1, 1, 10), Revolute(Y), parent="b4", joint_name="j7", joint_placement=trans(-5, 0, 0),
               body_placement=trans(0, 0, -5), qd=[10.0])
    b.add_constraint(Loop([("b6", (0.0, 0.0, 5.0)), ("b1", (-5.0, 0.0, 0.0))], name="loop"))
    b.add_constraint(JointRatio(["j3", "j6"], 0.5, name="ratio_36"))
    return Scene("reference/08", b.build(), duration=2.0, dt=2e-2, baumgarte=5.0)


@register("reference/09", "hybrid dynamics: joint 1 of a 3-link chain prescribed by a sigmoid, no gravity")
def scene_09() -> Scene:
    b = ModelBuilder("reference/09", (0.0, 0.0, 0.0))
    _standard_chain(b, 3)
    b.add_constraint(PrescribedJoint("joint1", SigmoidProfile(7.0, 1.5 * PI, 0.0, 7.0), name="drive_J1"))
    return Scene("reference/09", b.build(), duration=10.0, dt=2e-2, baumgarte=5.0)


def maximal_target_13(body: str, name: str) -> PrescribedBody:
    """The prescribed twist of reference/13 (and 20): body-frame omega_y and the x, z components of R^T v_w(t)."""
    w = PiecewiseLinear([0.0, 2.0, 6.0, 8.0], [[0, 0, 0], [0, -2, 0], [0, 2, 0], [0, 0, 0]])
    v = PiecewiseLinear([0.0, 4.0, 6.0, 8.0], [[0, 0, 0], [0, 0, 0], [-4, 0, 0], [0, 0, 0]], frame="world")
    return PrescribedBody(body, ["wy", "vx", "vz"], angular=w, linear=v, name=name)


@register("reference/12", "mass-spring strands: two explicit strands attached to a 2-link chain (KKT rows)")
def scene_12() -> Scene:
    b = ModelBuilder("reference/12", G)
    _standard_chain(b, 2)
    b.add_deformable(Strand("strand1", [("world", (30.0, 0.0, 10.0)), ("link2", (5.0, 0.0, 0.0))], nodes=3,
                            stiffness=1e5, mass=1.0))
    b.add_deformable(Strand("strand2", [("link1", (0.0, 0.0, 0.0)), ("link2", (0.0, 0.0, 0.0))], nodes=2,
                            stiffness=1e5, mass=1.0))
    return Scene("reference/12", b.build(), duration=1.0, dt=5e-3, baumgarte=5.0)


@register("reference/13", "maximal hybrid dynamics: body 4's twist components wy, vx, vz prescribed")
def scene_13() -> Scene:
    b = ModelBuilder("reference/13", G)
    b.add_body("b1", Cuboid(1, 1, 10), Revolute(Y), joint_name="j1", body_placement=trans(0, 0, -5))
    b.add_body("b2", Cuboid(10, 1, 1), Revolute(Y), parent="b1", joint_name="j2", joint_placement=trans(0, 0, -10),
               body_placement=trans(5, 0, 0))
    b.add_body("b3", Cuboid(1, 1, 10), Revolute(Y), parent="b2", joint_name="j3", joint_placement=trans(10, 0, 0),
               body_placement=trans(0, 0, 5))
    b.add_body("b4", Cuboid(10, 1, 1), Revolute(Y), parent="b3", joint_name="j4", joint_placement=trans(0, 0, 10),
               body_placement=trans(5, 0, 0))
    b.add_constraint(maximal_target_13("b4", "twist_B4"))
    return Scene("reference/13", b.build(), duration=10.0, dt=5e-2, baumgarte=5.0)


@register("reference/15", "prismatic joint in a loop: a sliding bar closed by a hinge-type loop")
def scene_15() -> Scene:
    b = ModelBuilder("reference/15", G)
    b.add_body("b1", Cuboid(22, 1, 1), Fixed(), joint_name="j1")
    b.add_body("b2", Cuboid(1, 1, 10), Revolute(Y), parent="b1", joint_name="j2", joint_placement=trans(-11, 0, 0),
               body_placement=trans(0, 0, -5))
    b.add_body("b3", Cuboid(22, 1, 1), Prismatic((1.0, 0.0, 0.0)), parent="b2", joint_name="j3",
               joint_placement=trans(0, 0, -10), body_placement=trans(11, 0, 0))
    b.add_body("b4", Cuboid(1, 1, 10), Revolute(Y), parent="b3", joint_name="j4", joint_placement=trans(22, 0, 0),
               body_placement=trans(0, 0, 5))
    b.add_body("b5", Cuboid(1, 1, 10), Revolute(Y), parent="b3", joint_name="j5", joint_placement=trans(11, 0, 0),
               body_placement=trans(0, 0, -5), q=[3 * PI / 4])
    b.add_constraint(Loop([("b4", (0.0, 0.0, 5.0)), ("b1", (11.0, 0.0, 0.0))], name="loop"))
    return Scene("reference/15", b.build(), duration=2.0, dt=1e-2, baumgarte=5.0)


@register("reference/20", "reduced/maximal hybrid dynamics: body 5's twist and joint 3 (sigmoid) prescribed")
def scene_20() -> Scene:
    b = ModelBuilder("reference/20", G)
    b.add_body("b1", Cuboid(1, 1, 10), Revolute(Y), joint_name="j1", body_placement=trans(0, 0, -5))
    b.add_body("b2", Cuboid(10, 1, 1), Revolute(Y), parent="b1", joint_name="j2", joint_placement=trans(0, 0, -10),
               body_placement=trans(5, 0, 0))
    b.add_body("b3", Cuboid(10, 1, 1), Revolute(Y), parent="b2", joint_name="j3", joint_placement=trans(10, 0, 0),
               body_placement=trans(5, 0, 0))
    b.add_body("b4", Cuboid(1, 1, 10), Revolute(Y), parent="b3", joint_name="j4", joint_placement=trans(10, 0, 0),
               body_placement=trans(0, 0, 5))
    b.add_body("b5", Cuboid(10, 1, 1), Revolute(Y), parent="b4", joint_name="j5", joint_placement=trans(0, 0, 10),
               body_placement=trans(5, 0, 0))
    b.add_constraint(maximal_target_13("b5", "twist_B5"))
    # hold=False: the original evaluates the sigmoid's formula at every step, also at the last target time t = t1
    b.add_constraint(PrescribedJoint("j3", SigmoidProfile(7.0, PI / 2, 0.0, 10.0, hold=False), name="drive_J3"))
    return Scene("reference/20", b.build(), duration=10.0, dt=5e-2, baumgarte=5.0)


def four_bar_30(b: ModelBuilder, root=None, root_placement=None, q1=None, contact=None) -> None:
    """The Grashof crank-rocker of reference/30 (ground bar, crank, coupler, rocker) and its hinge-type loop
    (A = the rocker).  ``root``: the ground bar's joint (default fixed).  ``contact``: the friction cylinder of
    the crank, coupler and rocker joints and of the loop (None: frictionless)."""
    area = math.sqrt(16.0 * 10.0 * 4.0 * 2.0)  # triangle with sides 6, 12, 14 (Heron)
    z = area / 3.0  # altitude on the side of length 6
    x = math.sqrt(14.0 ** 2 - z * z)  # 22/3
    th = math.atan2(z, x)
    xp = x - 6.0
    thp = math.atan2(z, xp)
    b.add_body("b1", Cuboid(10, 0.5, 0.5), root or Fixed(), joint_name="j1", joint_placement=root_placement,
               q=q1)
    b.add_body("b2", Cuboid(4, 0.5, 0.5), Revolute(Y), parent="b1", joint_name="j2", joint_placement=trans(-5, 0, 0),
               body_placement=trans(2, 0, 0), contact=contact)
    b.add_body("b3", Cuboid(14, 0.5, 0.5), Revolute(Y), parent="b2", joint_name="j3", joint_placement=trans(4, 0, 0),
               body_placement=make_E(rot_y(-th), (x / 2, 0.0, z / 2)), contact=contact)
    b.add_body("b4", Cuboid(12, 0.5, 0.5), Revolute(Y), parent="b3", joint_name="j4", joint_placement=trans(x, 0, z),
               body_placement=make_E(rot_y(-thp), (-xp / 2, 0.0, -z / 2)), contact=contact)
    b.add_constraint(Loop([("b4", (-6.0, 0.0, 0.0)), ("b1", (5.0, 0.0, 0.0))], contact=contact, name="loop"))


@register("reference/32", "prescribed crank: the four-bar hanging on a revolute root, crank driven at +4 pi rad/s")
def scene_32() -> Scene:
    b = ModelBuilder("reference/32", G)
    four_bar_30(b, Revolute(Y), trans(0, 0, 10), [PI])
    b.add_constraint(PrescribedRate("j2", ConstantProfile(4 * PI), name="crank"))
    return Scene("reference/32", b.build(), duration=1.0, dt=5e-3, baumgarte=20.0)


@register("reference/34", "gears: two counter-rotating 1:1 gears (q4 = -q2) driven by an off-axis bar")
def scene_34() -> Scene:
    b = ModelBuilder("reference/34", G)
    gear = Mesh.from_obj(reference_mesh_path("gears.obj"), density=0.1)
    axle = make_E(rot_x(PI / 2), (0.0, 0.0, 0.0))
    b.add_body("bar", Cuboid(1, 1, 6), Fixed(), joint_name="j1", joint_placement=make_E(rot_z(PI), (0.0, 0.0, 0.0)))
    b.add_body("top_axle", Cylinder(0.2, 3.5), Revolute(Y), parent="bar", joint_name="j2",
               joint_placement=trans(0, -0.25, 2), body_placement=axle)
    b.add_body("top_gear", gear, Fixed(), parent="top_axle", joint_name="j3", joint_placement=trans(0, -0.35, 0),
               body_placement=axle)
    b.add_body("bottom_axle", Cylinder(0.2, 3.0), Revolute(Y), parent="bar", joint_name="j4",
               joint_placement=trans(0, -0.5, -2), body_placement=axle)
    b.add_body("bottom_gear", gear, Fixed(), parent="bottom_axle", joint_name="j5", joint_placement=trans(0, -0.1, 0),
               body_placement=axle)
    b.add_body("bottom_bar", Cuboid(5, 0.25, 0.25), Fixed(), parent="bottom_axle", joint_name="j6",
               body_placement=trans(0, 1.5, 0))
    b.add_body("top_bar", Cuboid(7, 0.25, 0.25), Fixed(), parent="top_axle", joint_name="j7",
               body_placement=trans(2, 1.75, 0))
    b.add_constraint(JointRatio(["j2", "j4"], -1.0, name="gears"))
    return Scene("reference/34", b.build(), duration=1.0, dt=1e-2, baumgarte=5.0)
