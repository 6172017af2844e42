"""The joint table: every joint family once.  A new family is one module (its ``Joint`` subclass with its
kernels, scene-file keys and hooks) plus one entry here and one branch in each kernel dispatcher of
``redmax.joints.primitive`` (Numba dispatches on type codes; a test checks that every registered code has its
branch).  Scene files, the maximal-coordinate mode and the reports read the families from this table.
"""

from __future__ import annotations

from redmax.joints.base import Joint
from redmax.joints.composite import Composite, Free2D, Free3D
from redmax.joints.simple import Fixed, Planar, Prismatic, Revolute, Translational, Universal
from redmax.joints.spherical_euler import SphericalEuler
from redmax.joints.spherical_exp import SphericalExp
from redmax.joints.spline import SplineCurve, SplineSurface

__all__ = ["FAMILIES", "JOINTS", "family"]

FAMILIES: tuple[type[Joint], ...] = (
    Fixed, Revolute, Prismatic, Planar, Translational, Universal, SphericalExp, SphericalEuler, Composite, Free2D,
    Free3D, SplineCurve, SplineSurface,
)
JOINTS: dict[str, type[Joint]] = {cls.kind: cls for cls in FAMILIES}


def family(kind: str) -> type[Joint]:
    """The Joint class of a family name (KeyError for an unknown one)."""
    return JOINTS[kind]
