"""The primitive (non-composite) joint families and their compiled dispatch: type code -> kernel.

:data:`PRIMITIVES` is the registry: one line per family.  A family is one module holding its ``Joint`` subclass
(``kind``, ``code``, ``nq``, scene-file keys, builder hooks) with its compiled kernels attached as
``kernels = JointKernels(calc, layout, expand[, reparam, event])`` (:class:`redmax.joints.base.JointKernels`).
Numba dispatches on integer type codes, so the functions below (``primitive_calc``, ``primitive_layout``,
``primitive_expand``, ``primitive_reparam``, ``primitive_event``) are written from the registry when this module
is imported: each is the chain ``if code == <family code>: return <family kernel>(...)`` over the families that
have that kernel, then a default.  They are inlined at Numba's IR level into their callers (a dispatch layer has
no compile level of its own), so the kernels compile exactly as if the chain were written by hand; the kernel
cache stamps every caller with the files of the kernels the chain names (the generated code is attributed to
this file).
"""

from __future__ import annotations

import importlib
import warnings

from redmax._jit import njit
from redmax.errors import ModelError, RedmaxWarning
from redmax.joints.base import Joint, JointKernels

__all__ = [
    "COMPOSITE", "PRIMITIVES", "primitive_calc", "primitive_event", "primitive_expand", "primitive_layout",
    "primitive_reparam",
]

# The registry of the built-in primitive families, in dispatch order: "module:Class", one line per family.
# Another package registers its own in its pyproject.toml (``[project.entry-points."redmax.joints"]``).
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

ENTRY_POINTS = "redmax.joints"  # the entry-point group through which other packages register joint families


def _family(entry: str) -> type[Joint]:
    module, name = entry.split(":")
    return getattr(importlib.import_module(module), name)


def _plugins(built_in: tuple) -> tuple:
    """The families other packages register (entry points of group ``redmax.joints``, ``"module:Class"``).  One
    that fails to import or to pass :func:`check_registry` is left out with a ``RedmaxWarning`` naming it."""
    from importlib.metadata import entry_points

    out: list = []
    for ep in sorted(entry_points(group=ENTRY_POINTS), key=lambda e: e.name):
        try:
            cls = ep.load()
            check_registry((*built_in, *out, cls))
        except Exception as exc:  # a broken extension must not break `import redmax`
            warnings.warn(f"joint family entry point {ep.name!r} ({ep.value}) is not used: {exc}", RedmaxWarning,
                          stacklevel=2)
            continue
        out.append(cls)
    return tuple(out)


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
    """A Numba function ``name(code, args)`` that calls the ``hook`` kernel of the family with that code
    (``inline``: Numba's option; the derivatives' layout and expansion are compiled once, not per call site)."""
    names: dict = {}
    lines = [f"def {name}(code, {args}):"]
    for i, cls in enumerate(PRIMITIVES):
        kernel = getattr(cls.kernels, hook)
        if kernel is not None:
            names[f"_{hook}{i}"] = kernel
            lines += [f"    if code == {cls.code}:  # {cls.kind}", f"        return _{hook}{i}({args})"]
    lines.append(f"    return {default}")
    text = "\n".join(lines) + "\n"
    exec(compile(text, __file__, "exec"), names)  # our own text, written from the registry
    fn = names[name]
    fn.__redmax_source__ = text  # the kernel cache stamps its callers with it
    fn.__module__ = __name__
    fn.__doc__ = doc
    return njit(cache=True, inline=inline)(fn)


_BUILT_IN: tuple[type[Joint], ...] = tuple(_family(e) for e in _REGISTERED)
check_registry(_BUILT_IN)
PRIMITIVES: tuple[type[Joint], ...] = (*_BUILT_IN, *_plugins(_BUILT_IN))

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
