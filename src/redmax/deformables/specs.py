"""Descriptions of deformable bodies: :class:`Strand` (mass-spring strands) and :class:`FEM` (tetrahedral meshes).

A deformable body adds nodes (point masses) to the model.  Each free node is a body on a ``Translational`` root
joint whose coordinates are the node's world position: three reduced coordinates that are also maximal
coordinates, with an identity block in ``J`` (RedMax paper §4, Eq. 6; Sueda's notes §2.7).  A node attached to a
body (or to the world) is either a free node held by 3 attachment rows (``coupling="rows"``, the KKT system of
the paper's Eq. 6) or eliminated (``coupling="eliminate"``, notes Eq. 2.96): it then has no coordinates and is
carried rigidly by its body (a ``Fixed`` joint), so that its mass and the elastic forces on it act on that body.

Nodes are numbered from 1 (``model.dof_names`` reads ``<name>.<node>.x``).  Units are the model's.
"""

from __future__ import annotations

import numpy as np

from redmax._validate import check_finite, check_nonneg, check_transform, check_vector
from redmax.errors import ModelError

__all__ = ["FEM", "Attachment", "Strand"]

COUPLINGS = ("rows", "eliminate")
MATERIALS = ("corotated", "neo_hookean")
ELEMENTS = ("tet4", "tet10")


def _end(owner: str, p, field: str) -> tuple:
    """``{body, point}`` / ``(body, point)`` -> (body name or None for the world, point (3,))."""
    if isinstance(p, dict):
        extra = set(p) - {"body", "point"}
        if extra:
            raise ModelError(f"{owner}: {field}.{sorted(extra)[0]}: unknown key (expected body, point)")
        if "body" not in p:
            raise ModelError(f"{owner}: {field}.body: missing required key")
        body, pt = p["body"], p.get("point", (0.0, 0.0, 0.0))
    else:
        try:
            body, pt = p
        except (TypeError, ValueError):
            raise ModelError(f"{owner}: {field}: expected {{body, point}} or (body, point), got {p!r}") from None
    if body is not None and not isinstance(body, str):
        raise ModelError(f"{owner}: {field}.body: expected a body name or 'world', got {body!r}")
    return (None if body in (None, "world") else body), check_vector(pt, 3, f"{owner}: {field}.point")


class Attachment:
    """Nodes of a deformable body held by a body (or the world).

    Args:
        body: body name, or "world" / None.
        nodes: node numbers (from 1), or
        within: the nodes inside a region of the body's frame at the initial state (the world frame for the
            world): a radius r (a ball about the frame's origin) or a box ``[[x0, y0, z0], [x1, y1, z1]]``.
    """

    def __init__(self, body, nodes=None, within=None, *, owner: str = "deformable", field: str = "attach"):
        if body is not None and not isinstance(body, str):
            raise ModelError(f"{owner}: {field}.body: expected a body name or 'world', got {body!r}")
        self.body = None if body in (None, "world") else body
        if (nodes is None) == (within is None):
            raise ModelError(f"{owner}: {field}: give either nodes (numbers from 1) or within (a radius or a box)")
        self.nodes = None
        self.within = None
        if nodes is not None:
            a = np.asarray(nodes)
            integral = a.dtype.kind in "iu" or (a.dtype.kind == "f" and bool(np.all(a == np.round(a))))
            if a.ndim != 1 or a.size == 0 or not integral:
                raise ModelError(f"{owner}: {field}.nodes: expected a non-empty list of node numbers, got {nodes!r}")
            self.nodes = a.astype(np.int64)
        else:
            w = np.asarray(within, dtype=float) if not isinstance(within, str) else None
            if w is None or not (w.shape == () or w.shape == (2, 3)) or not np.all(np.isfinite(w)):
                raise ModelError(f"{owner}: {field}.within: expected a radius or a box [[x0, y0, z0], [x1, y1, z1]], "
                                 f"got {within!r}")
            if w.shape == () and not w > 0:
                raise ModelError(f"{owner}: {field}.within: the radius must be positive, got {float(w)}")
            if w.shape == (2, 3) and not np.all(w[1] >= w[0]):
                raise ModelError(f"{owner}: {field}.within: the box's second corner must not be below its first")
            self.within = w

    @classmethod
    def parse(cls, a, owner: str, field: str) -> Attachment:
        if isinstance(a, Attachment):
            return a
        if not isinstance(a, dict):
            raise ModelError(f"{owner}: {field}: expected a table {{ body, nodes | within }}, got {a!r}")
        extra = set(a) - {"body", "nodes", "within"}
        if extra:
            raise ModelError(f"{owner}: {field}.{sorted(extra)[0]}: unknown key (expected body, nodes, within)")
        if "body" not in a:
            raise ModelError(f"{owner}: {field}.body: missing required key")
        return cls(a["body"], a.get("nodes"), a.get("within"), owner=owner, field=field)

    def to_scene(self) -> dict:
        d = {"body": "world" if self.body is None else self.body}
        if self.nodes is not None:
            d["nodes"] = self.nodes.tolist()
        else:
            d["within"] = float(self.within) if self.within.shape == () else self.within.tolist()
        return d

    def select(self, X_local: np.ndarray, owner: str, field: str) -> np.ndarray:
        """Indices (from 0) of the attached nodes; ``X_local`` (n, 3) are the rest nodes in the body's frame."""
        n = X_local.shape[0]
        if self.nodes is not None:
            bad = self.nodes[(self.nodes < 1) | (self.nodes > n)]
            if bad.size:
                raise ModelError(f"{owner}: {field}.nodes: node {int(bad[0])} does not exist (nodes 1..{n})")
            return np.unique(self.nodes - 1)
        if self.within.shape == ():
            sel = np.flatnonzero(np.linalg.norm(X_local, axis=1) <= self.within)
        else:
            lo, hi = self.within
            sel = np.flatnonzero(np.all((X_local >= lo) & (X_local <= hi), axis=1))
        if sel.size == 0:
            raise ModelError(f"{owner}: {field}.within: no node lies in the region (body "
                             f"'{self.body or 'world'}')")
        return sel


class _Deformable:
    kind = ""

    def _common(self, name, attach, coupling):
        if not isinstance(name, str) or not name or "." in name:
            raise ModelError(f"deformable name must be a non-empty string without '.', got {name!r}")
        self.name = name
        self.owner = f"deformable '{name}'"
        if coupling not in COUPLINGS:
            raise ModelError(f"{self.owner}: coupling must be one of {COUPLINGS}, got {coupling!r}")
        self.coupling = coupling
        if attach is None:
            attach = []
        if not isinstance(attach, list | tuple):
            raise ModelError(f"{self.owner}: attach: expected a list of {{ body, nodes | within }} tables")
        self.attach = [Attachment.parse(a, self.owner, f"attach[{k}]") for k, a in enumerate(attach)]


class Strand(_Deformable):
    """A mass-spring strand: ``nodes`` point masses evenly spaced from end A to end B, joined by springs.

    Each segment (rest length L = its initial length) has strain ``e = (l - L) / L``, tension ``K e / L`` and
    energy ``K e^2 / 2`` (reference/12).  The first and last nodes are attached to the ends' bodies (or the world).

    Args:
        name: unique name (no '.').
        ends: ``[A, B]``, each ``{body, point}`` or ``(body, point)`` (body frame; "world" for a world point).
        nodes: number of nodes (>= 2).
        stiffness: K >= 0 of every segment.
        mass: total mass > 0, split equally over the nodes.
        damping: viscous node damping c >= 0 (force ``-c v`` on every free node; implicit).
        implicit: False (the original's explicit springs: no stiffness in the step's matrix) or True (the exact
            stiffness, symmetrised as RedMax does).
        attach: further attachments (:class:`Attachment` or tables).
        coupling: "rows" (3 equality rows per attached node) or "eliminate" (attached nodes carried by their body).
    """

    kind = "strand"

    def __init__(self, name: str, ends, nodes: int, stiffness: float, mass: float, *, damping: float = 0.0,
                 implicit: bool = False, attach=None, coupling: str = "rows"):
        self._common(name, attach, coupling)
        o = self.owner
        if not isinstance(ends, list | tuple) or len(ends) != 2:
            raise ModelError(f"{o}: ends: expected two ends [A, B], got {ends!r}")
        self.ends = [_end(o, p, f"ends[{k}]") for k, p in enumerate(ends)]
        if isinstance(nodes, bool) or not isinstance(nodes, int | np.integer) or nodes < 2:
            raise ModelError(f"{o}: nodes must be an integer >= 2, got {nodes!r}")
        self.nodes = int(nodes)
        self.stiffness = check_nonneg(stiffness, f"{o}: stiffness")
        self.mass = check_finite(mass, f"{o}: mass")
        if not self.mass > 0:
            raise ModelError(f"{o}: mass must be positive, got {self.mass}")
        self.damping = check_nonneg(damping, f"{o}: damping")
        if not isinstance(implicit, bool | np.bool_):
            raise ModelError(f"{o}: implicit must be true or false, got {implicit!r}")
        self.implicit = bool(implicit)

    def to_scene(self) -> dict:
        d = {"type": "strand", "name": self.name, "nodes": self.nodes, "stiffness": self.stiffness, "mass": self.mass,
             "ends": [{"body": "world" if b is None else b, "point": np.asarray(p, float).tolist()}
                      for b, p in self.ends]}
        if self.damping:
            d["damping"] = self.damping
        if self.implicit:
            d["implicit"] = True
        if self.attach:
            d["attach"] = [a.to_scene() for a in self.attach]
        if self.coupling != "rows":
            d["coupling"] = self.coupling
        return d


class FEM(_Deformable):
    """A tetrahedral finite-element body (co-rotated linear elasticity or stable neo-Hookean).

    Args:
        name: unique name (no '.').
        mesh: ``(nodes (n, 3), tets (m, 4) or (m, 10))`` (numbers from 0, our tet10 node order, see
            :mod:`redmax.deformables.elements`), or a table: ``{"box": [a, b, c], "divisions": [i, j, k]}``,
            ``{"cylinder": [r, h], "divisions": [nr, ntheta, nz]}`` or ``{"file": "x.msh"}`` (meshio).
        material: "corotated" or "neo_hookean".  young: Young's modulus > 0.  poisson: Poisson's ratio in (-1, 0.5).
        density: mass per volume > 0 (lumped on the nodes).
        rayleigh: ``(alpha, beta)``: damping ``D = alpha M + beta (-K)``; alpha acts on free nodes.
        element: "tet4" or "tet10" for generated meshes (given and file meshes: from their connectivity).
        placement: (4, 4) transform applied to the mesh's nodes (default I).
        attach: attachments (:class:`Attachment` or tables ``{body, nodes | within}``).
        coupling: "rows" or "eliminate" (see the module docstring).
        ground: None, or a penalty ground contact of the mesh's surface nodes:
            ``{"kn": .., "kd": .., "mu": .., "kt": .., "height": ..}`` (:class:`redmax.forces.GroundContact`).
        base_dir: directory that relative mesh files are read from.
    """

    kind = "fem"

    def __init__(self, name: str, mesh, *, material: str = "corotated", young: float, poisson: float,
                 density: float, rayleigh=(0.0, 0.0), element: str | None = None, placement=None, attach=None,
                 coupling: str = "rows", ground=None, base_dir: str = "."):
        self._common(name, attach, coupling)
        o = self.owner
        if material not in MATERIALS:
            raise ModelError(f"{o}: material.type must be one of {MATERIALS}, got {material!r}")
        self.material = material
        from redmax.deformables.materials import lame

        self.young = check_finite(young, f"{o}: material.young")
        self.poisson = check_finite(poisson, f"{o}: material.poisson")
        try:
            self.mu, self.lam = lame(self.young, self.poisson)
        except ModelError as e:
            raise ModelError(f"{o}: material: {e}") from None
        self.density = check_finite(density, f"{o}: density")
        if not self.density > 0:
            raise ModelError(f"{o}: density must be positive, got {self.density}")
        r = check_vector(rayleigh, 2, f"{o}: rayleigh")
        if np.any(r < 0):
            raise ModelError(f"{o}: rayleigh coefficients must be >= 0, got {r.tolist()}")
        self.rayleigh = r
        if element is not None and element not in ELEMENTS:
            raise ModelError(f"{o}: element must be one of {ELEMENTS}, got {element!r}")
        self.placement = np.eye(4) if placement is None else check_transform(placement, f"{o}: placement")
        self.mesh_spec = mesh
        self.nodes, self.tets = _mesh(o, mesh, element, base_dir)
        self.element = "tet4" if self.tets.shape[1] == 4 else "tet10"
        X = self.nodes @ self.placement[:3, :3].T + self.placement[:3, 3]
        self.X = X  # rest nodes, placed (the initial positions)
        self.ground = None if ground is None else _ground(o, ground)

    def to_scene(self) -> dict:
        spec = self.mesh_spec
        if not isinstance(spec, dict):
            raise ModelError(f"{self.owner}: a mesh given as arrays cannot be saved to a scene file; write it to a "
                             "file (meshio) and give mesh = {{ file = ... }}")
        d = {"type": "fem", "name": self.name, "mesh": dict(spec), "element": self.element,
             "material": {"type": self.material, "young": self.young, "poisson": self.poisson},
             "density": self.density, "rayleigh": self.rayleigh.tolist()}
        if not np.array_equal(self.placement, np.eye(4)):
            d["placement"] = self.placement
        if self.attach:
            d["attach"] = [a.to_scene() for a in self.attach]
        if self.coupling != "rows":
            d["coupling"] = self.coupling
        if self.ground is not None:
            d["ground"] = dict(self.ground)
        return d


def _mesh(owner: str, mesh, element, base_dir: str):
    from redmax.deformables import meshes

    if isinstance(mesh, dict):
        keys = set(mesh)
        try:
            if "file" in keys:
                if keys - {"file"}:
                    raise ModelError(f"mesh.{sorted(keys - {'file'})[0]}: unknown key with file")
                import os

                path = mesh["file"]
                if not isinstance(path, str):
                    raise ModelError(f"mesh.file: expected a path, got {path!r}")
                nodes, tets = meshes.read_mesh(os.path.join(base_dir, path))
            elif "box" in keys or "cylinder" in keys:
                kind = "box" if "box" in keys else "cylinder"
                extra = keys - {kind, "divisions"}
                if extra:
                    raise ModelError(f"mesh.{sorted(extra)[0]}: unknown key (expected {kind}, divisions)")
                if "divisions" not in keys:
                    raise ModelError("mesh.divisions: missing required key")
                gen = meshes.box_mesh if kind == "box" else meshes.cylinder_mesh
                nodes, tets = gen(mesh[kind], mesh["divisions"], element=element or "tet4")
            else:
                raise ModelError("mesh: expected { file }, { box, divisions } or { cylinder, divisions }")
        except ModelError as e:
            raise ModelError(f"{owner}: {e}") from None
        return np.asarray(nodes, float), np.asarray(tets, np.int64)
    try:
        nodes, tets = mesh
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: mesh: expected (nodes, tets) or a table, got {type(mesh).__name__}") from None
    nodes = np.asarray(nodes, dtype=float)
    tets = np.asarray(tets)
    if nodes.ndim != 2 or nodes.shape[1] != 3 or nodes.shape[0] < 4 or not np.all(np.isfinite(nodes)):
        raise ModelError(f"{owner}: mesh nodes must be a finite (n, 3) array with n >= 4, got shape {nodes.shape}")
    if tets.ndim != 2 or tets.shape[1] not in (4, 10) or tets.shape[0] < 1 or tets.dtype.kind not in "iu":
        raise ModelError(f"{owner}: mesh tets must be an integer (m, 4) or (m, 10) array, got shape {tets.shape}")
    if tets.min() < 0 or tets.max() >= nodes.shape[0]:
        raise ModelError(f"{owner}: mesh tets refer to node {int(tets.max())} of {nodes.shape[0]} (numbered from 0)")
    if element is not None and element != ("tet4" if tets.shape[1] == 4 else "tet10"):
        raise ModelError(f"{owner}: element {element!r} does not match the mesh's {tets.shape[1]}-node tets")
    return nodes, tets.astype(np.int64)


_GROUND_KEYS = {"kn", "kd", "kt", "mu", "height"}


def _ground(owner: str, g) -> dict:
    if not isinstance(g, dict):
        raise ModelError(f"{owner}: ground: expected a table {{ kn, kd, kt, mu, height }}, got {g!r}")
    extra = set(g) - _GROUND_KEYS
    if extra:
        raise ModelError(f"{owner}: ground.{sorted(extra)[0]}: unknown key (expected {sorted(_GROUND_KEYS)})")
    if "kn" not in g:
        raise ModelError(f"{owner}: ground.kn: missing required key")
    out = {k: check_finite(g[k], f"{owner}: ground.{k}") for k in g}
    for k in ("kn", "kd", "kt", "mu"):
        if out.get(k, 0.0) < 0:
            raise ModelError(f"{owner}: ground.{k} must be >= 0, got {out[k]}")
    return out
