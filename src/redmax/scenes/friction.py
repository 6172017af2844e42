"""The friction scenes: joint friction on revolute, spherical and prismatic joints, floor friction, and the paper's
CHAIN (RedMax paper §5 and §6, Fig. 5a-b).

Units cm, g, s; density 1; gravity (0, 0, -980).  Friction is resolved by Bilateral Staggered Projections with the
correct final step (``redmax.friction.bisp``); ``compat="original"`` reproduces the original code's numbers.
"""

from __future__ import annotations

import math

from redmax.bodies import Cuboid, Sphere
from redmax.builder import ModelBuilder
from redmax.constraints import Floor
from redmax.errors import SceneError
from redmax.friction import Ball, Box, Cylinder
from redmax.joints import Fixed, Prismatic, Revolute, SphericalExp
from redmax.scene import Scene
from redmax.scenes.catalogue import register
from redmax.spatial import make_E, rot_x, rot_y, trans

G = (0.0, 0.0, -980.0)
PI = math.pi
X, Y, Z = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)

__all__ = ["chain"]


def chain(name: str, n: int, radius: float, mu: float) -> ModelBuilder:
    """The CHAIN of the paper's Fig. 5 (scene 27 with n links): C[10 1 1] links on revolute z joints 10 apart along
    x, the root turned by Rx(pi/4) so that the axes are 45 degrees from gravity, cylinders (radius, height 1)."""
    b = ModelBuilder(name, G, friction={"joint": mu})
    prev = None
    for k in range(n):
        nm = f"link{k + 1}"
        b.add_body(nm, Cuboid(10, 1, 1), Revolute(Z), parent=prev, joint_name=f"joint{k + 1}",
                   joint_placement=make_E(rot_x(PI / 4)) if k == 0 else trans(10, 0, 0),
                   body_placement=trans(5, 0, 0), contact=Cylinder(radius, 1.0))
        prev = nm
    return b


@register("reference/27", "internal friction, revolute: a 2-link chain on z axes tilted 45 degrees from gravity, "
          "cylinders r 0.5 h 1, mu 0.6")
def scene_27() -> Scene:
    return Scene("reference/27", chain("reference/27", 2, 0.5, 0.6).build(), duration=1.0, dt=1e-2)


@register("reference/28", "internal friction, spherical: two links on ball joints (contact radius 1, mu 5) falling "
          "from horizontal")
def scene_28() -> Scene:
    b = ModelBuilder("reference/28", G, friction={"joint": 5.0})
    b.add_body("link1", Cuboid(10, 1, 1), SphericalExp(), joint_name="joint1", body_placement=trans(5, 0, 0),
               contact=Ball(1.0))
    b.add_body("link2", Cuboid(10, 1, 1), SphericalExp(), parent="link1", joint_name="joint2",
               joint_placement=trans(10, 0, 0), body_placement=trans(5, 0, 0), contact=Ball(1.0))
    return Scene("reference/28", b.build(), duration=1.0, dt=1e-2)


@register("reference/29", "internal friction, prismatic: two links sliding along a 60-degree incline (boxes 5 x 0.5 "
          "x 5, mu 0.8 < tan 60)")
def scene_29() -> Scene:
    b = ModelBuilder("reference/29", G, friction={"joint": 0.8})
    box = Box((5.0, 0.5, 5.0))
    b.add_body("link1", Cuboid(10, 1, 1), Prismatic(X), joint_name="joint1", joint_placement=make_E(rot_y(PI / 3)),
               body_placement=trans(5, 0, 0), contact=box)
    b.add_body("link2", Cuboid(10, 1, 1), Prismatic(X), parent="link1", joint_name="joint2",
               joint_placement=trans(10, 0, 0), body_placement=trans(5, 0, 0), contact=box)
    return Scene("reference/29", b.build(), duration=1.0, dt=1e-2)


@register("reference/31", "floor friction: a 2-link chain with a unit sphere at its tip falls on the floor z = -15 "
          "(joint mu 0.1 with cylinders r 1 h 1, floor mu 0.2)")
def scene_31() -> Scene:
    b = ModelBuilder("reference/31", G, friction={"joint": 0.1, "world": 0.2})
    for k, q in enumerate((PI / 4, -PI / 4)):  # the standard chain of 2 (rev y, 10 apart), cylinders r 1 h 1
        b.add_body(f"link{k + 1}", Cuboid(10, 1, 1), Revolute(Y), parent=f"link{k}" if k else None,
                   joint_name=f"joint{k + 1}", joint_placement=trans(10, 0, 0) if k else None,
                   body_placement=trans(5, 0, 0), q=[q], contact=Cylinder(1.0, 1.0))
    b.add_body("ball", Sphere(1.0), Fixed(), parent="link2", joint_name="joint3", joint_placement=trans(10, 0, 0))
    b.add_constraint(Floor("ball", radius=1.0, origin=(0.0, 0.0, -15.0), name="floor"))
    return Scene("reference/31", b.build(), duration=2.0, dt=1e-2, baumgarte=10.0)


@register("paper/chain", "CHAIN (paper Fig. 5a-b): n links on revolute joints 45 degrees from gravity with joint "
          "friction; stops root first, sooner for a larger joint radius", params={"n": 10, "radius": 0.5, "mu": 0.6})
def paper_chain(n: int = 10, radius: float = 0.5, mu: float = 0.6) -> Scene:
    if not 1 <= n <= 200:
        raise SceneError(f"paper/chain: n must be in [1, 200], got {n}")
    if not (radius > 0 and mu >= 0):
        raise SceneError(f"paper/chain: radius must be > 0 and mu >= 0, got radius={radius}, mu={mu}")
    return Scene("paper/chain", chain("paper/chain", n, radius, mu).build(), duration=3.0, dt=1e-2)
