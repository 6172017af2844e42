"""Visual geometry: what a body looks like, kept beside the physics (``model.visuals``; it changes no dynamics).

A :class:`Visual` is one primitive or mesh fixed to a body.  Bodies built in Python or read from scene files get
their shapes (cuboid, cylinder, sphere, mesh, the parts of a composite); URDF files give their ``<visual>``
elements (with ``<material>`` colours) and MJCF files their geoms.  Mesh files are only named here; drawing code
reads them (STL, OBJ, DAE through trimesh).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["KINDS", "Visual", "shape_visuals"]

KINDS = ("mesh", "box", "cylinder", "sphere", "capsule")


@dataclass(frozen=True, eq=False)
class Visual:
    """One piece of visual geometry.

    Attributes:
        body: the body's name ("world" for geometry fixed in the world).
        kind: "mesh", "box", "cylinder", "sphere" or "capsule".
        size: box: its sides (3,); cylinder and capsule: (radius, length) along the geometry's z; sphere:
            (radius,); mesh: ().
        placement: (4, 4) the geometry's frame in the body's joint frame (the world frame for "world"), length
            units of the model.
        file: a mesh file (absolute path) or None.  scale: (3,) factors applied to the mesh file's coordinates.
        rgba: (4,) colour in [0, 1], or None (the viewer's default).
        vertices, faces: an in-memory mesh ((n, 3) in the geometry's frame, (m, 3)) when there is no file.
    """

    body: str
    kind: str
    size: tuple
    placement: np.ndarray
    file: str | None = None
    scale: tuple = (1.0, 1.0, 1.0)
    rgba: tuple | None = None
    vertices: np.ndarray | None = field(default=None, repr=False)
    faces: np.ndarray | None = field(default=None, repr=False)


def shape_visuals(body: str, shape, E) -> list[Visual]:
    """The visuals of a ``redmax.bodies`` shape whose own frame is ``E`` (4, 4) in the body's joint frame."""
    from redmax.bodies import Composite, Cuboid, Cylinder, Mesh, Sphere

    E = np.asarray(E, dtype=float)
    if isinstance(shape, Composite):
        out = []
        for part, E_cp in shape.parts:
            out.extend(shape_visuals(body, part, E @ np.asarray(E_cp, dtype=float)))
        return out
    if isinstance(shape, Cuboid):
        return [Visual(body, "box", tuple(float(s) for s in shape.sides), E)]
    if isinstance(shape, Cylinder):
        return [Visual(body, "cylinder", (float(shape.radius), float(shape.height)), E)]
    if isinstance(shape, Sphere):
        return [Visual(body, "sphere", (float(shape.radius),), E)]
    if isinstance(shape, Mesh):
        s = float(getattr(shape, "scale", None) or 1.0)
        path = getattr(shape, "path", None)
        return [Visual(body, "mesh", (), E, file=path, scale=(s, s, s),
                       vertices=np.asarray(shape.vertices, dtype=float), faces=np.asarray(shape.faces, dtype=np.int64))]
    return []
