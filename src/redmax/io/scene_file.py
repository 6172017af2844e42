"""Scene files: a declarative TOML description of a scene (model, forces, inputs, integrator settings).

Format (``format = "redmax-scene"``, ``version = 1``); see ``docs/scene-files.md`` for the full
reference.  Every key is checked: unknown keys, wrong types and wrong sizes raise
:class:`redmax.SceneError` naming the file and the field (``bodies[2].joint.axis``).  Nothing in a file
is executed.  ``save`` writes floats in their shortest exact form, so save-then-load rebuilds the same
model bit for bit.
"""

from __future__ import annotations

import os
import tomllib

import numpy as np

from redmax import bodies as bd
from redmax import forces as fc
from redmax.builder import ModelBuilder
from redmax.errors import ModelError, RedmaxError, SceneError
from redmax.integrators import INTEGRATORS
from redmax.io.toml_write import dumps
from redmax.joints._registry import JOINTS
from redmax.model import Schedule
from redmax.scene import Scene
from redmax.spatial import rot_axis_angle

__all__ = ["load_scene_file", "save_scene_file", "scene_from_dict", "scene_to_dict"]

FORMAT = "redmax-scene"
VERSION = 1
MAX_FILE_BYTES = 64 * 2**20  # a scene file is text written by hand or by save(); refuse anything bigger
_TABLES = frozenset({"scene", "bodies", "bodies.joint", "forces", "constraints", "couplings", "objective",
                     "parameters"})


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


def _points_to(points) -> list:
    return [{"body": "world" if b is None else b, "point": np.asarray(r, dtype=float).tolist()} for b, r in points]


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
    base = {"name": f.name}
    if isinstance(f, fc.WorldPointForce):
        (body, r), = f.points
        return {"type": "world_point_force", **base, "body": body, "point": np.asarray(r, float).tolist(),
                "force": np.asarray(f.force, float).tolist(), "stiffness": f.stiffness,
                "count_energy": f.energy_key is not None}
    if isinstance(f, fc.PointSpring):
        return {"type": "point_spring", **base, "points": _points_to(f.points), "ks": float(f.ks_in),
                "kd": float(f.kd_in), "stiffness": f.stiffness}
    if isinstance(f, fc.Cable | fc.SpringDamper):
        d = {"type": "cable" if isinstance(f, fc.Cable) else "spring_damper", **base, "points": _points_to(f.points),
             "k": float(f.k_in), "d": float(f.d_in), "stiffness": f.stiffness}
        if f.L_in is not None:
            d["rest_length"] = float(f.L_in)
        return d
    if isinstance(f, fc.GroundContact):
        kn, kd, kt, mu, normal, origin = f.params_in
        return {"type": "ground_contact", **base, "points": _points_to(f.points), "kn": float(kn), "kd": float(kd),
                "kt": float(kt), "mu": float(mu), "normal": np.asarray(normal, float).tolist(),
                "origin": np.asarray(origin, float).tolist(), "stiffness": f.stiffness,
                **({"dynamic_friction": f.dynamic_friction} if f.dynamic_friction != "opposing" else {})}
    if isinstance(f, fc.JointLimit):
        lower, upper, k, d = f.args
        return {"type": "joint_limit", **base, "joint": f.joint,
                "lower": np.atleast_1d(np.asarray(lower, float)).tolist(),
                "upper": np.atleast_1d(np.asarray(upper, float)).tolist(), "stiffness": float(k), "damping": float(d)}
    raise SceneError(f"force '{f.name}' ({type(f).__name__}) uses Python callables or custom code and cannot be "
                     "stored in a scene file")


_FORCE_KEYS = {
    "world_point_force": ({"body", "point", "force", "stiffness", "count_energy"}, {"body", "point", "force"}),
    "point_spring": ({"points", "ks", "kd", "stiffness"}, {"points", "ks"}),
    "spring_damper": ({"points", "k", "d", "rest_length", "stiffness"}, {"points", "k"}),
    "cable": ({"points", "k", "d", "rest_length", "stiffness"}, {"points", "k"}),
    "ground_contact": ({"points", "kn", "kd", "kt", "mu", "normal", "origin", "stiffness", "dynamic_friction"},
                       {"points", "kn"}),
    "joint_limit": ({"joint", "lower", "upper", "stiffness", "damping"}, {"joint", "lower", "upper", "stiffness"}),
}


def _force_from(d, ctx: _Ctx, field: str):
    if not isinstance(d, dict) or "type" not in d:
        raise ctx.err(field, "expected a table with a 'type'")
    kind = d["type"]
    if not isinstance(kind, str) or kind not in _FORCE_KEYS:
        raise ctx.err(f"{field}.type", f"unknown force type {_short(kind)} (expected one of {', '.join(_FORCE_KEYS)})")
    allowed, required = _FORCE_KEYS[kind]
    ctx.table(d, field, allowed | {"type", "name"}, required)
    name = ctx.string(d.get("name", f"{kind}{field}"), f"{field}.name")
    st = ctx.string(d.get("stiffness", "full"), f"{field}.stiffness") if kind != "joint_limit" else None
    num = ctx.number
    try:
        if kind == "world_point_force":
            return fc.WorldPointForce(ctx.string(d["body"], f"{field}.body"),
                                      ctx.array(d["point"], f"{field}.point", (3,)),
                                      ctx.array(d["force"], f"{field}.force", (3,)), name=name, stiffness=st,
                                      count_energy=ctx.boolean(d.get("count_energy", True), f"{field}.count_energy"))
        pts = _points_from(d.get("points"), ctx, f"{field}.points") if "points" in allowed else None
        if kind == "point_spring":
            if len(pts) != 2:
                raise ctx.err(f"{field}.points", f"a point spring joins exactly 2 points, got {len(pts)}")
            return fc.PointSpring(pts[0], pts[1], num(d["ks"], f"{field}.ks"), num(d.get("kd", 0.0), f"{field}.kd"),
                                  name=name, stiffness=st)
        if kind in ("spring_damper", "cable"):
            L = num(d["rest_length"], f"{field}.rest_length") if "rest_length" in d else None
            k, dd = num(d["k"], f"{field}.k"), num(d.get("d", 0.0), f"{field}.d")
            if kind == "cable":
                return fc.Cable(pts, k, dd, L, name=name, stiffness=st)
            if len(pts) != 2:
                raise ctx.err(f"{field}.points", f"a spring-damper joins exactly 2 points, got {len(pts)}")
            return fc.SpringDamper(pts[0], pts[1], k, dd, L, name=name, stiffness=st)
        if kind == "ground_contact":
            return fc.GroundContact(pts, num(d["kn"], f"{field}.kn"), num(d.get("kd", 0.0), f"{field}.kd"),
                                    num(d.get("kt", 0.0), f"{field}.kt"), num(d.get("mu", 0.0), f"{field}.mu"),
                                    ctx.array(d.get("normal", [0, 0, 1]), f"{field}.normal", (3,)),
                                    ctx.array(d.get("origin", [0, 0, 0]), f"{field}.origin", (3,)), name=name,
                                    stiffness=st, dynamic_friction=_choice(ctx, d.get("dynamic_friction", "opposing"),
                                                                             f"{field}.dynamic_friction",
                                                                             tuple(fc.GroundContact.DYNAMIC_FRICTION)))
        return fc.JointLimit(ctx.string(d["joint"], f"{field}.joint"),
                             ctx.array(d["lower"], f"{field}.lower", (None,)),
                             ctx.array(d["upper"], f"{field}.upper", (None,)),
                             num(d["stiffness"], f"{field}.stiffness"), num(d.get("damping", 0.0), f"{field}.damping"),
                             name=name)
    except ModelError as e:
        raise ctx.err(field, str(e)) from None


# ----------------------------------------------------------------------------------------------
# Whole scenes
# ----------------------------------------------------------------------------------------------

_SCENE_KEYS = {"name", "description", "gravity", "duration", "dt", "integrator", "method", "rtol", "atol", "symmetrize",
               "coriolis", "gravity_stiffness", "baumgarte", "baumgarte_acc", "constraint_solver", "on_instability"}
_BODY_KEYS = {"name", "parent", "shape", "mass", "inertia", "placement", "damping", "joint"}
_JOINT_EXTRA = {"name", "placement", "q", "qd", "stiffness", "damping", "rest", "torque"}


def _torque_to(t):
    if t is None:
        return None
    if isinstance(t, Schedule):
        return {"times": t.times.tolist(), "values": t.values.tolist()}
    if callable(t):
        raise SceneError("a joint torque given as a Python callable cannot be stored; use redmax.Schedule")
    return np.asarray(t, dtype=float).tolist()


def scene_to_dict(scene, out_dir: str = ".") -> dict:
    """The plain-data form of ``scene`` (paths of meshes relative to ``out_dir``)."""
    src = scene.model.source
    if not src:
        raise SceneError(f"scene {scene.name!r}: its model has no builder record (build it with ModelBuilder)")
    if scene.forces is not None:
        raise SceneError(f"scene {scene.name!r}: a replacement force list (Scene.forces) cannot be saved; add the "
                         "forces to the model with ModelBuilder.add_force instead")
    head = {"name": scene.name, "description": scene.description,
            "gravity": np.asarray(src["gravity"], dtype=float).tolist(), "duration": float(scene.duration),
            "dt": float(scene.dt), "integrator": scene.integrator, "method": scene.method, "rtol": float(scene.rtol),
            "atol": float(scene.atol), "symmetrize": bool(scene.symmetrize)}
    if scene.coriolis != "explicit":
        head["coriolis"] = scene.coriolis
    if scene.gravity != "explicit":
        head["gravity_stiffness"] = scene.gravity
    if getattr(scene, "on_instability", "warn") != "warn":
        head["on_instability"] = scene.on_instability
    body_list = []
    for r in src["bodies"]:
        b = {"name": r.name}
        if r.parent is not None:
            b["parent"] = r.parent
        if r.shape is not None:
            b["shape"] = _shape_to(r.shape, out_dir)
        else:
            b["mass"] = float(r.mass)
            b["inertia"] = np.asarray(r.inertia, dtype=float).tolist()
        if r.E_body is not None and _placement_to(r.E_body):
            b["placement"] = _placement_to(r.E_body)
        if np.any(np.asarray(r.damping, dtype=float) != 0):
            b["damping"] = float(r.damping)
        j = _joint_to(r.joint)
        if r.joint_name != r.name:
            j["name"] = r.joint_name
        if r.E_pj0 is not None and _placement_to(r.E_pj0):
            j["placement"] = _placement_to(r.E_pj0)
        for key, val in (("q", r.q), ("qd", r.qd), ("rest", r.rest)):
            if val is not None:
                j[key] = np.atleast_1d(np.asarray(val, dtype=float)).tolist()
        for key, val in (("stiffness", r.stiffness), ("damping", r.joint_damping)):
            a = np.atleast_1d(np.asarray(val, dtype=float))
            if np.any(a != 0):
                j[key] = a.tolist()
        try:
            tq = _torque_to(r.torque)
        except SceneError as e:
            raise SceneError(f"joint '{r.joint_name}': {e}") from None
        if tq is not None:
            j["torque"] = tq
        b["joint"] = j
        body_list.append(b)
    doc = {"format": FORMAT, "version": VERSION, "scene": head, "bodies": body_list}
    if src["forces"]:
        doc["forces"] = [_force_to(f) for f in src["forces"]]
    _constraints_to_doc(scene, src, head, doc)
    if getattr(scene, "objective_spec", None) is not None:
        from redmax.io.objective_file import objective_to

        doc["objective"], plist = objective_to(scene.objective_spec, scene.parameter_specs or [])
        if plist:
            doc["parameters"] = plist
    return doc


def _constraints_to_doc(scene, src, head, doc) -> None:
    """[scene] Baumgarte gains and solver, [[constraints]], [[couplings]] (docs/scene-files.md)."""
    from redmax.io.scene_constraints import constraints_to, couplings_to

    if scene.baumgarte != 5.0:
        head["baumgarte"] = float(scene.baumgarte)
    if tuple(scene.baumgarte_acc) != (5.0, 5.0):
        head["baumgarte_acc"] = [float(x) for x in scene.baumgarte_acc]
    if scene.constraint_solver != "auto":
        head["constraint_solver"] = scene.constraint_solver
    if src.get("constraints"):
        doc["constraints"] = constraints_to(src["constraints"])
    if src.get("couplings"):
        doc["couplings"] = couplings_to(src["couplings"])


def scene_from_dict(doc: dict, file: str = "<scene>", base_dir: str = "."):
    """Build a :class:`redmax.scenes.Scene` from the plain-data form (as read from TOML)."""

    ctx = _Ctx(file, base_dir)
    if doc.get("format") != FORMAT:
        raise ctx.err("format", f"expected {FORMAT!r}, got {doc.get('format')!r}")
    if doc.get("version") != VERSION:
        raise ctx.err("version", f"unsupported version {doc.get('version')!r} (this redmax reads version {VERSION})")
    ctx.table(doc, "", {"format", "version", "scene", "bodies", "forces", "constraints", "couplings", "objective",
               "parameters"},
              {"format", "version", "scene", "bodies"})
    head = ctx.table(doc["scene"], "scene", _SCENE_KEYS, {"name"})
    name = ctx.string(head["name"], "scene.name")
    b = ModelBuilder(name, ctx.array(head.get("gravity", [0, 0, -9.81]), "scene.gravity", (3,)))
    if not isinstance(doc["bodies"], list) or not doc["bodies"]:
        raise ctx.err("bodies", "expected a non-empty array of [[bodies]] tables")
    for i, bdoc in enumerate(doc["bodies"]):
        f = f"bodies[{i}]"
        ctx.table(bdoc, f, _BODY_KEYS, {"name", "joint"})
        if bdoc["name"] == "world":  # force points name the world frame "world": a body of that name is ambiguous
            raise ctx.err(f"{f}.name", "'world' is reserved for the fixed world frame (force points refer to it); "
                          "choose another name")
        jdoc = bdoc["joint"]
        joint = _joint_from(jdoc, ctx, f"{f}.joint", _JOINT_EXTRA)
        try:
            joint.params("joint")
        except ModelError as e:
            raise ctx.err(f"{f}.joint", str(e).removeprefix("joint: ")) from None
        shape = _shape_from(bdoc["shape"], ctx, f"{f}.shape") if "shape" in bdoc else None
        if shape is None and not ("mass" in bdoc and "inertia" in bdoc):
            raise ctx.err(f, "give a shape, or both mass and inertia")
        torque = None
        if "torque" in jdoc:
            t = jdoc["torque"]
            if isinstance(t, dict):
                ctx.table(t, f"{f}.joint.torque", {"times", "values"}, {"times", "values"})
                try:
                    torque = Schedule(ctx.array(t["times"], f"{f}.joint.torque.times", (None,)),
                                      ctx.array(t["values"], f"{f}.joint.torque.values"))
                except ModelError as e:
                    raise ctx.err(f"{f}.joint.torque", str(e)) from None
            else:
                torque = ctx.vec(t, f"{f}.joint.torque")
        nq = joint.nq
        if isinstance(torque, Schedule) and torque.values.shape[1] != nq:
            raise ctx.err(f"{f}.joint.torque.values", f"rows of {torque.values.shape[1]} values, expected {nq} "
                          f"(one per DOF of the {joint.kind} joint)")
        if torque is not None and not isinstance(torque, Schedule) and len(torque) != nq:
            raise ctx.err(f"{f}.joint.torque", f"expected {nq} values (one per DOF), got {len(torque)}")
        kw = {}
        for key, arg in (("q", "q"), ("qd", "qd"), ("rest", "rest"), ("stiffness", "stiffness"),
                         ("damping", "joint_damping")):
            if key in jdoc:
                kw[arg] = ctx.vec(jdoc[key], f"{f}.joint.{key}")
                per_dof_scalar = key in ("stiffness", "damping") and len(kw[arg]) == 1
                if len(kw[arg]) != nq and not per_dof_scalar:
                    raise ctx.err(f"{f}.joint.{key}", f"expected {nq} values (one per DOF of the {joint.kind} "
                                  f"joint), got {len(kw[arg])}")
        try:
            b.add_body(
                ctx.string(bdoc["name"], f"{f}.name"), shape, joint,
                parent=ctx.string(bdoc["parent"], f"{f}.parent") if "parent" in bdoc else None,
                joint_name=ctx.string(jdoc["name"], f"{f}.joint.name") if "name" in jdoc else None,
                joint_placement=(_placement_from(jdoc["placement"], ctx, f"{f}.joint.placement")
                                 if "placement" in jdoc else None),
                body_placement=(_placement_from(bdoc["placement"], ctx, f"{f}.placement")
                                if "placement" in bdoc else None),
                damping=ctx.number(bdoc.get("damping", 0.0), f"{f}.damping"),
                torque=torque,
                mass=ctx.number(bdoc["mass"], f"{f}.mass") if "mass" in bdoc else None,
                inertia=ctx.array(bdoc["inertia"], f"{f}.inertia") if "inertia" in bdoc else None,
                **kw,
            )
        except ModelError as e:
            raise ctx.err(f, str(e)) from None
    forces_doc = doc.get("forces", [])
    if not isinstance(forces_doc, list):
        raise ctx.err("forces", "expected an array of [[forces]] tables")
    for k, fdoc in enumerate(forces_doc):
        b.add_force(_force_from(fdoc, ctx, f"forces[{k}]"))
    if "constraints" in doc or "couplings" in doc:
        from redmax.io.scene_constraints import constraints_from, couplings_from

        constraints_from(doc.get("constraints", []), ctx, b)
        couplings_from(doc.get("couplings", []), ctx, b)
    try:
        model = b.build()
    except ModelError as e:
        raise SceneError(f"{file}: {e}") from None
    integ = ctx.string(head.get("integrator", "euler"), "scene.integrator")
    if integ not in INTEGRATORS:
        raise ctx.err("scene.integrator", f"expected one of {', '.join(map(repr, INTEGRATORS))}, got {integ!r}")
    method = ctx.string(head.get("method", "redmax"), "scene.method")
    if method not in ("redmax", "recursive"):
        raise ctx.err("scene.method", f"expected 'redmax' or 'recursive', got {method!r}")
    dt = ctx.number(head.get("dt", 1e-2), "scene.dt")
    duration = ctx.number(head.get("duration", 1.0), "scene.duration")
    if not (dt > 0 and np.isfinite(dt)):
        raise ctx.err("scene.dt", f"must be positive and finite, got {dt}")
    if not (duration >= 0 and np.isfinite(duration)):
        raise ctx.err("scene.duration", f"must be >= 0 and finite, got {duration}")
    if dt > duration > 0:
        raise ctx.err("scene.dt", f"{dt} is longer than scene.duration = {duration}: not one step would be taken")
    tols = {}
    for key in ("rtol", "atol"):
        tols[key] = ctx.number(head.get(key, 1e-8), f"scene.{key}")
        if not (tols[key] > 0 and np.isfinite(tols[key])):
            raise ctx.err(f"scene.{key}", f"must be positive and finite, got {tols[key]}")
    objective, parameters = None, None
    if "objective" in doc:
        from redmax.io.objective_file import objective_from

        objective, parameters = objective_from(doc, ctx)
    elif "parameters" in doc:
        raise ctx.err("parameters", "[[parameters]] need an [objective]")
    return Scene(name, model, duration=duration, dt=dt, integrator=integ, objective_spec=objective,
                 parameter_specs=parameters,
                 description=ctx.string(head.get("description", ""), "scene.description"), method=method,
                 rtol=tols["rtol"], atol=tols["atol"],
                 symmetrize=ctx.boolean(head.get("symmetrize", False), "scene.symmetrize"),
                 coriolis=_choice(ctx, head.get("coriolis", "explicit"), "scene.coriolis", ("explicit", "implicit")),
                 gravity=_choice(ctx, head.get("gravity_stiffness", "explicit"), "scene.gravity_stiffness",
                                 ("explicit", "implicit")),
                 on_instability=_choice(ctx, head.get("on_instability", "warn"), "scene.on_instability",
                                        ("warn", "raise", "ignore")), **_gains(ctx, head))


def _gains(ctx: _Ctx, head: dict) -> dict:
    """[scene] baumgarte (>= 0), baumgarte_acc ([b1, b2] >= 0), constraint_solver."""
    beta = ctx.number(head.get("baumgarte", 5.0), "scene.baumgarte")
    acc = ctx.array(head.get("baumgarte_acc", [5.0, 5.0]), "scene.baumgarte_acc", (2,))
    if not (np.isfinite(beta) and beta >= 0):
        raise ctx.err("scene.baumgarte", f"must be finite and >= 0, got {beta}")
    if not (np.all(np.isfinite(acc)) and np.all(acc >= 0)):
        raise ctx.err("scene.baumgarte_acc", f"must be two finite numbers >= 0, got {acc.tolist()}")
    solver = _choice(ctx, head.get("constraint_solver", "auto"), "scene.constraint_solver", ("auto", "kkt", "qp"))
    return {"baumgarte": beta, "baumgarte_acc": (float(acc[0]), float(acc[1])), "constraint_solver": solver}


def _choice(ctx: _Ctx, v, field: str, options: tuple) -> str:
    v = ctx.string(v, field)
    if v not in options:
        raise ctx.err(field, f"expected one of {', '.join(map(repr, options))}, got {v!r}")
    return v


def load_scene_file(path):
    """Read a scene file (TOML) and build its Scene.  Raises SceneError naming the file and field."""
    p = os.fspath(path)
    try:
        with open(p, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise SceneError(f"{p}: no such scene file") from None
    except OSError as e:
        raise SceneError(f"{p}: cannot read: {e.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise SceneError(f"{p}: larger than {MAX_FILE_BYTES // 2**20} MiB; not a scene file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise SceneError(f"{p}: line {line}: not UTF-8 text (byte {data[e.start]:#04x}); save the file as "
                         "UTF-8") from None
    try:
        doc = tomllib.loads(text.removeprefix("\ufeff"))
    except tomllib.TOMLDecodeError as e:
        raise SceneError(f"{p}: not valid TOML: {e}") from None
    except RecursionError:
        raise SceneError(f"{p}: not a scene file: arrays or tables nested too deeply") from None
    try:
        return scene_from_dict(doc, p, os.path.dirname(os.path.abspath(p)))
    except SceneError:
        raise
    except RedmaxError as e:
        raise SceneError(f"{p}: {e}") from None


def save_scene_file(scene, path) -> str:
    """Write ``scene`` as a scene file; mesh paths are stored relative to the file's folder.  A SceneError names
    what is not a Scene, or the path that cannot be written."""
    if not hasattr(getattr(scene, "model", None), "packed"):
        got = "None" if scene is None else type(scene).__name__
        hint = " (a Model: wrap it as redmax.scenes.Scene(name, model))" if hasattr(scene, "packed") else ""
        raise SceneError(f"save: expected a redmax.scenes.Scene, got {got}{hint}")
    try:
        p = os.fspath(path)
    except TypeError:
        raise SceneError(f"save: a path is text or a path object, got {path!r}") from None
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    out_dir = os.path.dirname(os.path.abspath(p))
    text = "# redmax scene file (TOML); format reference: docs/scene-files.md\n" + dumps(scene_to_dict(scene, out_dir),
                                                                                          _TABLES)
    try:
        with open(p, "w", encoding="utf-8") as fh:
            fh.write(text)
    except IsADirectoryError:
        raise SceneError(f"{p}: is a directory; give a file name ending in .toml") from None
    except FileNotFoundError:
        raise SceneError(f"{p}: cannot write: folder {out_dir} does not exist") from None
    except OSError as e:
        raise SceneError(f"{p}: cannot write: {e.strerror}") from None
    return p
