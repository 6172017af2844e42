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

from redmax.builder import ModelBuilder
from redmax.errors import ModelError, RedmaxError, SceneError
from redmax.integrators import INTEGRATORS
from redmax.io.scene_elements import (
    _choice,
    _Ctx,
    _force_from,
    _force_to,
    _joint_from,
    _joint_to,
    _placement_from,
    _placement_to,
    _shape_from,
    _shape_to,
)
from redmax.io.toml_write import dumps
from redmax.model import Schedule
from redmax.scene import Scene
from redmax.solvers.constrained import CONSTRAINED_SOLVERS
from redmax.solvers.linear import SOLVERS

__all__ = ["load_scene_file", "save_scene_file", "scene_from_dict", "scene_to_dict"]

FORMAT = "redmax-scene"
VERSION = 1
MAX_FILE_BYTES = 64 * 2**20  # a scene file is text written by hand or by save(); refuse anything bigger
_TABLES = frozenset({"scene", "bodies", "bodies.joint", "forces", "constraints", "couplings", "objective",
                     "parameters", "deformables"})


# ----------------------------------------------------------------------------------------------
# Whole scenes
# ----------------------------------------------------------------------------------------------

_SCENE_KEYS = {"name", "description", "gravity", "duration", "dt", "integrator", "method", "rtol", "atol", "symmetrize",
               "coriolis", "gravity_stiffness", "baumgarte", "baumgarte_acc", "constraint_solver", "on_instability",
               "solver", "params", "friction", "friction_solver", "compat"}
_BODY_KEYS = {"name", "parent", "shape", "mass", "inertia", "placement", "damping", "joint"}
_JOINT_EXTRA = {"name", "placement", "q", "qd", "stiffness", "damping", "rest", "torque", "contact"}


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
    if getattr(scene, "solver", "auto") != "auto":
        if not isinstance(scene.solver, str):
            raise SceneError(f"scene {scene.name!r}: a solver object cannot be stored; give its registered name")
        head["solver"] = scene.solver
    if getattr(scene, "params", None):
        head["params"] = dict(scene.params)
    if src.get("friction") is not None:
        head["friction"] = dict(src["friction"])
    if getattr(scene, "friction_solver", "bisp") != "bisp":
        head["friction_solver"] = scene.friction_solver
    if getattr(scene, "compat", None) is not None:
        head["compat"] = scene.compat
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
        if getattr(r, "contact", None) is not None:
            j["contact"] = r.contact.to_scene()
        b["joint"] = j
        body_list.append(b)
    doc = {"format": FORMAT, "version": VERSION, "scene": head, "bodies": body_list}
    if src.get("deformables"):
        from redmax.io.scene_deformables import deformables_to

        doc["deformables"] = deformables_to(src["deformables"])
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


def scene_from_dict(doc: dict, file: str = "<scene>", base_dir: str = ".", *, check_regular: bool = True):
    """Build a :class:`redmax.scenes.Scene` from the plain-data form (as read from TOML)."""

    ctx = _Ctx(file, base_dir)
    if doc.get("format") != FORMAT:
        raise ctx.err("format", f"expected {FORMAT!r}, got {doc.get('format')!r}")
    if doc.get("version") != VERSION:
        raise ctx.err("version", f"unsupported version {doc.get('version')!r} (this redmax reads version {VERSION})")
    ctx.table(doc, "", {"format", "version", "scene", "bodies", "forces", "constraints", "couplings", "objective",
               "parameters", "deformables"},
              {"format", "version", "scene"} | (set() if "deformables" in doc else {"bodies"}))
    head = ctx.table(doc["scene"], "scene", _SCENE_KEYS, {"name"})
    name = ctx.string(head["name"], "scene.name")
    try:
        b = ModelBuilder(name, ctx.array(head.get("gravity", [0, 0, -9.81]), "scene.gravity", (3,)),
                         friction=head.get("friction"))
    except ModelError as e:
        raise ctx.err("scene.friction", str(e).split(": ", 1)[-1]) from None
    bodies_doc = doc.get("bodies", [])
    if not isinstance(bodies_doc, list) or not (bodies_doc or "deformables" in doc):
        raise ctx.err("bodies", "expected a non-empty array of [[bodies]] tables")
    for i, bdoc in enumerate(bodies_doc):
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
        if "contact" in jdoc:
            from redmax.friction.geometry import contact_from_scene

            try:
                kw["contact"] = contact_from_scene(jdoc["contact"], "contact")
            except ModelError as e:
                raise ctx.err(f"{f}.joint.contact", str(e).removeprefix("contact: ")) from None
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
    if "deformables" in doc:
        from redmax.io.scene_deformables import deformables_from

        deformables_from(doc["deformables"], ctx, b)
    for k, fdoc in enumerate(forces_doc):
        b.add_force(_force_from(fdoc, ctx, f"forces[{k}]"))
    if "constraints" in doc or "couplings" in doc:
        from redmax.io.scene_constraints import constraints_from, couplings_from

        constraints_from(doc.get("constraints", []), ctx, b)
        couplings_from(doc.get("couplings", []), ctx, b)
    try:
        model = b.build(check_regular=check_regular)
    except ModelError as e:
        from redmax.io.scene_deformables import located

        raise SceneError(f"{file}: {located(str(e), doc.get('deformables'))}") from None
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
                                        ("warn", "raise", "ignore")),
                 solver=_choice(ctx, head.get("solver", "auto"), "scene.solver", tuple(SOLVERS)),
                 params=_params(ctx, head.get("params", {})),
                 friction_solver=_choice(ctx, head.get("friction_solver", "bisp"), "scene.friction_solver",
                                         ("bisp", "sp", "none")),
                 compat=_choice(ctx, head["compat"], "scene.compat", ("original",)) if "compat" in head else None,
                 **_gains(ctx, head))


def _params(ctx: _Ctx, table) -> dict:
    """[scene] params: the parameters a parametric scene was built with (a table of booleans, numbers and
    strings; kept for the record)."""
    if not isinstance(table, dict):
        raise ctx.err("scene.params", f"expected a table of parameter = value, got {type(table).__name__}")
    for k, v in table.items():
        if not isinstance(v, (bool, int, float, str)):
            raise ctx.err(f"scene.params.{k}", f"expected a boolean, number or string, got {type(v).__name__}")
    return dict(table)


def _gains(ctx: _Ctx, head: dict) -> dict:
    """[scene] baumgarte (>= 0), baumgarte_acc ([b1, b2] >= 0), constraint_solver."""
    beta = ctx.number(head.get("baumgarte", 5.0), "scene.baumgarte")
    acc = ctx.array(head.get("baumgarte_acc", [5.0, 5.0]), "scene.baumgarte_acc", (2,))
    if not (np.isfinite(beta) and beta >= 0):
        raise ctx.err("scene.baumgarte", f"must be finite and >= 0, got {beta}")
    if not (np.all(np.isfinite(acc)) and np.all(acc >= 0)):
        raise ctx.err("scene.baumgarte_acc", f"must be two finite numbers >= 0, got {acc.tolist()}")
    solver = _choice(ctx, head.get("constraint_solver", "auto"), "scene.constraint_solver",
                     tuple(CONSTRAINED_SOLVERS))
    return {"baumgarte": beta, "baumgarte_acc": (float(acc[0]), float(acc[1])), "constraint_solver": solver}


def load_scene_file(path, *, check_regular: bool = True):
    """Read a scene file (TOML) and build its Scene.  Raises SceneError naming the file and field.
    ``check_regular=False`` skips the check of the joint-space inertia at the initial state (see
    :meth:`redmax.ModelBuilder.build`): the built-in scenes, checked once by the tests, load without compiling
    the inertia kernel."""
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
        return scene_from_dict(doc, p, os.path.dirname(os.path.abspath(p)), check_regular=check_regular)
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
