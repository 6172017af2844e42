"""Deformable bodies two-way coupled with articulated bodies (RedMax paper §4, Eq. 6; Sueda's notes §2.7).

* :class:`Strand`: mass-spring strands (reference/12), explicit as in the original or implicit.
* :class:`FEM`: tetrahedral meshes (4- or 10-node) of co-rotated linear elasticity or stable neo-Hookean material,
  with Rayleigh damping and an optional penalty ground contact.
* Attachments to bodies or the world by equality rows (``coupling="rows"``) or by elimination
  (``coupling="eliminate"``).
* Meshes: :func:`box_mesh`, :func:`cylinder_mesh`, :func:`read_mesh` (meshio, ``pip install redmax[mesh]``) and
  :func:`surface_triangles`.

Example::

    b = rm.ModelBuilder("beam", gravity=(0, 0, -9.81))
    b.add_deformable(rm.deformables.FEM("beam", {"box": [1, 0.1, 0.1], "divisions": [10, 1, 1]}, young=1e6,
                                        poisson=0.3, density=1000, attach=[{"body": "world", "within":
                                        [[-0.51, -1, -1], [-0.49, 1, 1]]}]))
    result = rm.simulate(b.build(), integrator="euler", dt=1e-3, duration=0.5)
    result.energy["deformable"]
"""

from redmax.deformables.elements import elastic_forces, lumped_masses, precompute, shape_gradients
from redmax.deformables.expand import Deformable
from redmax.deformables.materials import lame
from redmax.deformables.meshes import box_mesh, cylinder_mesh, read_mesh, surface_triangles
from redmax.deformables.specs import FEM, Attachment, Strand

__all__ = ["FEM", "Attachment", "Deformable", "Strand", "box_mesh", "cylinder_mesh", "elastic_forces", "lame",
           "lumped_masses", "precompute", "read_mesh", "shape_gradients", "surface_triangles"]
