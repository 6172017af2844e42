"""The friction scenes of the reference catalogue built on the four-bar of reference/30: the crank-rocker with
friction in its joints and loop, and the walking four-bar "car" on four spheres with floor friction (the
small-scale stand-in for the paper's KLANN).  Units cm, g, s; density 1; gravity (0, 0, -980)."""

from __future__ import annotations

from redmax.bodies import Cylinder as CylinderBody
from redmax.bodies import Sphere
from redmax.builder import ModelBuilder
from redmax.constraints import Constant as ConstantProfile
from redmax.constraints import Floor, PrescribedRate
from redmax.friction import Cylinder
from redmax.joints import Composite, Fixed, SphericalExp, Translational
from redmax.scene import Scene
from redmax.scenes.catalogue import register
from redmax.scenes.constrained import four_bar_30
from redmax.scenes.reference import PI, G
from redmax.spatial import make_E, rot_x, trans

__all__: list[str] = []


@register("reference/30", "internal friction four-bar: the crank-rocker of reference/32 on a fixed ground bar, "
          "cylinders r 0.5 h 0.5 in its joints and loop, mu 0.3, at rest")
def scene_30() -> Scene:
    b = ModelBuilder("reference/30", G, friction={"joint": 0.3})
    four_bar_30(b, contact=Cylinder(0.5, 0.5))
    return Scene("reference/30", b.build(), duration=1.0, dt=5e-3, baumgarte=200.0)


@register("reference/33", "walking four-bar car: the four-bar on a free root with four spheres on the floor, its "
          "crank driven at -4 pi rad/s by the prescribed rate 'motor' (joint and floor mu 0.8)")
def scene_33() -> Scene:
    b = ModelBuilder("reference/33", G, friction={"joint": 0.8, "world": 0.8})
    # the original's free joint: the rotation vector first, then the translation in the rotated frame, q = (r, p)
    # (the chart matters to the integrator: with translation first the final energy differs by 3%)
    four_bar_30(b, Composite(SphericalExp(), Translational()), trans(0, 0, 1), contact=Cylinder(0.5, 0.5))
    b.add_body("front", Sphere(1.0), Fixed(), parent="b1", joint_name="j5", body_placement=trans(-5, 0, 0))
    b.add_body("back", Sphere(1.0), Fixed(), parent="b1", joint_name="j6", body_placement=trans(5, 0, 0))
    b.add_body("axle", CylinderBody(0.5, 5.0), Fixed(), parent="b3", joint_name="j7",
               body_placement=make_E(rot_x(PI / 2)))
    b.add_body("left", Sphere(1.0), Fixed(), parent="axle", joint_name="j8", body_placement=trans(0, 2.5, 0))
    b.add_body("right", Sphere(1.0), Fixed(), parent="axle", joint_name="j9", body_placement=trans(0, -2.5, 0))
    for wheel in ("front", "back", "left", "right"):
        b.add_constraint(Floor(wheel, radius=1.0, name=f"floor_{wheel}"))
    b.add_constraint(PrescribedRate("j2", ConstantProfile(-4 * PI), name="motor"))
    return Scene("reference/33", b.build(), duration=1.0, dt=5e-3, baumgarte=20.0)
