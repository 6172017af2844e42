"""The reference catalogue (reference/NN): the scenes the RedMax authors validated their implementation on,
rebuilt so that results compare number for number with the original.

Units: centimetre, gram, second; density 1; gravity (0, 0, -980) unless stated.  "Joint at [x y z]"
is the translation of the joint placement, "body at [x y z]" that of the body placement.
"""

from __future__ import annotations

import math
from importlib import resources

import numpy as np

from redmax.bodies import Composite as CompositeBody
from redmax.bodies import Cuboid, Cylinder, Mesh
from redmax.builder import ModelBuilder
from redmax.forces import PointSpring, SpringDamper, WorldPointForce
from redmax.joints import (
    Composite,
    Fixed,
    Free2D,
    Free3D,
    Planar,
    Prismatic,
    Revolute,
    SphericalExp,
    SplineCurve,
    SplineSurface,
    Translational,
    Universal,
)
from redmax.model import Schedule
from redmax.scenes import Scene, register
from redmax.spatial import make_E, rot_y, trans

G = (0.0, 0.0, -980.0)
PI = math.pi
X, Y, Z = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)


def _standard_chain(b: ModelBuilder, n: int, q=None, qd=None, root_placement=None, **joint_kw) -> list[str]:
    """Standard chain of n links: rev y joints 10 apart along x, bodies C[10 1 1] at [5 0 0]."""
    names = []
    for k in range(n):
        name = f"link{k + 1}"
        b.add_body(
            name, Cuboid(10, 1, 1), Revolute(Y), parent=names[-1] if names else None, joint_name=f"joint{k + 1}",
            joint_placement=(root_placement if k == 0 else trans(10, 0, 0)), body_placement=trans(5, 0, 0),
            q=None if q is None else [q[k]], qd=None if qd is None else [qd[k]], **joint_kw,
        )
        names.append(name)
    return names


@register("reference/-1", "simpler serial chain: 2 links, q = (pi/2, pi/4)")
def scene_m1() -> Scene:
    b = ModelBuilder("reference/-1", G)
    _standard_chain(b, 2, q=(PI / 2, PI / 4))
    return Scene("reference/-1", b.build())


@register("reference/00", "simple serial chain: revolute and fixed joints alternating")
def scene_00() -> Scene:
    b = ModelBuilder("reference/00", G)
    prev = None
    for k, jt in enumerate(["rev", "fixed", "rev", "fixed", "rev"]):
        joint = Revolute(Y) if jt == "rev" else Fixed()
        name = f"link{k + 1}"
        b.add_body(name, Cuboid(10, 1, 1), joint, parent=prev, joint_name=f"joint{k + 1}",
                   joint_placement=None if k == 0 else trans(10, 0, 0), body_placement=trans(5, 0, 0),
                   q=[PI / 4] if jt == "rev" else None)
        prev = name
    return Scene("reference/00", b.build())


@register("reference/01", "different revolute axes: z, y, z")
def scene_01() -> Scene:
    b = ModelBuilder("reference/01", G)
    prev = None
    for k, (ax, q) in enumerate([(Z, 0.0), (Y, PI / 2), (Z, PI / 2)]):
        name = f"link{k + 1}"
        b.add_body(name, Cuboid(10, 1, 1), Revolute(ax), parent=prev, joint_name=f"joint{k + 1}",
                   joint_placement=None if k == 0 else trans(10, 0, 0), body_placement=trans(5, 0, 0), q=[q])
        prev = name
    return Scene("reference/01", b.build())


@register("reference/02", "branching: a T-shaped tree of revolute joints")
def scene_02() -> Scene:
    b = ModelBuilder("reference/02", G)
    b.add_body("b1", Cuboid(1, 1, 10), Revolute(X), joint_name="j1", joint_placement=trans(0, 0, 15),
               body_placement=trans(0, 0, -5))
    b.add_body("b2", Cuboid(1, 20, 1), Revolute(Z), parent="b1", joint_name="j2", joint_placement=trans(0, 0, -10))
    b.add_body("b3", Cuboid(1, 1, 10), Revolute(X), parent="b2", joint_name="j3", joint_placement=trans(0, -10, 0),
               body_placement=trans(0, 0, -5), q=[PI / 4])
    b.add_body("b4", Cuboid(1, 1, 10), Revolute(Y), parent="b2", joint_name="j4", joint_placement=trans(0, 10, 0),
               body_placement=trans(0, 0, -5), q=[PI / 4])
    return Scene("reference/02", b.build())


@register("reference/03", "spherical joints in exponential coordinates (double pendulum)")
def scene_03() -> Scene:
    b = ModelBuilder("reference/03", G)
    b.add_body("b1", Cuboid(1, 1, 10), SphericalExp(), joint_name="j1", body_placement=trans(0, 0, -5),
               q=[PI / 8, 0, 0], qd=[0, 0, 2])
    b.add_body("b2", Cuboid(1, 1, 10), SphericalExp(), parent="b1", joint_name="j2", joint_placement=trans(0, 0, -10),
               body_placement=trans(0, 0, -5), q=[PI / 8, 0, 0])
    return Scene("reference/03", b.build(), duration=3.0)


def _torques_05(k: int) -> Schedule:
    """Torque schedule of reference/05 for joint k (0-based): switches at t = 3 and t = 6."""
    table = [(0.0, 0.0, 100.0), (0.0, 100.0, -100.0), (100.0, -100.0, 0.0)]
    return Schedule([0.0, 3.0, 6.0], [[row[k]] for row in table])


@register("reference/05", "joint torques: piecewise-constant torques on a 3-link chain, no gravity")
def scene_05() -> Scene:
    b = ModelBuilder("reference/05", (0.0, 0.0, 0.0))
    _standard_chain(b, 3)
    for k in range(3):
        b.set_torque(f"joint{k + 1}", _torques_05(k))
    return Scene("reference/05", b.build(), duration=10.0, dt=5e-2)


@register("reference/11", "joint stiffness 1e4 and damping 1e3 on a 3-link chain, no gravity")
def scene_11() -> Scene:
    b = ModelBuilder("reference/11", (0.0, 0.0, 0.0))
    _standard_chain(b, 3, qd=(1.0, 0.0, 0.0), stiffness=1e4, joint_damping=1e3)
    return Scene("reference/11", b.build(), duration=5.0, dt=2e-2)


def universal_pendulum(name: str):
    """The 3-link pendulum on universal joints of reference/14 (also diff/08): a built Model."""
    b = ModelBuilder(name, G)
    qs = [(PI / 8, 0.0), (0.0, PI / 8), (PI / 8, 0.0)]
    prev = None
    for k in range(3):
        body = f"b{k + 1}"
        b.add_body(body, Cuboid(1, 1, 10), Universal(), parent=prev, joint_name=f"j{k + 1}",
                   joint_placement=None if k == 0 else trans(0, 0, -10), body_placement=trans(0, 0, -5), q=qs[k])
        prev = body
    return b.build()


@register("reference/14", "universal joints: a 3-link pendulum")
def scene_14() -> Scene:
    return Scene("reference/14", universal_pendulum("reference/14"))


def _scene_16_17(name: str, root, gravity, q2, q3, qd2, qd3) -> ModelBuilder:
    b = ModelBuilder(name, gravity)
    b.add_body("b1", Cuboid(10, 10, 1), root, joint_name="j1")
    b.add_body("b2", Cuboid(1, 1, 10), Revolute(Y), parent="b1", joint_name="j2", joint_placement=trans(-5, 0, 0),
               body_placement=trans(0, 0, -5), q=[q2], qd=[qd2])
    b.add_body("b3", Cuboid(1, 1, 10), Revolute(X), parent="b1", joint_name="j3", joint_placement=trans(0, -5, 0),
               body_placement=trans(0, 0, -5), q=[q3], qd=[qd3])
    return b


@register("reference/16", "planar root joint carrying two pendulums")
def scene_16() -> Scene:
    return Scene("reference/16", _scene_16_17("reference/16", Planar(), G, PI / 2, PI / 4, 0.0, 0.0).build())


@register("reference/17", "translational root joint carrying two spinning pendulums, no gravity")
def scene_17() -> Scene:
    b = _scene_16_17("reference/17", Translational(), (0.0, 0.0, 0.0), 0.0, 0.0, 2.0, 1.0)
    return Scene("reference/17", b.build())


@register("reference/18", "free 3D joint: a tumbling cube under weak gravity")
def scene_18() -> Scene:
    b = ModelBuilder("reference/18", (0.0, 0.0, -1.0))
    b.add_body("cube", Cuboid(1, 1, 1), Free3D(), joint_name="free", qd=[0, 0, 3, 0.2, 0.4, 0.6])
    return Scene("reference/18", b.build(), duration=7.0)


@register("reference/19", "composite joint: revolute x followed by prismatic x")
def scene_19() -> Scene:
    b = ModelBuilder("reference/19", G)
    b.add_body("b1", Cuboid(1, 1, 10), Composite(Revolute(X), Prismatic(X)), joint_name="j1",
               body_placement=trans(0, 0, 5), q=[0.1, 0.0], qd=[0.0, 1.0])
    return Scene("reference/19", b.build(), dt=2e-2)


@register("reference/21", "spline curve joint between two pendulum links")
def scene_21() -> Scene:
    b = ModelBuilder("reference/21", G)
    frames = [make_E(rot_y(PI), (-10, 0, 0)), make_E(rot_y(PI / 2), (0, 0, -2)), make_E(rot_y(0.0), (10, 0, 0)),
              make_E(rot_y(-PI / 2), (0, 0, 2))]
    b.add_body("b1", Cuboid(1, 1, 10), Revolute(Y), joint_name="j1", body_placement=trans(0, 0, -5))
    b.add_body("b2", Cuboid(10, 1, 1), SplineCurve(frames), parent="b1", joint_name="j2",
               joint_placement=trans(0, 0, -10), body_placement=trans(5, 0, 0))
    b.add_body("b3", Cuboid(10, 1, 1), Revolute(Y), parent="b2", joint_name="j3", joint_placement=trans(10, 0, 0),
               body_placement=trans(5, 0, 0), q=[15 * PI / 16])
    return Scene("reference/21", b.build(), dt=5e-3)


def spline_surface_grid_22() -> np.ndarray:
    """Control grid (6, 4, 4) of reference/22: fields (x, y, z, a, b, c) at (i1, i2)."""
    g = np.zeros((6, 4, 4))
    for i1 in range(4):
        for i2 in range(4):
            s1, s2 = i1 / 3.0, i2 / 3.0
            x, y = -15.0 + 30.0 * s1, -15.0 + 30.0 * s2
            a = -PI / 4 + (PI / 2) * s1
            g[:, i1, i2] = (x, y, 0.05 * (x * x + y * y), a, a, 0.0)
    return g


@register("reference/22", "spline surface joint (2 DOF) in a 3-link pendulum")
def scene_22() -> Scene:
    b = ModelBuilder("reference/22", G)
    b.add_body("b1", Cuboid(1, 1, 10), Revolute(X), joint_name="j1", body_placement=trans(0, 0, -5), q=[PI / 8])
    b.add_body("b2", Cuboid(1, 1, 10), SplineSurface(spline_surface_grid_22()), parent="b1", joint_name="j2",
               joint_placement=trans(0, 0, -14), body_placement=trans(0, 0, -5), q=[0.5, 0.5])
    b.add_body("b3", Cuboid(1, 1, 10), Revolute(Y), parent="b2", joint_name="j3", joint_placement=trans(0, 0, -10),
               body_placement=trans(0, 0, -5), q=[PI / 4])
    return Scene("reference/22", b.build())


@register("reference/25", "composite body: a box and a cylinder on one revolute joint")
def scene_25() -> Scene:
    b = ModelBuilder("reference/25", G)
    body = CompositeBody([(Cuboid(1, 1, 10), trans(0, 0, -5)),
                          (Cylinder(1.0, 10.0), make_E(rot_y(PI / 2), (5, 0, -10)))])
    b.add_body("b1", body, Revolute(Y), joint_name="j1")
    return Scene("reference/25", b.build())


def reference_mesh_path(name: str = "cuboid.obj") -> str:
    """Filesystem path of a mesh shipped with the package (scenes/data)."""
    return str(resources.files("redmax.scenes").joinpath("data", name))


@register("reference/26", "mesh bodies: two boxes read from an OBJ file (Mirtich volume integrals)")
def scene_26() -> Scene:
    b = ModelBuilder("reference/26", G)
    mesh = Mesh.from_obj(reference_mesh_path("cuboid.obj"))
    E0 = trans(0.5, 0, -1.5)
    b.add_body("b1", mesh, Revolute(Y), joint_name="j1", body_placement=E0)
    b.add_body("b2", mesh, Revolute(Y), parent="b1", joint_name="j2", joint_placement=trans(0, 0, -3),
               body_placement=E0)
    return Scene("reference/26", b.build(), duration=1.0)


@register("reference/35", "free 2D root joint with a revolute child, gravity along -y")
def scene_35() -> Scene:
    b = ModelBuilder("reference/35", (0.0, -1.0, 0.0))
    b.add_body("b1", Cuboid(10, 1, 1), Free2D(), joint_name="j1", qd=[0, 0, 1])
    b.add_body("b2", Cuboid(10, 1, 1), Revolute(Z), parent="b1", joint_name="j2", joint_placement=trans(5, 0, 0),
               body_placement=trans(5, 0, 0), qd=[-1.0])
    return Scene("reference/35", b.build(), duration=10.0)


@register("reference/10", "external world force and body damping on a 3-link chain, no gravity")
def scene_10() -> Scene:
    b = ModelBuilder("reference/10", (0.0, 0.0, 0.0))
    names = _standard_chain(b, 3, damping=10.0)
    # As in the original: the constant force is explicit (no stiffness) and its potential is not in V.
    b.add_force(WorldPointForce(names[-1], (5.0, 0.0, 0.0), (0.0, 0.0, 1000.0), name="push", stiffness="none",
                                count_energy=False))
    return Scene("reference/10", b.build())


@register("reference/23", "zero-rest-length point-to-point springs along a 4-link chain")
def scene_23() -> Scene:
    b = ModelBuilder("reference/23", G)
    names = _standard_chain(b, 4, q=(PI / 2, PI / 16, PI / 16, PI / 16))
    for i in range(1, 4):
        b.add_force(PointSpring((names[i - 1], (-1.0, 0.0, 0.0)), (names[i], (5.0, 0.0, 0.0)), ks=100.0,
                                name=f"spring{i}", stiffness="symmetric"))
    return Scene("reference/23", b.build())


@register("reference/24", "spring-damper (k 1e6, d 1e3) between a fixed bar and a swinging link")
def scene_24() -> Scene:
    b = ModelBuilder("reference/24", G)
    b.add_body("b1", Cuboid(10, 1, 1), Fixed(), joint_name="j1", body_placement=trans(5, 0, 0))
    b.add_body("b2", Cuboid(10, 1, 1), Revolute(Y), parent="b1", joint_name="j2", joint_placement=trans(10, 0, 0),
               body_placement=trans(5, 0, 0), q=[PI / 2])
    b.add_body("b3", Cuboid(10, 1, 1), Revolute(Y), parent="b2", joint_name="j3", joint_placement=trans(10, 0, 0),
               body_placement=trans(5, 0, 0), q=[-PI / 2])
    # Correct physics: the damping is counted once (implicitly), unlike the original implementation.
    b.add_force(SpringDamper(("b1", (-2.0, 0.0, -0.5)), ("b2", (1.0, 0.5, -0.5)), k=1e6, d=1e3, name="damper",
                             stiffness="symmetric"))
    return Scene("reference/24", b.build())


def loop_mechanism_04(b: ModelBuilder) -> None:
    """The bodies and joints of reference/04 (its loop closure is added by the caller)."""
    b.add_body("b1", Cuboid(20, 1, 1), Fixed(), joint_name="j1")
    b.add_body("b2", Cuboid(1, 1, 10), Revolute(Y), parent="b1", joint_name="j2", joint_placement=trans(-10, 0, 0),
               body_placement=trans(0, 0, -5))
    b.add_body("b3", Cuboid(1, 1, 10), Revolute(Y), parent="b1", joint_name="j3", joint_placement=trans(10, 0, 0),
               body_placement=trans(0, 0, -5))
    b.add_body("b4", Cuboid(20, 1, 1), Revolute(Y), parent="b2", joint_name="j4", joint_placement=trans(0, 0, -10),
               body_placement=trans(10, 0, 0))
    b.add_body("b5", Cuboid(1, 1, 10), Revolute(Y), parent="b4", joint_name="j5", joint_placement=trans(10, 0, 0),
               body_placement=trans(0, 0, -5), qd=[5.0])
