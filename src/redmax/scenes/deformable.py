"""paper/starfish: the RedMax paper's Fig. 1c, reconstructed: a skeleton of five arms inside a co-rotated FEM skin
(the paper gives no dimensions; the reconstruction is stated in :func:`scene_starfish`).  The strands of
reference/12 are in :mod:`redmax.scenes.constrained`.
"""

from __future__ import annotations

import math

import numpy as np

from redmax.bodies import Cuboid
from redmax.builder import ModelBuilder
from redmax.constraints import PrescribedJoint, Sinusoid
from redmax.deformables import FEM
from redmax.joints import Free3D, Revolute
from redmax.scene import Scene
from redmax.scenes.catalogue import register
from redmax.spatial import make_E, rot_z, trans

__all__ = ["starfish_mesh"]


# ---------------------------------------------------------------------------------------------------------------
# STARFISH
# ---------------------------------------------------------------------------------------------------------------

ARMS = 5
BONES = 4
R_HUB = 0.1  # m: the central disk's radius
ARM_LENGTH = 0.4  # m: from the disk's edge to the tip
ARM_HALF_WIDTH = 0.05
THICKNESS = 0.06
SPACING = 0.055  # the mesh's grid spacing in the plane
LAYERS = 1  # cells through the thickness


def _inside_star(x, y) -> bool:
    r = math.hypot(x, y)
    if r <= R_HUB + 0.5 * SPACING:
        return True
    for k in range(ARMS):
        a = 2.0 * math.pi * k / ARMS
        u = x * math.cos(a) + y * math.sin(a)
        v = -x * math.sin(a) + y * math.cos(a)
        if 0.0 < u <= R_HUB + ARM_LENGTH and abs(v) <= ARM_HALF_WIDTH * (1.0 - 0.4 * u / (R_HUB + ARM_LENGTH)):
            return True
    return False


def starfish_mesh(element: str = "tet4"):
    """The skin: a structured grid of ``SPACING`` cells over the star's bounding square, one cell thick, keeping
    the cells whose centre lies inside the star (a disk of radius ``R_HUB`` and five tapered arms); every kept cell
    is split into tetrahedra (:func:`redmax.deformables.box_mesh`); about 230 nodes.  Returns ``(nodes (n, 3),
    tets)`` with the skin's bottom at z = 0."""
    from redmax.deformables import box_mesh

    half = R_HUB + ARM_LENGTH + SPACING
    nxy = math.ceil(2 * half / SPACING)
    side = nxy * SPACING
    nodes, tets = box_mesh((side, side, THICKNESS), (nxy, nxy, LAYERS), element=element)
    nodes = nodes + np.array([0.0, 0.0, THICKNESS / 2])
    cent = nodes[tets[:, :4]].mean(axis=1)
    cell = np.floor((cent[:, :2] + side / 2) / SPACING).astype(int)
    keep = np.array([_inside_star(-side / 2 + (i + 0.5) * SPACING, -side / 2 + (j + 0.5) * SPACING)
                     for i, j in cell])
    tets = tets[keep]
    used = np.unique(tets)
    renum = np.full(nodes.shape[0], -1, dtype=np.int64)
    renum[used] = np.arange(used.size)
    return nodes[used], renum[tets]


@register("paper/starfish", "STARFISH (paper Fig. 1c, reconstructed): five 4-bone arms inside a co-rotated FEM skin "
          "on the ground, two arms driven sinusoidally", {"duration": 2.0, "dt": 5e-3, "young": 2e5,
                                                         "coupling": "rows", "element": "tet4", "drive": True})
def scene_starfish(duration: float = 2.0, dt: float = 5e-3, young: float = 2e5, coupling: str = "rows",
                   element: str = "tet4", drive: bool = True) -> Scene:
    """STARFISH, reconstructed (SI units).  The paper gives a skeleton of 20 joints coupled two-way and fully
    implicitly to a coarse co-rotated FEM mesh (221 vertices) through attachment rows, some joints prescribed.

    Here: a hub (a free 3D joint) with five arms of four bones each (4 cm x 2 cm x 1.5 cm cuboids, revolute joints
    about the horizontal axis across the arm, so that the arms curl up and down); the skin is the star-shaped mesh
    of :func:`starfish_mesh` (density 1000 kg/m^3, Young's modulus ``young``, Poisson 0.4, Rayleigh (0.5, 0.01)),
    resting on a penalty ground at z = 0; every skin node within a bone's slab is attached to it (``coupling``:
    3 rows per node, or eliminated).  The first joints of arms 1 and 3 follow ``0.6 sin(2 pi t)`` (hybrid dynamics:
    prescribed rows; ``drive=False``: none); every other joint is passive, so the skin moves the other bones and
    the bones move the skin.
    """
    b = ModelBuilder("paper/starfish", (0.0, 0.0, -9.81))
    zc = THICKNESS / 2
    b.add_body("hub", Cuboid(0.08, 0.08, 0.02, density=1000.0), Free3D(), joint_placement=trans(0.0, 0.0, zc))
    bone = ARM_LENGTH / BONES
    attach = [{"body": "hub", "within": [[-0.06, -0.06, -0.05], [0.06, 0.06, 0.05]]}]
    slab = 0.03  # nodes within this distance of a bone's axis (across the arm) are attached to it
    for k in range(ARMS):
        a = 2.0 * math.pi * k / ARMS
        parent = "hub"
        for j in range(BONES):
            name = f"arm{k + 1}.bone{j + 1}"
            place = make_E(rot_z(a), (R_HUB * math.cos(a), R_HUB * math.sin(a), 0.0)) if j == 0 else trans(bone, 0, 0)
            b.add_body(name, Cuboid(bone, 0.02, 0.015, density=1000.0), Revolute((0.0, 1.0, 0.0)), parent=parent,
                       joint_name=f"arm{k + 1}.joint{j + 1}", joint_placement=place,
                       body_placement=trans(bone / 2, 0.0, 0.0))
            lo = -bone / 2 + (1e-6 if j else 0.01)  # half-open: a node between two bones goes to the outer one
            attach.append({"body": name, "within": [[lo, -slab, -0.05], [bone / 2, slab, 0.05]]})
            parent = name
    nodes, tets = starfish_mesh(element)
    b.add_deformable(FEM("skin", (nodes, tets), material="corotated", young=young, poisson=0.4, density=1000.0,
                         rayleigh=(0.5, 0.01), attach=attach, coupling=coupling,
                         ground={"kn": 2e4, "kd": 50.0, "mu": 0.5, "kt": 200.0}))
    for k in (0, 2) if drive else ():
        b.add_constraint(PrescribedJoint(f"arm{k + 1}.joint1", Sinusoid(0.6, 1.0), name=f"drive{k + 1}"))
    return Scene("paper/starfish", b.build(), duration=duration, dt=dt, integrator="euler", solver="dense",
                 baumgarte=5.0)
