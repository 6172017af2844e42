"""Models from MJCF (MuJoCo XML) files, compiled by MuJoCo itself.

``load_mjcf(path)`` lets the ``mujoco`` package (an optional extra: ``pip install "redmax[mjcf]"``) parse and
compile the file -- defaults, ``<include>``, ``<frame>``, ``fromto``, inertias from geoms, ``inertiafromgeom``,
``settotalmass`` are all MuJoCo's own -- and maps the compiled ``mjModel`` (:func:`from_mjmodel`):

* bodies: MuJoCo's body frames (``body_pos``/``body_quat`` at ``qpos0``) and inertial frames (``body_ipos``,
  ``body_iquat``, principal ``body_inertia``); bodies without joints are welded to their parent (merged into
  the nearest moving ancestor, as URDF fixed links are);
* joints: ``hinge`` -> :class:`redmax.Revolute`, ``slide`` -> :class:`redmax.Prismatic` about/along the joint
  axis through the joint's anchor, ``ball`` -> :class:`redmax.SphericalExp` (rotation vector), ``free`` ->
  :class:`redmax.Free3D` (world position, rotation vector).  Several joints on one body become a chain of
  massless bodies named ``"<body>:<joint>"`` ending in the body.  MuJoCo rotates a hinge by ``qpos - qpos0``
  (the joint's ``ref``): here ``q`` is MuJoCo's ``qpos`` and the placement absorbs ``ref``, so ``model.q0`` is
  MuJoCo's ``qpos0`` and each hinge/slide DOF is named by its MuJoCo joint (``model.dof_names``);
* ``armature`` is added to the joint-space inertia as MuJoCo does (``rm.crba`` includes it); joint
  ``stiffness`` (about ``springref``) and ``damping`` become the model's joint springs and dampers;
* options: gravity, ``<flag gravity="disable"/>`` (zero gravity), ``spring``/``damper`` flags.

Velocities: hinge/slide rates are MuJoCo's ``qvel``; a free joint's rates are (world linear velocity -- MuJoCo's
too --, rotation-vector rate ``rdot``), its angular velocity ``w = J_r(r) rdot`` (MuJoCo's ``qvel[3:6]``).

Equality constraints of type ``joint`` (``q1 - q1_0 = a0 + a1 (q2 - q2_0)``, polycoef linear) and ``tendon`` on
fixed tendons (``L1 - L1_0 = a0 + a1 (L2 - L2_0)``, ``L = sum c_i q_i``) become one ``rm.constraints.Linear`` row
each, named by the equality (MuJoCo's soft ``solref``/``solimp`` become redmax's hard rows with Baumgarte
stabilisation); equalities inactive at the start are skipped and listed in ``model.meta["equalities_inactive"]``.

What cannot map raises :class:`redmax.ModelError` naming it: ``connect``, ``weld`` and ``flex`` equalities,
polycoef with quadratic or higher terms, tendons with stiffness, damping or armature (tendons that only route
actuators or limits are listed in ``model.meta["tendons"]``),
flexes, gravity compensation, nonlinear spring/damper polynomials, and stiffness, damping or armature on ball and
free joints (their MuJoCo form is not diagonal in rotation-vector rates).  Contacts, joint limits and dry friction
are constraints in MuJoCo and are not part of these dynamics: they are reported in ``model.meta`` (``limits``,
``frictionloss``, ``actuators``), as are fluid forces (a :class:`redmax.RedmaxWarning`).
"""

from __future__ import annotations

import dataclasses
import os
import warnings

import numpy as np

from redmax.builder import ModelBuilder, check_regular_somewhere
from redmax.errors import ModelError, RedmaxWarning
from redmax.joints import Free3D, Prismatic, Revolute, SphericalExp
from redmax.model.inputs import frozen
from redmax.model.layout import pack
from redmax.spatial import log_so3, make_E, rot_axis_angle

__all__ = ["from_mjmodel", "load_mjcf", "quat_matrix"]

_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3
_JOINT_KIND = {_FREE: "free", _BALL: "ball", _SLIDE: "slide", _HINGE: "hinge"}


def _mujoco():
    try:
        import mujoco
    except ImportError:
        raise ModelError("MJCF import needs the optional 'mujoco' package: pip install \"redmax[mjcf]\"") from None
    return mujoco


def quat_matrix(qt) -> np.ndarray:
    """Rotation matrix (3, 3) of a MuJoCo quaternion ``(w, x, y, z)`` (normalised first)."""
    w, x, y, z = np.asarray(qt, dtype=float) / np.linalg.norm(qt)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def load_mjcf(path, *, name: str | None = None):
    """Build a :class:`redmax.Model` from an MJCF file, compiled by MuJoCo (see the module docstring).

    Args:
        path: the ``.xml`` file.
        name: model name (default: the MJCF ``model`` attribute, else the file name).
    Returns:
        The Model; ``model.meta`` holds ``source`` ("mjcf"), ``path``, ``timestep`` (MuJoCo's), ``frames``
        (MuJoCo body -> (our body index or -1 for the world, 4x4 body frame in that body's joint frame)),
        ``actuators`` (name, transmission type and target, gear), ``tendons`` (not mapped), ``limits``,
        ``frictionloss`` and ``unmapped`` (what MuJoCo would add that these dynamics leave out).
    """
    try:
        p = os.fspath(path)
    except TypeError:
        raise ModelError(f"load_mjcf: expected a path, got {path!r}") from None
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    if not os.path.exists(p):
        raise ModelError(f"{p}: no such MJCF file")
    if os.path.isdir(p):
        raise ModelError(f"{p}: is a directory, not an MJCF file")
    mujoco = _mujoco()
    try:
        m = mujoco.MjModel.from_xml_path(p)
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ModelError(f"{p}: MuJoCo cannot compile it: {first}") from None
    try:
        return from_mjmodel(m, name=name, path=p)
    except ModelError as e:
        raise ModelError(f"{p}: {e}") from None


def _names(m, mujoco, obj, count: int, prefix: str) -> list[str]:
    out, seen = [], set()
    for i in range(count):
        n = mujoco.mj_id2name(m, obj, i) or f"{prefix}{i}"
        while n in seen:
            n = f"{n}_"
        seen.add(n)
        out.append(n)
    return out


def from_mjmodel(m, *, name: str | None = None, path: str | None = None):
    """Build a :class:`redmax.Model` from a compiled ``mujoco.MjModel`` (see the module docstring)."""
    from redmax.io.urdf import _combine

    mujoco = _mujoco()
    ob = mujoco.mjtObj
    bnames = _names(m, mujoco, ob.mjOBJ_BODY, m.nbody, "body")
    jnames = _names(m, mujoco, ob.mjOBJ_JOINT, m.njnt, "joint")
    model_name = name or mujoco.mj_id2name(m, ob.mjOBJ_MODEL, 0) or (os.path.basename(path) if path else "mjcf")
    _refuse_unmappable(m, mujoco, jnames)
    equalities, inactive = _equalities(m, mujoco, jnames)
    flags = int(m.opt.disableflags)
    dsbl = mujoco.mjtDisableBit
    gravity = np.zeros(3) if flags & int(dsbl.mjDSBL_GRAVITY) else np.array(m.opt.gravity, dtype=float)
    springs = not flags & int(dsbl.mjDSBL_SPRING)
    dampers = not flags & int(dsbl.mjDSBL_DAMPER)

    b = ModelBuilder(model_name, gravity)
    owner = {0: -1}  # MuJoCo body -> our body name (or -1: the world)
    F = {0: np.eye(4)}  # MuJoCo body frame in its owner's joint frame
    parts: dict = {}
    pending = []  # (body, joint, parent, placement, kwargs, joint name)
    armature = []
    for bi in range(1, m.nbody):
        p = int(m.body_parentid[bi])
        Bp = F[p] @ make_E(quat_matrix(m.body_quat[bi]), m.body_pos[bi])
        jadr, jnum = int(m.body_jntadr[bi]), int(m.body_jntnum[bi])
        if jnum == 0:
            owner[bi], F[bi] = owner[p], Bp
        else:
            prev, parent = Bp, owner[p]
            for k in range(jnum):
                j = jadr + k
                jt = int(m.jnt_type[j])
                qa, da = int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])
                a = np.array(m.jnt_pos[j], dtype=float)
                body = bnames[bi] if k == jnum - 1 else f"{bnames[bi]}:{jnames[j]}"
                kw = {}
                if jt == _FREE:
                    if owner[p] != -1:
                        raise ModelError(f"joint '{jnames[j]}': a free joint on body '{bnames[bi]}', which moves "
                                         "with its parent; only bodies welded to the world can be free here")
                    joint, Ej, a = Free3D(), np.eye(4), np.zeros(3)
                    kw["q"] = np.concatenate([m.qpos0[qa : qa + 3], log_so3(quat_matrix(m.qpos0[qa + 3 : qa + 7]))])
                    armature += [0.0] * 6
                elif jt == _BALL:
                    joint, Ej = SphericalExp(), prev @ make_E(None, a)
                    kw["q"] = log_so3(quat_matrix(m.qpos0[qa : qa + 4]))
                    armature += [0.0] * 3
                else:
                    axis = np.array(m.jnt_axis[j], dtype=float)
                    ref = float(m.qpos0[qa])
                    if jt == _HINGE:
                        joint, off = Revolute(axis), make_E(rot_axis_angle(axis, -ref))
                    else:
                        joint, off = Prismatic(axis), make_E(None, -ref * axis / np.linalg.norm(axis))
                    Ej = prev @ make_E(None, a) @ off
                    kw["q"] = [ref]
                    if springs and m.jnt_stiffness[j] != 0.0:
                        kw["stiffness"] = float(m.jnt_stiffness[j])
                        kw["rest"] = [float(m.qpos_spring[qa])]
                    if dampers and m.dof_damping[da] != 0.0:
                        kw["joint_damping"] = float(m.dof_damping[da])
                    armature.append(float(m.dof_armature[da]))
                pending.append((body, joint, None if parent == -1 else parent, Ej, kw, jnames[j]))
                prev, parent = make_E(None, -a), body
            owner[bi], F[bi] = parent, prev
        Fi = F[bi] @ make_E(quat_matrix(m.body_iquat[bi]), m.body_ipos[bi])
        R = Fi[:3, :3]
        parts.setdefault(owner[bi], []).append((float(m.body_mass[bi]), R @ np.diag(m.body_inertia[bi]) @ R.T,
                                                Fi[:3, 3].copy()))
    for body, joint, parent, Ej, kw, jn in pending:
        mass, I, c = _combine(parts.get(body, []))
        b.add_body(body, None, joint, parent=parent, joint_name=jn, joint_placement=Ej,
                   body_placement=make_E(None, c), mass=mass, inertia=I, **kw)
    for c in equalities:
        b.add_constraint(c)
    model = b.build(allow_massless=True, check_inertia=False, allow_empty=True, check_regular=False)
    arm = np.array(armature, dtype=float)
    if np.any(arm != 0.0):
        model = with_armature(model, arm)
    note = check_regular_somewhere(model)
    if note:
        warnings.warn(f"{path or model_name}: {note}", RedmaxWarning, stacklevel=3)
    body_index = {n: i for i, n in enumerate(model.body_names)}
    if inactive:
        model.meta["equalities_inactive"] = inactive
    model = dataclasses.replace(model, visuals=_geom_visuals(m, mujoco, owner, F))
    model.meta.update(source="mjcf", path=path, timestep=float(m.opt.timestep),
                      frames={bnames[bi]: (-1 if owner[bi] == -1 else body_index[owner[bi]], F[bi])
                              for bi in range(m.nbody)},
                      **_reported(m, mujoco, jnames))
    return model


_GEOM_KINDS = {2: "sphere", 3: "capsule", 5: "cylinder", 6: "box", 7: "mesh"}  # mjtGeom codes we draw


def _geom_visuals(m, mujoco, owner: dict, F: dict) -> tuple:
    """``model.visuals`` of an MJCF model: its sphere, capsule, cylinder, box and mesh geoms (compiled mesh vertices
    and faces), on the body that carries the geom's MuJoCo body, placed in that body's joint frame."""
    from redmax.model.visuals import Visual

    out = []
    for g in range(m.ngeom):
        kind = _GEOM_KINDS.get(int(m.geom_type[g]))
        if kind is None:  # planes, height fields, ellipsoids: not drawn
            continue
        bi = int(m.geom_bodyid[g])
        body = "world" if owner[bi] == -1 else owner[bi]
        E = F[bi] @ make_E(quat_matrix(m.geom_quat[g]), m.geom_pos[g])
        size = np.asarray(m.geom_size[g], dtype=float)
        rgba = tuple(float(c) for c in m.geom_rgba[g])
        if kind == "mesh":
            k = int(m.geom_dataid[g])
            va, vn = int(m.mesh_vertadr[k]), int(m.mesh_vertnum[k])
            fa, fn = int(m.mesh_faceadr[k]), int(m.mesh_facenum[k])
            out.append(Visual(body, "mesh", (), E, rgba=rgba, vertices=np.array(m.mesh_vert[va:va + vn], dtype=float),
                              faces=np.array(m.mesh_face[fa:fa + fn], dtype=np.int64)))
        elif kind == "box":
            out.append(Visual(body, "box", tuple(2.0 * size), E, rgba=rgba))
        elif kind == "sphere":
            out.append(Visual(body, "sphere", (float(size[0]),), E, rgba=rgba))
        else:  # capsule and cylinder: radius and half-length
            out.append(Visual(body, kind, (float(size[0]), 2.0 * float(size[1])), E, rgba=rgba))
    return tuple(out)


def with_armature(model, armature):
    """The model with per-DOF ``armature`` (ndof,) >= 0 added to its joint-space inertia (rotor inertia, as MuJoCo's
    ``armature``): ``M(q) + diag(armature)`` in every algorithm."""
    a = np.asarray(armature, dtype=float).reshape(-1)
    if a.shape != (model.ndof,) or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ModelError(f"{model.name}: armature must be {model.ndof} finite values >= 0")
    tree = dataclasses.replace(model.tree, packed=pack(model.tree, model.gravity, model.jstate0, a))
    return dataclasses.replace(model, tree=tree, armature=frozen(a))


def _fixed_tendon(m, mujoco, t: int, jnames) -> dict:
    """``{joint name: coefficient}`` of the fixed tendon t (``L = sum c_i q_i``); ModelError for spatial tendons
    or wraps over ball/free joints."""
    n = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_TENDON, t) or f"tendon{t}"
    out: dict = {}
    for w in range(int(m.tendon_adr[t]), int(m.tendon_adr[t]) + int(m.tendon_num[t])):
        if int(m.wrap_type[w]) != int(mujoco.mjtWrap.mjWRAP_JOINT):
            raise ModelError(f"tendon '{n}': a spatial tendon in an equality constraint cannot be mapped (only fixed "
                             "tendons, linear in the joint coordinates)")
        j = int(m.wrap_objid[w])
        if int(m.jnt_type[j]) not in (_HINGE, _SLIDE):
            raise ModelError(f"tendon '{n}': joint '{jnames[j]}' is a {_JOINT_KIND[int(m.jnt_type[j])]} joint; "
                             "fixed tendons in equality constraints may only use hinge and slide joints")
        out[jnames[j]] = out.get(jnames[j], 0.0) + float(m.wrap_prm[w])
    return out


def _equalities(m, mujoco, jnames) -> tuple[list, list]:
    """The MJCF ``joint`` and ``tendon`` equalities as ``Linear`` constraints (module docstring), and the names
    of those inactive at the start."""
    from redmax.constraints import Linear

    ob = mujoco.mjtObj
    out, inactive = [], []
    for k in range(m.neq):
        n = mujoco.mj_id2name(m, ob.mjOBJ_EQUALITY, k) or f"equality{k}"
        kind = mujoco.mjtEq(int(m.eq_type[k])).name.removeprefix("mjEQ_").lower()
        if kind not in ("joint", "tendon"):
            raise ModelError(f"equality constraint '{n}' ({kind}): {kind} equalities cannot be mapped (joint and "
                             "fixed-tendon equalities can)")
        a = np.asarray(m.eq_data[k][:5], dtype=float)
        if np.any(a[2:] != 0.0):
            raise ModelError(f"equality constraint '{n}' ({kind}): polycoef {a.tolist()} is not linear; only "
                             "a0 + a1 x maps to a constraint row")
        if not bool(m.eq_active0[k]):
            inactive.append(n)
            continue
        o1, o2 = int(m.eq_obj1id[k]), int(m.eq_obj2id[k])
        if kind == "joint":
            for j in (o1, o2):
                if j >= 0 and int(m.jnt_type[j]) not in (_HINGE, _SLIDE):
                    raise ModelError(f"equality constraint '{n}' (joint): joint '{jnames[j]}' is a "
                                     f"{_JOINT_KIND[int(m.jnt_type[j])]} joint; only hinge and slide joints map")
            c1 = {jnames[o1]: 1.0}
            y0 = float(m.qpos0[m.jnt_qposadr[o1]])
            c2 = {jnames[o2]: 1.0} if o2 >= 0 else {}
            x0 = float(m.qpos0[m.jnt_qposadr[o2]]) if o2 >= 0 else 0.0
        else:
            c1 = _fixed_tendon(m, mujoco, o1, jnames)
            y0 = float(m.tendon_length0[o1])
            c2 = _fixed_tendon(m, mujoco, o2, jnames) if o2 >= 0 else {}
            x0 = float(m.tendon_length0[o2]) if o2 >= 0 else 0.0
        coef = dict(c1)
        for j, c in c2.items():  # y - y0 = a0 + a1 (x - x0):  y - a1 x = y0 + a0 - a1 x0
            coef[j] = coef.get(j, 0.0) - a[1] * c
        coef = {j: c for j, c in coef.items() if c != 0.0}
        if not coef:
            raise ModelError(f"equality constraint '{n}' ({kind}): its row has no non-zero coefficient")
        out.append(Linear(list(coef), list(coef.values()), y0 + a[0] - a[1] * x0, name=n))
    return out, inactive


def _refuse_unmappable(m, mujoco, jnames) -> None:
    ob = mujoco.mjtObj
    for t in range(m.ntendon):
        arm = float(m.tendon_armature[t]) if hasattr(m, "tendon_armature") else 0.0
        if m.tendon_stiffness[t] != 0.0 or m.tendon_damping[t] != 0.0 or arm != 0.0:
            n = mujoco.mj_id2name(m, ob.mjOBJ_TENDON, t) or f"tendon{t}"
            raise ModelError(f"tendon '{n}': stiffness {m.tendon_stiffness[t]:g}, damping {m.tendon_damping[t]:g}, "
                             f"armature {arm:g}: tendons that act on the dynamics cannot be mapped")
    if getattr(m, "nflex", 0):
        raise ModelError(f"{m.nflex} flex element(s): deformable flexes cannot be mapped")
    if np.any(m.body_gravcomp != 0.0):
        bi = int(np.flatnonzero(m.body_gravcomp)[0])
        raise ModelError(f"body '{mujoco.mj_id2name(m, ob.mjOBJ_BODY, bi)}': gravcomp cannot be mapped")
    for attr, what in (("jnt_stiffnesspoly", "nonlinear joint stiffness (stiffnesspoly)"),
                       ("dof_dampingpoly", "nonlinear joint damping (dampingpoly)"),
                       ("jnt_springyield", "joint spring yield (plasticity)")):
        v = getattr(m, attr, None)
        if v is not None and np.any(np.asarray(v) != 0.0):
            row = int(np.flatnonzero(np.any(np.asarray(v).reshape(len(v), -1) != 0.0, axis=1))[0])
            j = row if attr.startswith("jnt") else int(m.dof_jntid[row])
            raise ModelError(f"joint '{jnames[j]}': {what} cannot be mapped")
    for j in range(m.njnt):
        jt = int(m.jnt_type[j])
        if jt in (_FREE, _BALL):
            da, nv = int(m.jnt_dofadr[j]), 6 if jt == _FREE else 3
            for field, v in (("stiffness", [m.jnt_stiffness[j]]), ("damping", m.dof_damping[da : da + nv]),
                             ("armature", m.dof_armature[da : da + nv])):
                if np.any(np.asarray(v) != 0.0):
                    raise ModelError(f"joint '{jnames[j]}' ({_JOINT_KIND[jt]}): {field} on a {_JOINT_KIND[jt]} joint "
                                     "cannot be mapped (it is not diagonal in rotation-vector rates)")


def _reported(m, mujoco, jnames) -> dict:
    """What MuJoCo adds outside these dynamics, for ``model.meta``."""
    ob = mujoco.mjtObj
    trn = {0: "joint", 1: "jointinparent", 2: "slidercrank", 3: "tendon", 4: "site", 5: "body"}
    targets = {0: ob.mjOBJ_JOINT, 1: ob.mjOBJ_JOINT, 2: ob.mjOBJ_SITE, 3: ob.mjOBJ_TENDON, 4: ob.mjOBJ_SITE,
               5: ob.mjOBJ_BODY}
    actuators = []
    for u in range(m.nu):
        t = int(m.actuator_trntype[u])
        tid = int(m.actuator_trnid[u, 0])
        target = mujoco.mj_id2name(m, targets.get(t, ob.mjOBJ_JOINT), tid) if tid >= 0 else None
        actuators.append({"name": mujoco.mj_id2name(m, ob.mjOBJ_ACTUATOR, u) or f"actuator{u}",
                          "transmission": trn.get(t, str(t)), "target": target,
                          "gear": float(m.actuator_gear[u, 0])})
    tendons = [mujoco.mj_id2name(m, ob.mjOBJ_TENDON, t) or f"tendon{t}" for t in range(m.ntendon)]
    limits = {jnames[j]: tuple(float(v) for v in m.jnt_range[j]) for j in range(m.njnt) if m.jnt_limited[j]}
    friction = {jnames[int(m.dof_jntid[d])]: float(m.dof_frictionloss[d]) for d in range(m.nv)
                if m.dof_frictionloss[d] != 0.0}
    unmapped = ["contacts", "joint limits", "dry friction (frictionloss)", "actuators (apply them as joint torques)"]
    if m.opt.density != 0.0 or m.opt.viscosity != 0.0:
        warnings.warn(f"{mujoco.mj_id2name(m, ob.mjOBJ_MODEL, 0) or 'mjcf'}: fluid forces (density "
                      f"{m.opt.density:g}, viscosity {m.opt.viscosity:g}) are not mapped", RedmaxWarning, stacklevel=4)
        unmapped.append("fluid forces")
    if m.ntendon:
        unmapped.append("tendons (actuation and limits only)")
    return {"actuators": actuators, "tendons": tendons, "limits": limits, "frictionloss": friction,
            "unmapped": unmapped}
