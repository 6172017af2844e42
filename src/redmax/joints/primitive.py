"""The primitive (non-composite) joint families and their compiled dispatch: type code -> kernel.

:data:`PRIMITIVES` is the registry: one line per family (``_REGISTERED``, or an entry point of group
``redmax.joints`` in another package).  A family is one module holding its ``Joint`` subclass (``kind``,
``code``, ``nq``, scene-file keys, builder hooks) with its compiled kernels attached as
``kernels = JointKernels(calc, layout, expand[, reparam, event])`` (:class:`redmax.joints.base.JointKernels`).
The dispatchers below (``primitive_calc``, ``primitive_layout``, ``primitive_expand``, ``primitive_reparam``,
``primitive_event``) are written from the registry when this module is imported
(:func:`redmax._kernels.dispatch.write_dispatcher`); calc, reparam and event are inlined into their callers at
Numba's IR level, as the hand-written chains they replace were.
"""

from __future__ import annotations

from redmax._kernels.dispatch import registered, write_dispatcher
from redmax.errors import ModelError
from redmax.joints.base import Joint, JointKernels

__all__ = [
    "COMPOSITE", "ENTRY_POINTS", "PRIMITIVES", "check_registry", "primitive_calc", "primitive_event",
    "primitive_expand", "primitive_layout", "primitive_reparam",
]

# The built-in primitive families, in dispatch order: "module:Class", one line per family.  Another package
# registers its own in its pyproject.toml: [project.entry-points."redmax.joints"] name = "module:Class".
_REGISTERED = (
    "redmax.joints.simple:Fixed",
    "redmax.joints.simple:Revolute",
    "redmax.joints.simple:Prismatic",
    "redmax.joints.simple:Planar",
    "redmax.joints.simple:Translational",
    "redmax.joints.simple:Universal",
    "redmax.joints.spherical_exp:SphericalExp",
    "redmax.joints.spherical_euler:SphericalEuler",
    "redmax.joints.spline:SplineCurve",
    "redmax.joints.spline:SplineSurface",
)
ENTRY_POINTS = "redmax.joints"

COMPOSITE = 10  # the type code of composite joints (redmax.joints.composite), dispatched above this module


def check_registry(families) -> None:
    """Refuse a registry that the dispatchers cannot serve: a code used twice or equal to COMPOSITE, a family
    without compiled kernels, or one with DOFs but no core expansion (its analytic derivatives would be wrong)."""
    seen: dict[int, str] = {}
    for cls in families:
        k = cls.kernels
        if not isinstance(k, JointKernels) or k.calc is None:
            raise ModelError(f"joint family {cls.__name__}: kernels must be a JointKernels with a calc kernel")
        if not isinstance(cls.code, int) or cls.code < 0 or cls.code == COMPOSITE or cls.code in seen:
            raise ModelError(f"joint family {cls.__name__}: type code {cls.code!r} is not free "
                            f"(taken: {sorted(seen)}, {COMPOSITE} is the composite's)")
        if cls.nq > 0 and (k.layout is None or k.expand is None):
            raise ModelError(f"joint family {cls.__name__} has {cls.nq} DOFs but no layout/expand kernels")
        if (k.reparam is None) != (k.event is None):
            raise ModelError(f"joint family {cls.__name__}: reparam and event come together")
        seen[cls.code] = cls.__name__


def _dispatcher(name: str, hook: str, args: str, default: str, doc: str, inline: str = "always"):
    """The dispatcher of the ``hook`` kernels (``inline``: the derivatives' layout and expansion are compiled once,
    not at each call site)."""
    cases = [(cls.code, cls.kind, getattr(cls.kernels, hook)) for cls in PRIMITIVES]
    return write_dispatcher(name, args, cases, default, doc, __file__, __name__, inline)


PRIMITIVES: tuple[type[Joint], ...] = registered(_REGISTERED, ENTRY_POINTS, check_registry)

primitive_calc = _dispatcher(
    "primitive_calc", "calc", "p, q, qd, js, Q, S, Sdot", "None",
    "Fill Q (4,4), S (6,n), Sdot (6,n) (zero on entry) for a primitive joint of type ``code``.")
primitive_layout = _dispatcher(
    "primitive_layout", "layout", "js, tangent, sizes, o", "o, True",
    "Append the core-joint sizes of a primitive joint to ``sizes[o:]``; returns (o_new, trivial).", "never")
primitive_expand = _dispatcher(
    "primitive_expand", "expand", "p, q, js, tangent, jets, Sv, A, dA, d2A, d3A", "None",
    "Core expansion Sv, A and its jets of a primitive joint (outputs zero on entry).", "never")
primitive_reparam = _dispatcher(
    "primitive_reparam", "reparam", "p, q, qd, js, margin", "js, False",
    "Re-parameterise q, qd in place if the joint is near a singular chart; returns (js, changed).")
primitive_event = _dispatcher(
    "primitive_event", "event", "p, q, js", "1.0",
    "Event value that turns negative when the joint must re-parameterise (1.0 if it never does).")
