"""Scene files, element by element: the reading context (every access names its field, unknown keys are refused)
and the readers and writers of placements, shapes, joints, force points and forces.

:mod:`redmax.io.scene_file` assembles whole scenes from these; ``docs/scene-files.md`` is the reference of the keys.
"""

from __future__ import annotations

import os

import numpy as np

from redmax import bodies as bd
from redmax.errors import ModelError, SceneError
from redmax.forces.registry import SCENE_TYPES
from redmax.joints._registry import JOINTS
from redmax.spatial import rot_axis_angle

# ----------------------------------------------------------------------------------------------
# Reading helpers: every access names the field; unknown keys are rejected.
# ----------------------------------------------------------------------------------------------


class _Ctx:
    def __init__(self, file: str, base_dir: str):
        self.file = file
        self.base_dir = base_dir

    def err(self, field: str, msg: str) -> SceneError:
        return SceneError(f"{self.file}: {field}: {msg}")

    def table(self, d, field: str, allowed: set, required: set = frozenset()) -> dict:
        if not isinstance(d, dict):
            raise self.err(field, f"expected a table, got {type(d).__name__}")
        for k in d:
            if k not in allowed:
                where = f"{field}.{k}" if field else k
                raise self.err(where, f"unknown key (expected one of: {', '.join(sorted(allowed))})")
        for k in required:
            if k not in d:
                raise self.err(f"{field}.{k}" if field else k, "missing required key")
        return d

    def number(self, v, field: str) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise self.err(field, f"expected a number, got {_short(v)}")
        try:
            return float(v)
        except OverflowError:
            raise self.err(field, f"number too large for a float ({len(str(v))} digits)") from None

    def string(self, v, field: str) -> str:
        if not isinstance(v, str):
            raise self.err(field, f"expected a string, got {_short(v)}")
        return v

    def boolean(self, v, field: str) -> bool:
        if not isinstance(v, bool):
            raise self.err(field, f"expected true or false, got {v!r}")
        return v

    def array(self, v, field: str, shape: tuple | None = None) -> np.ndarray:
        """A numeric array (TOML numbers only: strings, booleans and tables are refused); ``shape`` entries of None
        match any size."""
        _check_numbers(self, v, field)
        try:
            a = np.array(v, dtype=float)
        except (TypeError, ValueError, OverflowError):
            raise self.err(field, f"expected a regular array of numbers, got {_short(v)}") from None
        if shape is not None:
            if a.ndim != len(shape) or any(s is not None and s != n for s, n in zip(shape, a.shape, strict=True)):
                want = "x".join("n" if s is None else str(s) for s in shape)
                raise self.err(field, f"expected an array of shape {want}, got shape {a.shape}")
        return a

    def vec(self, v, field: str, n: int | None = None) -> list:
        if isinstance(v, int | float) and not isinstance(v, bool) and n is None:
            return [float(v)]
        return self.array(v, field, (n,)).tolist()


def _short(v) -> str:
    """repr of a value, cut to 80 characters (values in messages can be megabytes long)."""
    r = repr(v)
    return r if len(r) <= 80 else r[:77] + "..."


def _check_numbers(ctx: _Ctx, v, field: str, depth: int = 0) -> None:
    """Refuse anything but (nested lists of) TOML numbers: numeric strings, booleans, tables, huge integers."""
    if isinstance(v, list):
        if depth > 8:
            raise ctx.err(field, "arrays nested too deeply")
        for x in v:
            _check_numbers(ctx, x, field, depth + 1)
        return
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ctx.err(field, f"expected numbers, got {_short(v)}")
    if isinstance(v, int) and abs(v) > 1e300:
        raise ctx.err(field, f"number too large for a float ({len(str(v))} digits)")


# ----------------------------------------------------------------------------------------------
# Placements
# ----------------------------------------------------------------------------------------------


def _placement_to(E) -> dict | None:
    E = np.asarray(E, dtype=float)
    out = {}
    if np.any(E[:3, 3] != 0.0):
        out["translation"] = E[:3, 3].tolist()
    if np.any(E[:3, :3] != np.eye(3)):
        out["rotation"] = E[:3, :3].tolist()
    return out or None


def _placement_from(d, ctx: _Ctx, field: str) -> np.ndarray:
    ctx.table(d, field, {"translation", "rotation"})
    E = np.eye(4)
    if "translation" in d:
        E[:3, 3] = ctx.array(d["translation"], f"{field}.translation", (3,))
    if "rotation" in d:
        r = d["rotation"]
        if isinstance(r, dict):
            ctx.table(r, f"{field}.rotation", {"axis", "angle"}, {"axis", "angle"})
            axis = ctx.array(r["axis"], f"{field}.rotation.axis", (3,))
            if not np.linalg.norm(axis) > 0:
                raise ctx.err(f"{field}.rotation.axis", "must be non-zero")
            E[:3, :3] = rot_axis_angle(axis, ctx.number(r["angle"], f"{field}.rotation.angle"))
        else:
            E[:3, :3] = ctx.array(r, f"{field}.rotation", (3, 3))
    return E


# ----------------------------------------------------------------------------------------------
# Shapes
# ----------------------------------------------------------------------------------------------


def _shape_to(s, out_dir: str) -> dict:
    if isinstance(s, bd.Cuboid):
        return {"type": "cuboid", "sides": list(map(float, s.sides)), "density": float(s.density)}
    if isinstance(s, bd.Sphere):
        return {"type": "sphere", "radius": float(s.radius), "density": float(s.density)}
    if isinstance(s, bd.Cylinder):
        return {"type": "cylinder", "radius": float(s.radius), "height": float(s.height), "density": float(s.density)}
    if isinstance(s, bd.Composite):
        parts = []
        for shape, E in s.parts:
            p = {"shape": _shape_to(shape, out_dir)}
            pl = _placement_to(E)
            if pl:
                p["placement"] = pl
            parts.append(p)
        return {"type": "composite", "parts": parts}
    if isinstance(s, bd.Mesh):
        if s.path is None:
            raise SceneError(f"mesh {s.name!r}: built from arrays, not read from a file; cannot be stored in a scene")
        rel = os.path.relpath(os.path.abspath(s.path), os.path.abspath(out_dir))
        d = {"type": "mesh", "file": rel.replace(os.sep, "/"), "density": float(s.density)}
        if s.scale != 1.0:
            d["scale"] = float(s.scale)
        return d
    raise SceneError(f"cannot save shape of type {type(s).__name__}")


def _shape_from(d, ctx: _Ctx, field: str):
    if not isinstance(d, dict) or "type" not in d:
        raise ctx.err(field, "expected a table with a 'type'")
    kind = d["type"]
    try:
        if kind == "cuboid":
            ctx.table(d, field, {"type", "sides", "density"}, {"sides"})
            return bd.Cuboid(*ctx.array(d["sides"], f"{field}.sides", (3,)),
                             density=ctx.number(d.get("density", 1.0), f"{field}.density"))
        if kind == "sphere":
            ctx.table(d, field, {"type", "radius", "density"}, {"radius"})
            return bd.Sphere(ctx.number(d["radius"], f"{field}.radius"),
                             density=ctx.number(d.get("density", 1.0), f"{field}.density"))
        if kind == "cylinder":
            ctx.table(d, field, {"type", "radius", "height", "density"}, {"radius", "height"})
            return bd.Cylinder(ctx.number(d["radius"], f"{field}.radius"), ctx.number(d["height"], f"{field}.height"),
                               density=ctx.number(d.get("density", 1.0), f"{field}.density"))
        if kind == "composite":
            ctx.table(d, field, {"type", "parts"}, {"parts"})
            if not isinstance(d["parts"], list) or not d["parts"]:
                raise ctx.err(f"{field}.parts", "expected a non-empty array of tables")
            parts = []
            for k, p in enumerate(d["parts"]):
                f = f"{field}.parts[{k}]"
                ctx.table(p, f, {"shape", "placement"}, {"shape"})
                E = _placement_from(p.get("placement", {}), ctx, f"{f}.placement")
                parts.append((_shape_from(p["shape"], ctx, f"{f}.shape"), E))
            return bd.Composite(parts)
        if kind == "mesh":
            ctx.table(d, field, {"type", "file", "density", "scale"}, {"file"})
            path = ctx.string(d["file"], f"{field}.file")
            full = path if os.path.isabs(path) else os.path.join(ctx.base_dir, path)
            if not os.path.isfile(full):
                raise ctx.err(f"{field}.file", f"mesh file not found: {full}")
            return bd.Mesh.from_obj(full, density=ctx.number(d.get("density", 1.0), f"{field}.density"),
                                    scale=ctx.number(d.get("scale", 1.0), f"{field}.scale"))
    except ModelError as e:
        raise ctx.err(field, str(e)) from None
    raise ctx.err(f"{field}.type", f"unknown shape type {_short(kind)} (expected cuboid, sphere, cylinder, composite, "
                  "mesh)")


# ----------------------------------------------------------------------------------------------
# Joints
# ----------------------------------------------------------------------------------------------

class _JointReader:
    """Typed access to one joint table for ``Joint.from_scene`` (errors name the file and field)."""

    def __init__(self, d: dict, ctx: _Ctx, field: str):
        self.d, self.ctx, self.field = d, ctx, field

    def _f(self, key: str) -> str:
        return f"{self.field}.{key}"

    def array(self, key: str, shape, default=None) -> np.ndarray:
        if key not in self.d:
            if default is None:
                raise self.ctx.err(self._f(key), "missing required key")
            return np.asarray(default, dtype=float)
        return self.ctx.array(self.d[key], self._f(key), shape)

    def string(self, key: str, default=None) -> str:
        if key not in self.d:
            if default is None:
                raise self.ctx.err(self._f(key), "missing required key")
            return default
        return self.ctx.string(self.d[key], self._f(key))

    def placements(self, key: str) -> list:
        v = self.d.get(key)
        if not isinstance(v, list):
            raise self.ctx.err(self._f(key), "expected an array of placements")
        return [_placement_from(F, self.ctx, f"{self._f(key)}[{k}]") for k, F in enumerate(v)]

    def joints(self, key: str) -> list:
        subs = self.d.get(key)
        if not isinstance(subs, list) or not subs:
            raise self.ctx.err(self._f(key), "expected a non-empty array of joint tables")
        return [_joint_from(s, self.ctx, f"{self._f(key)}[{k}]") for k, s in enumerate(subs)]


class _JointWriter:
    """Helpers for ``Joint.to_scene``."""

    @staticmethod
    def placement(E):
        return _placement_to(E)


def _joint_to(j) -> dict:
    return j.to_scene(_JointWriter)


def _joint_from(d, ctx: _Ctx, field: str, extra: set = frozenset()):
    if not isinstance(d, dict) or "type" not in d:
        raise ctx.err(field, "expected a table with a 'type'")
    kind = d["type"]
    if not isinstance(kind, str) or kind not in JOINTS:
        raise ctx.err(f"{field}.type", f"unknown joint type {_short(kind)} (expected one of {', '.join(JOINTS)})")
    cls = JOINTS[kind]
    ctx.table(d, field, {"type"} | set(cls.scene_keys) | set(extra))
    try:
        return cls.from_scene(_JointReader(d, ctx, field))
    except ModelError as e:
        raise ctx.err(field, str(e)) from None


# ----------------------------------------------------------------------------------------------
# Forces
# ----------------------------------------------------------------------------------------------


_REQUIRED = object()


class _ForceReader:
    """Typed access to one ``[[forces]]`` table for ``Force.from_scene`` (errors name the file and field)."""

    def __init__(self, d: dict, ctx: _Ctx, field: str, name: str):
        self.d, self.ctx, self.field, self.name = d, ctx, field, name

    def _f(self, key: str) -> str:
        return f"{self.field}.{key}"

    def err(self, key: str, msg: str) -> SceneError:
        return self.ctx.err(self._f(key), msg)

    def _get(self, key: str, default, read):
        if key not in self.d:
            if default is _REQUIRED:
                raise self.err(key, "missing required key")
            return default
        return read(self.d[key], self._f(key))

    def number(self, key: str, default=_REQUIRED):
        return self._get(key, default, self.ctx.number)

    def string(self, key: str, default=_REQUIRED):
        return self._get(key, default, self.ctx.string)

    def boolean(self, key: str, default=_REQUIRED):
        return self._get(key, default, self.ctx.boolean)

    def array(self, key: str, shape, default=_REQUIRED):
        return self._get(key, default, lambda v, f: self.ctx.array(v, f, shape))

    def choice(self, key: str, options: tuple, default=_REQUIRED):
        return self._get(key, default, lambda v, f: _choice(self.ctx, v, f, options))

    def points(self, key: str) -> list:
        return self._get(key, _REQUIRED, lambda v, f: _points_from(v, self.ctx, f))


def _points_from(v, ctx: _Ctx, field: str) -> list:
    if not isinstance(v, list) or not v:
        raise ctx.err(field, "expected a non-empty array of { body, point } tables")
    out = []
    for k, p in enumerate(v):
        f = f"{field}[{k}]"
        ctx.table(p, f, {"body", "point"}, {"body", "point"})
        b = ctx.string(p["body"], f"{f}.body")
        out.append((None if b == "world" else b, ctx.array(p["point"], f"{f}.point", (3,))))
    return out


def _force_to(f) -> dict:
    if type(f).scene_type is None:
        raise SceneError(f"force '{f.name}' ({type(f).__name__}) uses Python callables or custom code and cannot be "
                         "stored in a scene file")
    return {"type": type(f).scene_type, "name": f.name, **f.to_scene()}


def _force_from(d, ctx: _Ctx, field: str):
    if not isinstance(d, dict) or "type" not in d:
        raise ctx.err(field, "expected a table with a 'type'")
    kind = d["type"]
    if not isinstance(kind, str) or kind not in SCENE_TYPES:
        raise ctx.err(f"{field}.type", f"unknown force type {_short(kind)} (expected one of {', '.join(SCENE_TYPES)})")
    cls = SCENE_TYPES[kind]
    ctx.table(d, field, {*cls.scene_keys, "type", "name"}, set(cls.scene_required))
    name = ctx.string(d.get("name", f"{kind}{field}"), f"{field}.name")
    try:
        return cls.from_scene(_ForceReader(d, ctx, field, name))
    except ModelError as e:
        raise ctx.err(field, str(e)) from None


def _choice(ctx: _Ctx, v, field: str, options: tuple) -> str:
    v = ctx.string(v, field)
    if v not in options:
        raise ctx.err(field, f"expected one of {', '.join(map(repr, options))}, got {v!r}")
    return v
