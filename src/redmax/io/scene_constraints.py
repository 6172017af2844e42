"""The ``[[constraints]]`` and ``[[couplings]]`` tables of scene files (docs/scene-files.md).

Each constraint table has ``type`` and a unique ``name``; the other keys are exactly the fields of the class of
that type (``redmax.constraints.CONSTRAINTS``), passed to its constructor, which checks them.  A coupling table is
``joint`` (dependent), ``on`` (independent), ``ratio`` and optionally ``offset``.  Errors are SceneErrors naming
the file and the field (``constraints[2].points[0].body``).
"""

from __future__ import annotations

from redmax.constraints import CONSTRAINTS
from redmax.errors import ModelError

__all__ = ["constraints_from", "constraints_to", "couplings_from", "couplings_to"]


def constraints_from(doc, ctx, builder) -> None:
    """Add the constraints of the ``[[constraints]]`` list ``doc`` to ``builder``."""
    if not isinstance(doc, list):
        raise ctx.err("constraints", "expected an array of [[constraints]] tables")
    names = set()
    for k, d in enumerate(doc):
        f = f"constraints[{k}]"
        if not isinstance(d, dict) or "type" not in d:
            raise ctx.err(f, "expected a table with a 'type'")
        kind = d["type"]
        if kind not in CONSTRAINTS:
            raise ctx.err(f"{f}.type", f"unknown constraint type {kind!r} (expected one of {', '.join(CONSTRAINTS)})")
        cls = CONSTRAINTS[kind]
        ctx.table(d, f, {"type", "name", *cls.fields}, {"name"})
        name = ctx.string(d["name"], f"{f}.name")
        if name in names:
            raise ctx.err(f"{f}.name", f"duplicate constraint name {name!r}")
        names.add(name)
        kw = {key: v for key, v in d.items() if key not in ("type", "name")}
        try:
            builder.add_constraint(cls(**kw, name=name))
        except ModelError as e:
            raise ctx.err(f, str(e).removeprefix(f"constraint '{name}' ({kind}): ")) from None
        except TypeError as e:  # a required field is missing
            raise ctx.err(f, f"missing or misplaced key ({e})") from None


def constraints_to(constraints) -> list:
    """The ``[[constraints]]`` tables of the builder's constraints."""
    return [c.to_scene() for c in constraints]


def couplings_from(doc, ctx, builder) -> None:
    """Apply the ``[[couplings]]`` list ``doc`` to ``builder`` (``ModelBuilder.couple``)."""
    if not isinstance(doc, list):
        raise ctx.err("couplings", "expected an array of [[couplings]] tables")
    for k, d in enumerate(doc):
        f = f"couplings[{k}]"
        ctx.table(d, f, {"joint", "on", "ratio", "offset"}, {"joint", "on", "ratio"})
        try:
            builder.couple(ctx.string(d["joint"], f"{f}.joint"), ctx.string(d["on"], f"{f}.on"),
                           ctx.number(d["ratio"], f"{f}.ratio"), ctx.number(d.get("offset", 0.0), f"{f}.offset"))
        except ModelError as e:
            raise ctx.err(f, str(e)) from None


def couplings_to(couplings) -> list:
    out = []
    for dep, on, ratio, offset in couplings:
        d = {"joint": dep, "on": on, "ratio": float(ratio)}
        if offset:
            d["offset"] = float(offset)
        out.append(d)
    return out
