"""Joint families (RedMax supplemental §4-5, Sueda notes §2.4).

Each family is a ``Joint`` description used by the builder plus Numba kernels computing the joint
transform Q(q), the joint Jacobian S(q) and its time derivative Sdot(q, qd).
"""

from redmax.joints.base import Joint
from redmax.joints.composite import Composite, Free2D, Free3D
from redmax.joints.simple import Fixed, Planar, Prismatic, Revolute, Translational, Universal
from redmax.joints.spherical_euler import CHARTS, SphericalEuler, euler_angles
from redmax.joints.spherical_exp import SphericalExp
from redmax.joints.spline import SplineCurve, SplineSurface

__all__ = [
    "CHARTS",
    "Composite",
    "Fixed",
    "Free2D",
    "Free3D",
    "Joint",
    "Planar",
    "Prismatic",
    "Revolute",
    "SphericalEuler",
    "SphericalExp",
    "SplineCurve",
    "SplineSurface",
    "Translational",
    "Universal",
    "euler_angles",
]
