"""The constraint types: one line per type, and the compiled dispatch of their row functions written from it.

A type is one class (:class:`redmax.constraints.base.Constraint`: scene-file fields, binding, encoding, its
``code`` and its compiled ``rows`` function); it is registered by one entry ``"module:Class"`` here, or by another
package as an entry point of group ``redmax.constraints``.  :func:`constraint_rows` calls the row function of a
type code (:func:`redmax._kernels.dispatch.write_dispatcher`); scene files find the types by their ``type``
(:data:`CONSTRAINTS`).
"""

from __future__ import annotations

from redmax._kernels.dispatch import registered, write_dispatcher
from redmax.constraints.base import ROWS_SIGNATURE, Constraint
from redmax.errors import ModelError

__all__ = ["CONSTRAINTS", "CONSTRAINT_TYPES", "ENTRY_POINTS", "check_registry", "constraint_rows"]

_REGISTERED = (
    "redmax.constraints.closures:Loop",
    "redmax.constraints.closures:Point",
    "redmax.constraints.closures:Weld",
    "redmax.constraints.closures:Universal",
    "redmax.constraints.equalities:JointRatio",
    "redmax.constraints.equalities:Linear",
    "redmax.constraints.prescribed:PrescribedJoint",
    "redmax.constraints.prescribed:PrescribedBody",
    "redmax.constraints.prescribed:PrescribedRate",
    "redmax.constraints.prescribed:PrescribedPoint",
    "redmax.constraints.unilateral:Limit",
    "redmax.constraints.unilateral:Floor",
    "redmax.constraints.unilateral:SelfCollision",
)
ENTRY_POINTS = "redmax.constraints"


def check_registry(types) -> None:
    """Refuse what the compiled program cannot serve: a type code or scene-file type used twice, a type without
    its compiled row function, a reaction kind that is not "dofs", "body" or "world"."""
    codes: dict[int, str] = {}
    names: set[str] = set()
    for cls in types:
        if not (isinstance(cls, type) and issubclass(cls, Constraint)):
            raise ModelError(f"constraint registry: {cls!r} is not a Constraint class")
        if not isinstance(cls.code, int) or cls.code < 1 or cls.code in codes:
            raise ModelError(f"constraint type {cls.__name__}: code {cls.code!r} is not free (taken: {sorted(codes)})")
        if cls.type in names:
            raise ModelError(f"constraint type {cls.__name__}: scene-file type {cls.type!r} is taken")
        if cls.rows is None or not hasattr(cls.rows, "py_func"):
            raise ModelError(f"constraint type {cls.__name__}: rows must be a compiled row function")
        if cls.reaction_kind() not in ("dofs", "body", "world"):
            raise ModelError(f"constraint type {cls.__name__}: reaction {cls.reaction!r} is not dofs, body or world")
        codes[cls.code] = cls.__name__
        names.add(cls.type)


CONSTRAINT_TYPES: tuple[type[Constraint], ...] = registered(_REGISTERED, ENTRY_POINTS, check_registry)
CONSTRAINTS: dict[str, type[Constraint]] = {c.type: c for c in CONSTRAINT_TYPES}

constraint_rows = write_dispatcher(
    "constraint_rows", ROWS_SIGNATURE, [(c.code, c.type, c.rows) for c in CONSTRAINT_TYPES], "row",
    "The rows of one constraint of type ``code`` from ``row`` on; returns the next free row.", __file__, __name__)
