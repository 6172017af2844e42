"""Robot models from URDF files.

``load_urdf(path)`` reads links (inertial origin/rpy, mass, full inertia tensor, converted to the
principal frame) and joints (revolute, continuous, prismatic, fixed, planar, floating), keeping axes,
origins, limits, damping and friction.  The physics is Pinocchio's reading of the file:

* links joined by fixed joints are merged into one body (their inertias summed); links without
  ``<inertial>`` are massless; a zero-mass link keeps its rotational inertia;
* inertias are used exactly as written, point masses included.  Tensors that no rigid body can have (a
  negative principal moment, the triangle inequality ``I1 + I2 >= I3`` violated, rotational inertia without
  mass) are accepted with a :class:`redmax.RedmaxWarning` naming the link and the defect, or refused with
  ``strict=True``;
* ``<mimic>`` joints are loaded as independent joints (Pinocchio's default) with a RedmaxWarning; the coupling
  ``q_joint = multiplier * q_parent + offset`` is recorded in ``model.meta["mimic"]``;
* a file whose links are all welded to the world loads as a model with zero DOF.

A moving joint whose subtree carries no mass makes the joint-space inertia singular: an error naming the joint
(Pinocchio's ``aba`` returns NaN there).  Every other problem raises :class:`redmax.ModelError` naming the file
and the element.  Units are SI (URDF's).

Frames: a URDF joint's ``<origin>`` places the joint frame in the parent link's frame and the child link
frame coincides with the joint frame at q = 0 -- exactly redmax's joint placement, so joint placements
are the origins composed with the fixed transforms of merged links.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
import xml.etree.ElementTree as ET

import numpy as np

from redmax.builder import ModelBuilder, check_regular_somewhere
from redmax.errors import ModelError, RedmaxWarning
from redmax.joints import Fixed, Free2D, Free3D, Prismatic, Revolute
from redmax.spatial import make_E, rot_x, rot_y, rot_z

__all__ = ["URDF_JOINT_TYPES", "couple_mimic_joints", "link_pose", "load_urdf", "rpy_matrix"]

URDF_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "planar", "floating")


def rpy_matrix(rpy) -> np.ndarray:
    """URDF roll-pitch-yaw: ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (fixed axes x, then y, then z)."""
    r, p, y = (float(v) for v in rpy)
    return rot_z(y) @ rot_y(p) @ rot_x(r)


class _Reader:
    def __init__(self, path: str, strict: bool = False):
        self.path = path
        self.strict = strict

    def err(self, where: str, msg: str) -> ModelError:
        return ModelError(f"{self.path}: {where}: {msg}")

    def defect(self, where: str, msg: str) -> None:
        """A defect Pinocchio accepts: a RedmaxWarning, or a ModelError with ``strict=True``."""
        if self.strict:
            raise self.err(where, f"{msg} (refused: strict=True)")
        warnings.warn(f"{self.path}: {where}: {msg}", RedmaxWarning, stacklevel=3)

    def floats(self, text, n: int, where: str, default=None) -> np.ndarray:
        if text is None:
            if default is None:
                raise self.err(where, "missing value")
            return np.asarray(default, dtype=float)
        parts = text.split()
        try:
            vals = np.array([float(v) for v in parts])
        except ValueError:
            raise self.err(where, f"expected {n} numbers, got {text!r}") from None
        if vals.size != n:
            raise self.err(where, f"expected {n} numbers, got {vals.size} ({text!r})")
        if not np.all(np.isfinite(vals)):
            raise self.err(where, f"non-finite number in {text!r}")
        return vals

    def origin(self, elem, where: str) -> np.ndarray:
        o = None if elem is None else elem.find("origin")
        if o is None:
            return np.eye(4)
        xyz = self.floats(o.get("xyz"), 3, f"{where} <origin xyz>", (0.0, 0.0, 0.0))
        rpy = self.floats(o.get("rpy"), 3, f"{where} <origin rpy>", (0.0, 0.0, 0.0))
        return make_E(rpy_matrix(rpy), xyz)


def _inertial(rd: _Reader, link) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, inertia tensor about the centre of mass in link axes (3,3), centre of mass frame (4,4))."""
    name = link.get("name")
    inert = link.find("inertial")
    if inert is None:
        return 0.0, np.zeros((3, 3)), np.eye(4)
    where = f"link '{name}'"
    E = rd.origin(inert, f"{where} <inertial>")
    m_el = inert.find("mass")
    if m_el is None:
        raise rd.err(where, "<inertial> has no <mass>")
    m = float(rd.floats(m_el.get("value"), 1, f"{where} <mass value>")[0])
    if m < 0:
        raise rd.err(where, f"negative mass {m}")
    i_el = inert.find("inertia")
    if i_el is None:
        raise rd.err(where, "<inertial> has no <inertia>")
    v = {}
    for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
        v[k] = float(rd.floats(i_el.get(k), 1, f"{where} <inertia {k}>")[0])
    I = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]], [v["ixz"], v["iyz"], v["izz"]]])
    # expressed in the inertial frame: rotate to link axes
    R = E[:3, :3]
    return m, R @ I @ R.T, make_E(None, E[:3, 3])


def _inertia_defect(m: float, I: np.ndarray, tol: float) -> str | None:
    """What no rigid body can have in a link's (mass, inertia tensor about its centre of mass), or None.
    ``tol``: the size of a rounding error (defects smaller than this, e.g. the 1e-20 noise of point masses,
    are ignored)."""
    lam = np.linalg.eigvalsh(0.5 * (I + I.T))
    shown = "[" + ", ".join(f"{v:.6g}" for v in lam) + "]"
    if m == 0.0 and np.abs(lam).max() > tol:
        return f"zero mass but rotational inertia (principal moments {shown})"
    if lam[0] < -tol:
        return f"inertia tensor is not positive semi-definite (principal moments {shown})"
    if lam[0] + lam[1] < lam[2] - tol:
        return f"principal moments {shown} violate the triangle inequality I1 + I2 >= I3"
    return None


def _combine(parts):
    """Sum (mass, inertia about own COM in frame F axes (3,3), COM position in F (3,)) -> same triple.
    Without mass the centre is the frame's origin and the rotational inertias (the same about every point)
    still add up."""
    m = sum(p[0] for p in parts)
    c = sum(p[0] * p[2] for p in parts) / m if m > 0 else np.zeros(3)
    I = np.zeros((3, 3))
    for mi, Ii, ci in parts:
        d = ci - c
        I += Ii + mi * (d @ d * np.eye(3) - np.outer(d, d))
    return m, I, c


def _parse(p: str):
    """The XML root of file ``p``; ModelError for unreadable or malformed files.  Whitespace before the XML
    declaration is skipped (as urdfdom does)."""
    try:
        with open(p, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise ModelError(f"{p}: no such URDF file") from None
    except IsADirectoryError:
        raise ModelError(f"{p}: is a directory, not a URDF file") from None
    except OSError as e:
        raise ModelError(f"{p}: cannot read: {e.strerror}") from None
    bom = b"\xef\xbb\xbf"
    data = bom + data[3:].lstrip() if data.startswith(bom) else data.lstrip()
    try:
        return ET.fromstring(data)
    except ET.ParseError as e:
        raise ModelError(f"{p}: not valid XML: {e}") from None
    except (ValueError, RecursionError, MemoryError) as e:
        raise ModelError(f"{p}: cannot parse as XML ({type(e).__name__})") from None


def load_urdf(path, floating_base: bool = False, gravity=(0.0, 0.0, -9.81), merge_fixed: bool = True,
              meshes: bool = False, package_dirs=(), *, strict: bool = False, mimic: bool = False):
    """Build a :class:`redmax.Model` from a URDF file.

    Args:
        path: the URDF file.
        floating_base: attach the root link to the world with a free 3D joint (translation + exponential
            coordinates) named "root_joint"; otherwise the root link is the (fixed) world.
        gravity: world gravity (m/s^2).
        merge_fixed: merge links joined by fixed joints into their parent body (default, as Pinocchio);
            otherwise keep them as bodies on Fixed joints (massless links then raise ModelError).
        meshes: also record each link's visual geometry (``model.meta["visuals"]``), with ``package://``
            URIs resolved against ``package_dirs`` (then the ``ROS_PACKAGE_PATH`` folders and the file's
            ancestors) and relative paths against the file's folder; never needed for the dynamics.
        strict: refuse (ModelError) what is otherwise accepted with a :class:`redmax.RedmaxWarning`: link
            inertias no rigid body can have, and mimic joints loaded as independent joints.
        mimic: honour ``<mimic>`` joints as hyper-reduced coordinates (``ModelBuilder.couple``: the mimicking
            joint leaves the DOFs, ``q = multiplier * q_parent + offset``); default False loads them as independent
            joints with a warning, as Pinocchio's ``buildModelFromUrdf`` does by default.
    Returns:
        The Model; ``model.meta`` holds ``robot`` (name), ``frames`` (link -> (body index or -1 for the
        world, 4x4 link frame in that body's joint frame)), ``limits``, ``friction``, ``joint_types`` and
        ``mimic`` (a list of ``{"joint", "parent", "multiplier", "offset"}``: joint ``joint`` follows joint
        ``parent`` as ``q = multiplier * q_parent + offset``).
    """
    try:
        p = os.fspath(path)
    except TypeError:
        raise ModelError(f"load_urdf: expected a path, got {path!r}") from None
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    rd = _Reader(p, strict)
    root = _parse(p)
    if root.tag != "robot":
        raise rd.err("root element", f"expected <robot>, got <{root.tag}>")
    links = {}
    for link in root.findall("link"):
        name = link.get("name")
        if not name:
            raise rd.err("<link>", "missing name")
        if name in links:
            raise rd.err(f"link '{name}'", "duplicate link name")
        links[name] = link
    if not links:
        raise rd.err("<robot>", "has no <link> elements")
    joints = []
    child_of = {}
    names = set()
    for j in root.findall("joint"):
        jn = j.get("name")
        if not jn:
            raise rd.err("<joint>", "missing name")
        if jn in names:
            raise rd.err(f"joint '{jn}'", "duplicate joint name")
        names.add(jn)
        jt = j.get("type")
        if jt not in URDF_JOINT_TYPES:
            raise rd.err(f"joint '{jn}'", f"unknown joint type {jt!r} (supported: {', '.join(URDF_JOINT_TYPES)})")
        pe, ce = j.find("parent"), j.find("child")
        if pe is None or ce is None or not pe.get("link") or not ce.get("link"):
            raise rd.err(f"joint '{jn}'", "needs <parent link=...> and <child link=...>")
        par, chi = pe.get("link"), ce.get("link")
        for role, ln in (("parent", par), ("child", chi)):
            if ln not in links:
                raise rd.err(f"joint '{jn}'", f"{role} link '{ln}' does not exist")
        if chi in child_of:
            raise rd.err(f"joint '{jn}'", f"link '{chi}' already has parent joint '{child_of[chi]['name']}'")
        rec = {"name": jn, "type": jt, "parent": par, "child": chi, "origin": rd.origin(j, f"joint '{jn}'"),
               "elem": j}
        child_of[chi] = rec
        joints.append(rec)
    roots = [ln for ln in links if ln not in child_of]
    if len(roots) != 1:
        raise rd.err("tree", f"expected exactly one root link, found {len(roots)}: {roots[:5]}"
                     + (" (a cycle of joints?)" if not roots else ""))
    base = roots[0]
    children = {ln: [] for ln in links}
    for rec in joints:
        children[rec["parent"]].append(rec)
    # depth-first pre-order from the root, siblings in file order (the order URDF parsers and Pinocchio use)
    order, stack, seen = [], [(base, None)], set()
    while stack:
        ln, rec_in = stack.pop()
        if ln in seen:
            raise rd.err("tree", f"link '{ln}' is reached twice (cycle)")
        seen.add(ln)
        if rec_in is not None:
            order.append(rec_in)
        for rec in reversed(children[ln]):
            stack.append((rec["child"], rec))
    if len(seen) != len(links):
        missing = sorted(set(links) - seen)
        raise rd.err("tree", f"links not connected to the root '{base}': {missing[:5]}")

    inertials = {ln: _inertial(rd, links[ln]) for ln in links}
    scale = max((float(np.abs(I).max()) for _, I, _ in inertials.values()), default=0.0)
    for ln, (m, I, _) in inertials.items():
        defect = _inertia_defect(m, I, 1e-12 * scale)
        if defect:
            rd.defect(f"link '{ln}'", f"{defect}; used as written, as Pinocchio does")

    # Each URDF link lives in some body ("owner", -1 = world) at a fixed frame F (link frame in the owner's
    # joint frame).  Mass parts accumulate per owner in the owner's joint frame.
    owner = {}
    F = {}
    parts = {}
    b = ModelBuilder(root.get("name") or os.path.basename(p), gravity)
    body_joint = {}  # body name -> joint name
    meta_limits, meta_friction, meta_types = {}, {}, {}
    mimics = []
    pending = []  # (body name, joint, parent body, placement, kwargs)

    def add_mass(own, link_name, Fl):
        m, Ic, Ec = inertials[link_name]
        if m == 0.0 and not np.any(Ic):
            return
        R = Fl[:3, :3]
        parts.setdefault(own, []).append((m, R @ Ic @ R.T, (Fl @ Ec)[:3, 3]))

    if floating_base:
        owner[base], F[base] = base, np.eye(4)
        pending.append((base, Free3D(), None, None, {}, "root_joint"))
        meta_types["root_joint"] = "floating"
    else:
        owner[base], F[base] = -1, np.eye(4)
    add_mass(owner[base], base, F[base])

    for rec in order:
        jn, jt, par, chi = rec["name"], rec["type"], rec["parent"], rec["child"]
        meta_types[jn] = jt
        Ep = F[par] @ rec["origin"]  # joint frame in the parent owner's joint frame
        pown = owner[par]
        if jt == "fixed" and merge_fixed:
            owner[chi], F[chi] = pown, Ep
            add_mass(pown, chi, Ep)
            continue
        j = rec["elem"]
        axis = rd.floats(j.find("axis").get("xyz") if j.find("axis") is not None else None, 3,
                         f"joint '{jn}' <axis xyz>", (1.0, 0.0, 0.0))
        with np.errstate(over="ignore"):  # an axis of 1e300 has an infinite norm: still a direction
            zero = np.linalg.norm(axis) < 1e-12
        if jt in ("revolute", "continuous", "prismatic", "planar") and zero:
            raise rd.err(f"joint '{jn}'", "axis must be non-zero")
        Fchild = np.eye(4)
        if jt in ("revolute", "continuous"):
            joint = Revolute(axis)
        elif jt == "prismatic":
            joint = Prismatic(axis)
        elif jt == "fixed":
            joint = Fixed()
        elif jt == "planar":
            # motion in the plane normal to the axis: a free 2D joint in a frame whose z is the axis
            n = axis / np.linalg.norm(axis)
            t = np.cross(n, [1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.cross(n, [0.0, 1.0, 0.0])
            t /= np.linalg.norm(t)
            Ra = np.column_stack([t, np.cross(n, t), n])
            Ep = Ep @ make_E(Ra)
            Fchild = make_E(Ra.T)
            joint = Free2D()
        else:  # floating
            joint = Free3D()
        kw = {}
        lim = j.find("limit")
        if lim is not None:
            meta_limits[jn] = {k: float(rd.floats(lim.get(k), 1, f"joint '{jn}' <limit {k}>", (np.nan,))[0])
                               for k in ("lower", "upper", "effort", "velocity")}
            if jt != "continuous" and meta_limits[jn]["lower"] > meta_limits[jn]["upper"]:
                rd.defect(f"joint '{jn}' <limit>", f"lower {meta_limits[jn]['lower']:g} > upper "
                          f"{meta_limits[jn]['upper']:g}; kept as written in model.meta['limits'] (limits do not "
                          "enter the dynamics)")
        mim = j.find("mimic")
        if mim is not None:
            mimics.append(_mimic(rd, jn, mim))
        dyn = j.find("dynamics")
        if dyn is not None:
            damping = float(rd.floats(dyn.get("damping"), 1, f"joint '{jn}' <dynamics damping>", (0.0,))[0])
            friction = float(rd.floats(dyn.get("friction"), 1, f"joint '{jn}' <dynamics friction>", (0.0,))[0])
            if damping < 0 or friction < 0:
                raise rd.err(f"joint '{jn}'", "damping and friction must be >= 0")
            kw["joint_damping"] = damping
            meta_friction[jn] = friction
        owner[chi], F[chi] = chi, Fchild
        body_joint[chi] = jn
        pending.append((chi, joint, None if pown == -1 else pown, Ep, kw, jn))
        add_mass(chi, chi, Fchild)

    for body, joint, parent, Ep, kw, jn in pending:
        m, I, c = _combine(parts.get(body, []))
        b.add_body(body, None, joint, parent=parent, joint_name=jn, joint_placement=Ep,
                   body_placement=make_E(None, c), mass=m, inertia=I, **kw)
    moving = {rec[5] for rec in pending}
    kept = []
    for mi in mimics:
        where = f"joint '{mi['joint']}' <mimic>"
        if mi["parent"] not in moving:
            rd.defect(where, f"joint {mi['parent']!r} is not a moving joint of this model; the mimic tag is ignored "
                      "(as Pinocchio does)")
            continue
        if not mimic:
            rd.defect(where, f"follows joint '{mi['parent']}' (multiplier {mi['multiplier']:g}, offset "
                      f"{mi['offset']:g}); loaded as an independent joint, as Pinocchio does by default (the "
                      "coupling is recorded in model.meta['mimic']; load_urdf(..., mimic=True) couples it)")
        kept.append(mi)
    try:
        model = b.build(allow_massless=True, check_inertia=False, allow_empty=True, check_regular=False)
        note = check_regular_somewhere(model)
    except ModelError as e:
        raise ModelError(f"{p}: {e}") from None
    if note:
        rd.defect("model", note)
    model.meta.update(robot=root.get("name"), frames={ln: (-1 if owner[ln] == -1 else model.body_names.index(owner[ln]),
                                                          F[ln]) for ln in links},
                      limits=meta_limits, friction=meta_friction, joint_types=meta_types, mimic=kept, path=p)
    base = os.path.dirname(os.path.abspath(p))
    if meshes:
        model.meta["visuals"] = _visuals(rd, links, package_dirs, base)
    model = dataclasses.replace(model, visuals=_link_visuals(rd, root, links, owner, F, package_dirs, base))
    if mimic and kept:
        try:
            model = dataclasses.replace(couple_mimic_joints(model), visuals=model.visuals)
        except ModelError as e:
            raise ModelError(f"{p}: {e}") from None
    return model


def _mimic(rd: _Reader, jn: str, el) -> dict:
    """The ``<mimic joint= multiplier= offset=>`` of joint ``jn``."""
    target = el.get("joint")
    if not target:
        raise rd.err(f"joint '{jn}' <mimic>", "missing joint=")
    mult = float(rd.floats(el.get("multiplier"), 1, f"joint '{jn}' <mimic multiplier>", (1.0,))[0])
    off = float(rd.floats(el.get("offset"), 1, f"joint '{jn}' <mimic offset>", (0.0,))[0])
    return {"joint": jn, "parent": target, "multiplier": mult, "offset": off}


def _visuals(rd: _Reader, links: dict, package_dirs, base_dir: str) -> dict:
    """Visual geometry per link: list of dicts (type, size/radius/length/filename, scale, origin 4x4)."""
    out = {}
    for name, link in links.items():
        items = []
        for vis in link.findall("visual"):
            g = vis.find("geometry")
            if g is None or len(g) == 0:
                continue
            geo = g[0]
            d = {"type": geo.tag, "origin": rd.origin(vis, f"link '{name}' <visual>")}
            if geo.tag == "mesh":
                d["filename"] = _resolve(geo.get("filename", ""), package_dirs, base_dir)
                d["scale"] = rd.floats(geo.get("scale"), 3, f"link '{name}' <mesh scale>", (1.0, 1.0, 1.0))
            elif geo.tag == "box":
                d["size"] = rd.floats(geo.get("size"), 3, f"link '{name}' <box size>")
            elif geo.tag in ("cylinder", "sphere"):
                d["radius"] = float(rd.floats(geo.get("radius"), 1, f"link '{name}' <{geo.tag} radius>")[0])
                if geo.tag == "cylinder":
                    d["length"] = float(rd.floats(geo.get("length"), 1, f"link '{name}' <cylinder length>")[0])
            items.append(d)
        out[name] = items
    return out


def _materials(rd: _Reader, root) -> dict:
    """The robot's named materials: name -> rgba (4,) (those with a ``<color>``)."""
    out = {}
    for mat in root.findall("material"):
        col = mat.find("color")
        if mat.get("name") and col is not None and col.get("rgba"):
            out[mat.get("name")] = tuple(float(c) for c in rd.floats(col.get("rgba"), 4,
                                                                      f"material '{mat.get('name')}' <color>"))
    return out


def _link_visuals(rd: _Reader, root, links: dict, owner: dict, F: dict, package_dirs, base_dir: str) -> tuple:
    """``model.visuals`` of a URDF: every link's ``<visual>`` elements on the body that carries the link, placed in
    that body's joint frame (``F[link] @ origin``); mesh files that do not exist are reported and left out."""

    try:
        named = _materials(rd, root)
    except ModelError as e:
        warnings.warn(f"{e}; the materials' colours are not used", RedmaxWarning, stacklevel=4)
        named = {}
    out = []
    for name, link in links.items():
        body = "world" if owner[name] == -1 else owner[name]
        for vis in link.findall("visual"):
            try:  # what only draws never refuses a model: a malformed visual is reported and left out
                out.extend(_one_visual(rd, vis, name, body, F[name], named, package_dirs, base_dir))
            except ModelError as e:
                warnings.warn(f"{e}; the visual is left out", RedmaxWarning, stacklevel=4)
    return tuple(out)


def _one_visual(rd: _Reader, vis, name: str, body: str, F_link, named: dict, package_dirs, base_dir: str) -> list:
    """The Visual records of one ``<visual>`` element of link ``name`` (none for a missing mesh file)."""
    from redmax.model.visuals import Visual

    out = []
    g = vis.find("geometry")
    if g is None or len(g) == 0:
        return out
    geo = g[0]
    where = f"link '{name}' <visual>"
    E = F_link @ rd.origin(vis, where)
    rgba = None
    mat = vis.find("material")
    if mat is not None:
        col = mat.find("color")
        if col is not None and col.get("rgba"):
            rgba = tuple(float(c) for c in rd.floats(col.get("rgba"), 4, f"{where} <color>"))
        else:
            rgba = named.get(mat.get("name"))
    if geo.tag == "mesh":
        path = _resolve(geo.get("filename", ""), package_dirs, base_dir)
        if not os.path.isfile(path):
            warnings.warn(f"{rd.path}: {where}: mesh file {geo.get('filename')!r} not found (looked for "
                          f"{path}); the link is drawn without it", RedmaxWarning, stacklevel=5)
            return out
        scale = rd.floats(geo.get("scale"), 3, f"{where} <mesh scale>", (1.0, 1.0, 1.0))
        scale = tuple(float(c) for c in scale)
        out.append(Visual(body, "mesh", (), E, file=path, scale=scale, rgba=rgba))
    elif geo.tag == "box":
        sides = tuple(float(c) for c in rd.floats(geo.get("size"), 3, f"{where} <box size>"))
        out.append(Visual(body, "box", sides, E, rgba=rgba))
    elif geo.tag in ("cylinder", "capsule"):
        r = float(rd.floats(geo.get("radius"), 1, f"{where} <{geo.tag} radius>")[0])
        length = float(rd.floats(geo.get("length"), 1, f"{where} <{geo.tag} length>")[0])
        out.append(Visual(body, geo.tag, (r, length), E, rgba=rgba))
    elif geo.tag == "sphere":
        r = float(rd.floats(geo.get("radius"), 1, f"{where} <sphere radius>")[0])
        out.append(Visual(body, "sphere", (r,), E, rgba=rgba))
    return out


def _resolve(uri: str, package_dirs, base_dir: str) -> str:
    if uri.startswith("package://"):
        rest = uri[len("package://"):]
        ros = [d for d in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if d]
        for d in [*package_dirs, *ros]:
            cand = os.path.join(d, rest)
            if os.path.exists(cand):
                return cand
        pkg, _, tail = rest.partition("/")
        here = base_dir
        while here != os.path.dirname(here):  # look for a parent folder named like the package
            if os.path.basename(here) == pkg:
                return os.path.join(here, tail)
            cand = os.path.join(here, pkg, tail)
            if os.path.exists(cand):
                return cand
            here = os.path.dirname(here)
        return uri
    if uri.startswith("file://"):
        return uri[len("file://"):]
    return uri if os.path.isabs(uri) else os.path.join(base_dir, uri)


def link_pose(model, q, link: str, jstate=None) -> np.ndarray:
    """World pose (4, 4) of URDF link ``link`` at coordinates q, including links merged by fixed joints."""
    from redmax._validate import check_model
    from redmax.kinematics import forward_kinematics

    frames = getattr(check_model(model, "link_pose"), "meta", {}).get("frames", {})
    if not frames:
        raise ModelError(f"{model.name}: link_pose knows the links of models loaded by load_urdf only; for other "
                         "models use forward_kinematics (body frames) or evaluate_kinematics")
    if link not in frames:
        names = sorted(frames)
        more = ", ..." if len(names) > 8 else ""
        raise ModelError(f"{model.name}: no link {link!r} (links: {', '.join(names[:8])}{more})")
    body, F = frames[link]
    if body < 0:
        return F.copy()
    E_wj, _ = forward_kinematics(model, q, jstate)
    return E_wj[body] @ F


def couple_mimic_joints(model, strict: bool = True):
    """The model with its URDF mimic joints as hyper-reduced couplings.

    Reads ``model.meta["mimic"]``: a list of ``{"joint": dependent, "mimic": independent, "multiplier": m,
    "offset": o}`` (``q_joint = m q_mimic + o``, URDF ``<mimic>``); the model must come from a builder record
    (``model.source``, as ``load_urdf`` makes).  Returns the model unchanged when it has no mimic joints.
    """
    mimic = model.meta.get("mimic") or []
    if not mimic:
        return model
    src = model.source
    if not src or "bodies" not in src:
        raise ModelError(f"{model.name}: mimic joints need the builder record (model.source)")
    b = ModelBuilder(src["name"], src["gravity"])
    b._bodies = [dataclasses.replace(r) for r in src["bodies"]]
    b._forces = list(src.get("forces", []))
    b._constraints = list(src.get("constraints", []))
    b._couplings = list(src.get("couplings", []))
    for rec in mimic:
        try:
            dep, on = rec["joint"], rec["parent"] if "parent" in rec else rec["mimic"]  # load_urdf writes 'parent'
        except (KeyError, TypeError):
            raise ModelError(f"{model.name}: meta['mimic'] entries need 'joint' and 'parent' (the mimicked joint), "
                             f"got {rec!r}") from None
        if strict or (dep in model.joint_names and on in model.joint_names):
            b.couple(dep, on, rec.get("multiplier", 1.0), rec.get("offset", 0.0))
    # the robot-file reader already warned about (or refused) non-physical inertias and checked regularity
    out = b.build(allow_massless=bool(model.meta.get("allow_massless", True)), check_inertia=False,
                  check_regular=False)
    meta = {**model.meta, "mimic_coupled": [dict(r) for r in mimic]}
    return dataclasses.replace(out, meta=meta, uncoupled=dataclasses.replace(out.uncoupled, meta=meta))
