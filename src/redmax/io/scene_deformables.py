"""Scene-file ``[[deformables]]``: strands and tetrahedral meshes (docs/scene-files.md, "Deformable bodies").

``type = "strand"``: ``name``, ``nodes``, ``stiffness``, ``mass`` (total), ``damping`` (0), ``implicit`` (false),
``ends = [A, B]`` (``{ body = "name" | "world", point = [x, y, z] }``).  ``type = "fem"``: ``name``, ``mesh``
(``{ file }``, ``{ box, divisions }`` or ``{ cylinder, divisions }``), ``placement``, ``material = { type, young,
poisson }``, ``density``, ``rayleigh = [alpha, beta]``, ``element``, ``ground``.  Both: ``attach = [{ body, nodes |
within }, ...]`` and ``coupling = "rows" | "eliminate"``.
"""

from __future__ import annotations

from redmax.errors import ModelError

__all__ = ["deformables_from", "deformables_to", "located"]

_COMMON = {"type", "name", "attach", "coupling"}
_STRAND = _COMMON | {"nodes", "stiffness", "mass", "damping", "implicit", "ends"}
_FEM = _COMMON | {"mesh", "placement", "material", "density", "rayleigh", "element", "ground"}


def deformables_from(docs, ctx, builder) -> None:
    """Add the ``[[deformables]]`` tables of a scene file to ``builder``."""
    from redmax.deformables.specs import FEM, Strand
    from redmax.io.scene_elements import _placement_from

    if not isinstance(docs, list):
        raise ctx.err("deformables", "expected an array of [[deformables]] tables")
    for k, d in enumerate(docs):
        f = f"deformables[{k}]"
        if not isinstance(d, dict):
            raise ctx.err(f, f"expected a table, got {type(d).__name__}")
        kind = ctx.string(d.get("type"), f"{f}.type") if "type" in d else None
        if kind not in ("strand", "fem"):
            raise ctx.err(f"{f}.type", f"expected 'strand' or 'fem', got {kind!r}")
        try:
            if kind == "strand":
                ctx.table(d, f, _STRAND, {"type", "name", "nodes", "stiffness", "mass", "ends"})
                nodes = d["nodes"]
                if isinstance(nodes, bool) or not isinstance(nodes, int):
                    raise ctx.err(f"{f}.nodes", f"expected an integer >= 2, got {nodes!r}")
                spec = Strand(ctx.string(d["name"], f"{f}.name"), d["ends"], nodes,
                              ctx.number(d["stiffness"], f"{f}.stiffness"), ctx.number(d["mass"], f"{f}.mass"),
                              damping=ctx.number(d.get("damping", 0.0), f"{f}.damping"),
                              implicit=ctx.boolean(d.get("implicit", False), f"{f}.implicit"),
                              attach=d.get("attach"), coupling=ctx.string(d.get("coupling", "rows"), f"{f}.coupling"))
            else:
                ctx.table(d, f, _FEM, {"type", "name", "mesh", "material", "density"})
                mat = ctx.table(d["material"], f"{f}.material", {"type", "young", "poisson"},
                                {"young", "poisson"})
                mesh = d["mesh"]
                if not isinstance(mesh, dict):
                    raise ctx.err(f"{f}.mesh", "expected a table { file } | { box, divisions } | { cylinder, "
                                  "divisions }")
                spec = FEM(ctx.string(d["name"], f"{f}.name"), dict(mesh),
                           material=ctx.string(mat.get("type", "corotated"), f"{f}.material.type"),
                           young=ctx.number(mat["young"], f"{f}.material.young"),
                           poisson=ctx.number(mat["poisson"], f"{f}.material.poisson"),
                           density=ctx.number(d["density"], f"{f}.density"),
                           rayleigh=ctx.array(d.get("rayleigh", [0.0, 0.0]), f"{f}.rayleigh", (2,)),
                           element=ctx.string(d["element"], f"{f}.element") if "element" in d else None,
                           placement=(_placement_from(d["placement"], ctx, f"{f}.placement")
                                      if "placement" in d else None),
                           attach=d.get("attach"), coupling=ctx.string(d.get("coupling", "rows"), f"{f}.coupling"),
                           ground=d.get("ground"), base_dir=ctx.base_dir)
        except ModelError as e:
            msg = str(e)
            for pre in (f"deformable '{d.get('name')}': ", "deformable "):
                if msg.startswith(pre):
                    msg = msg[len(pre):]
                    break
            raise ctx.err(f, msg) from None
        _check_bodies(ctx, f, spec, {r.name for r in builder._bodies})
        builder.add_deformable(spec)


def _check_bodies(ctx, f: str, spec, names: set) -> None:
    """Every body a deformable refers to is a [[bodies]] entry (the field named)."""
    refs = [(f"ends[{k}].body", b) for k, (b, _) in enumerate(getattr(spec, "ends", []))]
    refs += [(f"attach[{k}].body", a.body) for k, a in enumerate(spec.attach)]
    for field, body in refs:
        if body is not None and body not in names:
            raise ctx.err(f"{f}.{field}", f"unknown body '{body}' (not among the [[bodies]])")


def deformables_to(specs) -> list:
    """The ``[[deformables]]`` tables of a builder's deformable bodies."""
    from redmax.io.scene_elements import _placement_to

    out = []
    for s in specs:
        d = s.to_scene()
        if "placement" in d:
            d["placement"] = _placement_to(d["placement"])
            if d["placement"] is None:
                del d["placement"]
        out.append(d)
    return out


def located(msg: str, docs) -> str:
    """A build error about ``deformable 'name'`` re-addressed to its table, ``deformables[k]``."""
    if isinstance(docs, list) and msg.startswith("deformable '"):
        name = msg[len("deformable '"):].split("'", 1)[0]
        for k, d in enumerate(docs):
            if isinstance(d, dict) and d.get("name") == name:
                return f"deformables[{k}]" + msg[len(f"deformable '{name}'"):]
    return msg
