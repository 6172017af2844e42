"""The constraint interface (RedMax paper §4, Eqs. 5-7; Sueda notes §2.8, §1.12).

Every constraint emits rows in one of four families: maximal or reduced (``family``: the rows act on body
twists, used as ``G_m J``, or on joint coordinates directly) times equality or inequality (``kind``).  For each
row it reports, at the start of a step (targets at its end):

* the row ``G`` (or ``C``) over the joint coordinates;
* the position-level value ``g`` (equalities, target 0) or ``c`` (inequalities, feasible when ``c <= 0``);
* the explicit time term ``gdot`` (``dg/dt = G q̇ + gdot``; non-zero only for prescribed motion);
* for the ODE integrators, the acceleration term ``Ġ q̇ + gddot`` (``d²g/dt² = G q̈ + Ġ q̇ + gddot``);

and, after the solve, its reaction: the joint torque ``-G_r^T lam / h`` on its listed DOFs (reduced) or the body
wrench ``-G_m^T lam / h`` on its reported body (maximal; body frame at the centre of mass, angular first).  The
rows are evaluated by one compiled kernel for all types (:mod:`redmax.constraints._compiled`), which calls each
type's own row function through the dispatch written from the registry (:mod:`redmax.constraints.registry`).  A
type is one class: its scene-file fields, their checks, the binding of names to indices (:meth:`Constraint.bind`),
the encoding of its parameters (:meth:`Constraint.encode`) and its compiled ``rows`` function; plus one line in
the registry.

Stabilisation (Baumgarte): linearly implicit Euler solves ``G q̇₁ = -gdot - beta g`` and
``C q̇₁ <= -cdot - beta c`` (velocity level, ``beta`` = ``[scene] baumgarte``, default 5); the ODE integrators
``G q̈ = -(Ġ q̇ + gddot) - 2 b1 (G q̇ + gdot) - b2² g`` (``baumgarte_acc = [b1, b2]``, default (5, 5)).
"""

from __future__ import annotations

import copy

import numpy as np

from redmax._validate import check_vector
from redmax.errors import ModelError

__all__ = ["ROWS_SIGNATURE", "Constraint", "body_index", "joint_index", "to_joint_frame"]

# The arguments of a constraint type's compiled row function (it returns the next free row):
#   ci, cf: the program's ints and floats; io, fo: where this constraint's start; cap: its row count (capacity);
#   Ii: the packed model; W, wo: the step's world-frame workspace and its offsets (wR, wp, wS, wV, wSd); Ejb (nb, 12):
#   body placements; q, qd, t: the state and the targets' time; mode: see redmax.constraints._compiled.eval_rows;
#   G, g, gd, ga, rkind, WA: the row outputs (cleared unless varying_rows); alpha: bias accelerations (mode 1);
#   row: the constraint's first row.
ROWS_SIGNATURE = "ci, cf, io, fo, cap, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, alpha, row"


class Constraint:
    """Base class of constraints (see the module docstring).

    Class attributes: ``type`` (scene-file type), ``family`` ("maximal" or "reduced"), ``kind`` ("equality" or
    "inequality"), ``fields`` (the scene-file keys, in order), ``code`` (the type code of the compiled program),
    ``rows`` (the compiled row function, :data:`ROWS_SIGNATURE`), ``varying_rows`` (the function writes a varying
    number of rows, at most ``nrows``, clearing them itself; one violation column, the largest), ``reaction``
    ("dofs": ``-G^T lam / h`` on the listed DOFs, the first entries of its ints after their count; "body": the
    wrench on its first non-world body, ints[0] or ints[1]; "world": the total wrench at the world origin),
    ``drives_joints`` (prescribed joints: the reaction also carries the joints' own forces).
    Bound attributes (after :meth:`bind`): ``nrows`` (rows, or the cap for a varying set), ``react_labels`` (names
    of the reaction components), ``row_labels``.
    """

    type = "constraint"
    family = "reduced"
    kind = "equality"
    fields: tuple = ()
    velocity_only = False  # rows whose g is identically 0 (prescribed velocities)
    time_dependent = False  # targets depend on time (prescribed motion)
    code = -1
    rows = None
    varying_rows = False
    reaction: str | None = None  # None: "dofs" for the reduced family, "body" for the maximal one
    drives_joints = False

    def __init__(self, name: str | None):
        if name is not None and (not isinstance(name, str) or not name):
            raise ModelError(f"{self.type} constraint: name must be a non-empty string, got {name!r}")
        self.name = name or self.type
        self.bound = False

    @classmethod
    def reaction_kind(cls) -> str:
        return cls.reaction or ("dofs" if cls.family == "reduced" else "body")

    def bind(self, model):
        """A bound copy: names resolved against ``model``, parameters checked (ModelError naming the
        constraint and field)."""
        c = copy.copy(self)
        c._bind(model)
        c.bound = True
        return c

    def _bind(self, model) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def encode(self) -> tuple[list, list]:  # pragma: no cover - interface
        """(ints, floats) of the compiled kernel (bound constraint)."""
        raise NotImplementedError

    @property
    def nviol(self) -> int:
        """Columns of ``Result.constraint_violation[name]`` (the rows, 1 for a varying set)."""
        return self.nrows

    def to_scene(self) -> dict:
        """The scene-file table of this constraint."""
        d = {"type": self.type, "name": self.name}
        for f in self.fields:
            v = self._field_to_scene(f)
            if v is not None:
                d[f] = v
        return d

    def _field_to_scene(self, f):
        v = getattr(self, f)
        if v is None:
            return None
        if isinstance(v, np.ndarray):
            return v.tolist()
        return v

    def describe(self) -> str:
        """One line: name, type, family and kind, rows."""
        rows = getattr(self, "nrows", "?")
        return f"{self.name} ({self.type}: {self.family} {self.kind}, {rows} row(s))"

    def err(self, field: str, msg: str) -> ModelError:
        return ModelError(f"constraint '{self.name}' ({self.type}): {field}: {msg}")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


# ------------------------------------------------------------------------------------------------
# Helpers for binding
# ------------------------------------------------------------------------------------------------


def body_index(model, con: Constraint, body, field: str, allow_world: bool = True) -> int:
    """Index of body ``body`` (a name; "world" or None is -1 when allowed)."""
    if body is None or body == "world":
        if not allow_world:
            raise con.err(field, "must be a body, not the world")
        return -1
    if not isinstance(body, str):
        raise con.err(field, f"expected a body name, got {body!r}")
    if body not in model.body_names:
        raise con.err(field, f"unknown body '{body}'")
    return model.body_names.index(body)


def joint_index(model, con: Constraint, joint, field: str) -> int:
    if not isinstance(joint, str):
        raise con.err(field, f"expected a joint name, got {joint!r}")
    if joint not in model.joint_names:
        raise con.err(field, f"unknown joint '{joint}'")
    return model.joint_names.index(joint)


def joint_dofs(model, i: int) -> np.ndarray:
    """The coordinate indices of joint i."""
    return np.arange(model.idx[i], model.idx[i + 1], dtype=np.int64)


def to_joint_frame(model, body: int, x) -> np.ndarray:
    """A body-frame point (3,) in its joint's frame (a world point stays)."""
    if body < 0:
        return np.asarray(x, dtype=float)
    E = model.E_jb[body]
    return E[:3, :3] @ np.asarray(x, dtype=float) + E[:3, 3]


def parse_point(con: Constraint, p, field: str) -> tuple:
    """``{body, point}`` table, ``(body, point)`` pair -> (body name or None, point (3,))."""
    if isinstance(p, dict):
        extra = set(p) - {"body", "point"}
        if extra:
            raise con.err(f"{field}.{sorted(extra)[0]}", "unknown key (expected body, point)")
        if "body" not in p:
            raise con.err(f"{field}.body", "missing required key")
        body, pt = p["body"], p.get("point", (0.0, 0.0, 0.0))
    else:
        try:
            body, pt = p
        except (TypeError, ValueError):
            raise con.err(field, f"expected {{body, point}} or (body, point), got {p!r}") from None
    if body is not None and not isinstance(body, str):
        raise con.err(f"{field}.body", f"expected a body name or 'world', got {body!r}")
    try:
        x = check_vector(pt, 3, "point")
    except ModelError as e:
        raise con.err(f"{field}.point", str(e).removeprefix("point: ")) from None
    return (None if body in (None, "world") else body), x


def points_to_scene(points) -> list:
    return [{"body": "world" if b is None else b, "point": np.asarray(x, float).tolist()} for b, x in points]
