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


# -- KLANN --------------------------------------------------------------------------------------------------------
# A Klann leg (Klann's linkage as optimised by Walkin8r, lengths in cm): crank A-C, lower rocker B-H, connecting
# rod C-H-F (one body), upper rocker D-E, leg E-F-G (one body, foot G); the frame pivots A (origin), B, D.
_K = {"AC": 17.5, "BH": 23.7, "CF": 73.4, "CH": 38.8, "DE": 34.1, "EF": 57.7, "EG": 111.7, "FG": 59.0, "FH": 35.2}
_KB, _KD = (-38.8, -12.5), (-14.6, 41.9)


def _circles(P, r, Q, s, side):
    """The intersection of the circles (P, r) and (Q, s) on ``side`` (+1 left of P->Q) of the plane (x, z)."""
    dx, dz = Q[0] - P[0], Q[1] - P[1]
    d = math.hypot(dx, dz)
    a = (r * r - s * s + d * d) / (2 * d)
    hh = math.sqrt(max(r * r - a * a, 0.0))
    ux, uz = dx / d, dz / d
    return (P[0] + a * ux - side * hh * uz, P[1] + a * uz + side * hh * ux)


def klann_points(theta: float) -> dict:
    """The joint points (x, z) of a Klann leg at crank angle theta (the assembly whose foot walks below the frame)."""
    C = (_K["AC"] * math.cos(theta), _K["AC"] * math.sin(theta))
    H = _circles(_KB, _K["BH"], C, _K["CH"], 1)
    F = _circles(C, _K["CF"], H, _K["FH"], 1)
    E = _circles(_KD, _K["DE"], F, _K["EF"], -1)
    G = _circles(E, _K["EG"], F, _K["FG"], 1)
    return {"A": (0.0, 0.0), "B": _KB, "C": C, "D": _KD, "E": E, "F": F, "G": G, "H": H}


def _bar(b, name, parent, pivot, parent_pivot, a, c, contact):
    """A bar body from point a to point c (x, z) on a revolute joint about -y at ``pivot`` (x, y, z; its parent's
    joint at ``parent_pivot``), its joint frame axis-aligned at q = 0; returns the map from a point (x, z) of the
    linkage's plane to the bar's body frame."""
    ln = math.hypot(c[0] - a[0], c[1] - a[1])
    ang = math.atan2(c[1] - a[1], c[0] - a[0])
    mid = (0.5 * (a[0] + c[0]) - pivot[0], 0.5 * (a[1] + c[1]) - pivot[2])
    Rb = rot_y(-ang)  # the bar's x along a -> c in the (x, z) plane
    b.add_body(name, Cuboid(ln, 2.0, 2.0), Revolute((0.0, -1.0, 0.0)), parent=parent, joint_name=name,
               joint_placement=trans(*(pivot[k] - parent_pivot[k] for k in range(3))),
               body_placement=make_E(Rb, (mid[0], 0.0, mid[1])), contact=contact)

    def local(P):
        v = (P[0] - pivot[0] - mid[0], 0.0, P[1] - pivot[2] - mid[1])
        return tuple(float(x) for x in Rb.T @ v)

    return local


@register("paper/klann", "KLANN (paper Fig. 1d, 5c; reconstruction): a walker on six Klann legs, two cranks of three "
          "legs each driven at 1 turn/s by the prescribed rate 'motor', joint and loop friction mu, floor mu 0.8",
          params={"mu": 0.0})
def paper_klann(mu: float = 0.0) -> Scene:
    from redmax.constraints import Constant as ConstantProfile
    from redmax.constraints import Loop, PrescribedRate
    from redmax.joints import Free3D

    if not mu >= 0:
        raise SceneError(f"paper/klann: mu must be >= 0, got {mu}")
    omega = 2 * PI
    b = ModelBuilder("paper/klann", G, friction={"joint": mu, "world": 0.8})
    th0 = 0.5 * PI
    legs = [(side, k) for side in (1, -1) for k in range(3)]
    feet = [klann_points(th0 + k * 2 * PI / 3 + (PI / 3 if side < 0 else 0.0))["G"][1] for side, k in legs]
    z0 = 1.0 - min(feet)  # the lowest foot 1 cm above the floor
    b.add_body("frame", Cuboid(100.0, 70.0, 10.0, density=0.2), Free3D(), joint_name="frame",
               joint_placement=trans(0.0, 0.0, z0), body_placement=trans(-68.0, 0.0, 15.0))  # (over the feet)
    cyl = Cylinder(1.0, 2.0)
    origin = (0.0, 0.0, 0.0)
    for side in (1, -1):
        tag = "l" if side > 0 else "r"
        crank = f"crank_{tag}"
        b.add_body(crank, Cuboid(2 * _K["AC"], 2.0, 2.0), Revolute((0.0, -1.0, 0.0)), parent="frame",
                   joint_name=crank, joint_placement=trans(0.0, side * 20.0, 0.0), contact=cyl)
        for k in range(3):
            th = th0 + k * 2 * PI / 3 + (PI / 3 if side < 0 else 0.0)
            pt = klann_points(th)
            y = side * (25.0 + 5.0 * k)
            leg = f"{tag}{k}"

            def at(P, y=y):
                return (P[0], y, P[1])

            to_rod = _bar(b, f"rod_{leg}", crank, at(pt["C"]), (0.0, side * 20.0, 0.0), pt["C"], pt["F"], cyl)
            to_leg = _bar(b, f"leg_{leg}", f"rod_{leg}", at(pt["F"]), at(pt["C"]), pt["F"], pt["G"], cyl)
            to_low = _bar(b, f"low_{leg}", "frame", at(pt["B"]), origin, pt["B"], pt["H"], cyl)
            to_up = _bar(b, f"up_{leg}", "frame", at(pt["D"]), origin, pt["D"], pt["E"], cyl)
            b.add_constraint(Loop([(f"low_{leg}", to_low(pt["H"])), (f"rod_{leg}", to_rod(pt["H"]))], contact=cyl,
                                  name=f"knee_{leg}"))
            b.add_constraint(Loop([(f"up_{leg}", to_up(pt["E"])), (f"leg_{leg}", to_leg(pt["E"]))], contact=cyl,
                                  name=f"hip_{leg}"))
            b.add_constraint(Floor(f"leg_{leg}", corners=[to_leg(pt["G"])], name=f"foot_{leg}"))
    b.couple("crank_r", "crank_l", 1.0)
    b.add_constraint(PrescribedRate("crank_l", ConstantProfile(omega), name="motor"))
    return Scene("paper/klann", b.build(), duration=2.0, dt=5e-3, baumgarte=20.0)
