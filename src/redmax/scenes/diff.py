"""The differentiable catalogue (diff/NN), force set-ups: diff/10 to diff/14.

Defaults of that catalogue: duration 1 s, h = 1e-2, gravity (0, 0, -980).  These scenes are meant for
the fully implicit BDF integrators (a later issue); they also run with linearly implicit Euler.
Joint limits, ground contact and cables are penalty forces.
"""

from __future__ import annotations

import math

from redmax.bodies import Cuboid
from redmax.forces import Cable, GroundContact, JointLimit, PointSpring, SpringDamper
from redmax.joints import Fixed, Free2D, Prismatic, Revolute
from redmax.model import ModelBuilder
from redmax.scenes import Scene, register
from redmax.scenes.reference import G, Y, _standard_chain, loop_mechanism_04
from redmax.spatial import make_E, rot_y, trans

PI = math.pi


@register("diff/10", "penalty loop: reference/04 closed by a stiff point-to-point spring (ks 1e7)")
def diff_10() -> Scene:
    b = ModelBuilder("diff/10", G)
    loop_mechanism_04(b)
    b.add_force(PointSpring(("b3", (0.0, 0.0, -5.0)), ("b4", (10.0, 0.0, 0.0)), ks=1e7, kd=0.0, name="loop",
                            stiffness="full"))
    return Scene("diff/10", b.build(), duration=1.0)


@register("diff/11", "free 2D box bouncing on penalty ground with friction (Geilinger et al. 2020)")
def diff_11() -> Scene:
    b = ModelBuilder("diff/11", (0.0, -980.0, 0.0))
    b.add_body("box", Cuboid(3, 1, 1), Free2D(), joint_name="free", q=[-1.0, 2.0, 0.0], qd=[5.0, 70.0, 2.0])
    corners = [(sx * 1.5, sy * 0.5, sz * 0.5) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    b.add_force(GroundContact([("box", c) for c in corners], kn=1e5, kd=30.0, kt=1e2, mu=0.5, normal=(0, 1, 0),
                              origin=(0, 0, 0), name="ground"))
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
    b.add_body("b4", Cuboid(1, 1, 1), Prismatic((1, 0, 0)), parent="b3", joint_name="j4",
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

