"""The joint table: type code -> kernels, for every primitive (non-composite) joint family.

Adding a joint family means writing its module (a ``Joint`` subclass plus ``calc`` and, if it has
singular configurations, ``reparam`` and ``event`` kernels) and adding one branch per function here.
"""

from __future__ import annotations

from redmax._jit import njit
from redmax.joints.simple import (
    FIXED,
    PLANAR,
    PRISMATIC,
    REVOLUTE,
    TRANSLATIONAL,
    UNIVERSAL,
    calc_fixed,
    calc_planar,
    calc_prismatic,
    calc_revolute,
    calc_translational,
    calc_universal,
)
from redmax.joints.spherical_euler import (
    SPHERICAL_EULER,
    calc_spherical_euler,
    event_spherical_euler,
    reparam_spherical_euler,
)
from redmax.joints.spherical_exp import (
    SPHERICAL_EXP,
    calc_spherical_exp,
    event_spherical_exp,
    reparam_spherical_exp,
)
from redmax.joints.spline import SPLINE_CURVE, SPLINE_SURFACE, calc_spline_curve, calc_spline_surface

COMPOSITE = 10


@njit(cache=True, inline="always")  # a dispatch layer: no compile level of its own
def primitive_calc(code, p, q, qd, js, Q, S, Sdot):
    """Fill Q (4,4), S (6,n), Sdot (6,n) (zero on entry) for a primitive joint of type ``code``."""
    if code == REVOLUTE:
        calc_revolute(p, q, qd, js, Q, S, Sdot)
    elif code == FIXED:
        calc_fixed(p, q, qd, js, Q, S, Sdot)
    elif code == PRISMATIC:
        calc_prismatic(p, q, qd, js, Q, S, Sdot)
    elif code == PLANAR:
        calc_planar(p, q, qd, js, Q, S, Sdot)
    elif code == TRANSLATIONAL:
        calc_translational(p, q, qd, js, Q, S, Sdot)
    elif code == UNIVERSAL:
        calc_universal(p, q, qd, js, Q, S, Sdot)
    elif code == SPHERICAL_EXP:
        calc_spherical_exp(p, q, qd, js, Q, S, Sdot)
    elif code == SPHERICAL_EULER:
        calc_spherical_euler(p, q, qd, js, Q, S, Sdot)
    elif code == SPLINE_CURVE:
        calc_spline_curve(p, q, qd, js, Q, S, Sdot)
    elif code == SPLINE_SURFACE:
        calc_spline_surface(p, q, qd, js, Q, S, Sdot)


@njit(cache=True, inline="always")  # a dispatch layer: no compile level of its own
def primitive_reparam(code, p, q, qd, js, margin):
    """Re-parameterise q, qd in place if the joint is near a singular chart; returns (js, changed)."""
    if code == SPHERICAL_EXP:
        return reparam_spherical_exp(p, q, qd, js, margin)
    if code == SPHERICAL_EULER:
        return reparam_spherical_euler(p, q, qd, js, margin)
    return js, False


@njit(cache=True, inline="always")  # a dispatch layer: no compile level of its own
def primitive_event(code, p, q, js):
    """Event value that turns negative when the joint must re-parameterise (1.0 if it never does)."""
    if code == SPHERICAL_EXP:
        return event_spherical_exp(p, q, js)
    if code == SPHERICAL_EULER:
        return event_spherical_euler(p, q, js)
    return 1.0
