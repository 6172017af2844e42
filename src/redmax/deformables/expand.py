"""Deformable bodies turned into model pieces: node bodies, forces and attachment rows (RedMax paper §4, Eq. 6).

:func:`expand` is called by :meth:`redmax.ModelBuilder.build` with the initial world poses of the rigid bodies.  A
free node becomes a point-mass body on a ``Translational`` root joint whose coordinates are the node's world
position (an identity block in J); an attached node is either a free node with a ``Point`` constraint (3 rows,
``coupling="rows"``) or a point-mass body on a ``Fixed`` joint at the node's point of its body (no coordinates,
``coupling="eliminate"``: notes Eq. 2.96, ``J_a = Gamma J_body``).  Strand segments become spring-dampers
(``k = K / L``: tension ``K e / L``, energy ``K e^2 / 2``), meshes one :class:`.fem_force.FEMForce`.
:class:`Deformable` is what the built model keeps of each body (``model.deformables``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from redmax.errors import ModelError

__all__ = ["Deformable", "Expansion", "bind", "expand"]


@dataclass(frozen=True, eq=False)
class Deformable:
    """A deformable body of a built model.

    Attributes:
        name: the deformable's name.
        kind: "strand" or "fem".
        coupling: "rows" or "eliminate".
        X: (n, 3) initial world positions of the nodes.  mass: (n,) lumped node masses.
        node_body: (n,) index of the body that carries each node (its own body for a free node; -1: the world).
        dofs: (n, 3) the node's coordinates in ``model.dof_names`` (-1 for an eliminated node).
        elements: strand segments (n - 1, 2) or tetrahedra (m, 4 | 10), node numbers from 0.
        surface: (k, 3) the mesh's boundary triangles (corner nodes, outward), empty for a strand.
        attached: (n,) name of the body each node is attached to ("world"), or "" for unattached nodes.
    """

    name: str
    kind: str
    coupling: str
    X: np.ndarray
    mass: np.ndarray
    node_body: np.ndarray
    dofs: np.ndarray
    elements: np.ndarray
    surface: np.ndarray
    attached: tuple

    @property
    def nnodes(self) -> int:
        return self.X.shape[0]

    def positions(self, model, q, jstate=None) -> np.ndarray:
        """World node positions (n, 3) at the model's coordinates ``q``."""
        from redmax.kinematics import kinematics

        kin = kinematics(model, np.asarray(q, dtype=float), None, jstate)
        out = np.empty((self.nnodes, 3))
        for k, b in enumerate(self.node_body):
            out[k] = self.X[k] if b < 0 else kin.E_wj[b, :3, 3]
        return out

    def describe(self) -> str:
        nfree = int(np.sum(self.dofs[:, 0] >= 0))
        natt = sum(1 for a in self.attached if a)
        what = f"strand of {self.nnodes} nodes" if self.kind == "strand" else (
            f"FEM mesh of {self.nnodes} nodes, {self.elements.shape[0]} tet{self.elements.shape[1]} elements")
        return (f"deformable '{self.name}': {what}; {nfree} free node(s), {natt} attached ({self.coupling}); "
                f"mass {float(self.mass.sum()):.6g}")


@dataclass
class Expansion:
    """What :func:`expand` adds: body records (as keyword dicts for ``ModelBuilder.add_body``), forces,
    constraints, and the plan of each deformable (bound to body indices by :func:`bind`)."""

    bodies: list
    forces: list
    constraints: list
    plans: list


def _world_point(poses, body, r, owner, field):
    if body is None:
        return np.asarray(r, dtype=float)
    if body not in poses:
        raise ModelError(f"{owner}: {field}.body: unknown body '{body}'")
    E = poses[body][0]
    return E[:3, :3] @ r + E[:3, 3]


def _to_body(poses, body, X):
    """World points (k, 3) in the body's frame (the world frame for the world)."""
    if body is None:
        return X
    E = poses[body][0]
    return (X - E[:3, 3]) @ E[:3, :3]


def expand(deformables, poses) -> Expansion:
    """Model pieces of the deformable bodies.

    Args:
        deformables: :class:`Strand` / :class:`FEM` descriptions, in order.
        poses: body name -> (E_wb (4, 4), E_wj (4, 4)), the rigid bodies' world frames at the initial state.
    """
    out = Expansion([], [], [], [])
    names = set()
    for d in deformables:
        if d.name in names:
            raise ModelError(f"{d.owner}: duplicate deformable name")
        if d.name in poses:
            raise ModelError(f"{d.owner}: a body has the same name")
        names.add(d.name)
        if d.kind == "strand":
            X, mass, attach, elements, surface = _strand(d, poses)
        else:
            X, mass, attach, elements, surface = _fem(d, poses)
        _nodes(d, X, mass, attach, poses, out)
        if d.kind == "strand":
            _segments(d, X, out)
        else:
            _fem_force(d, X, out)
        out.plans.append((d, X, mass, elements, surface, attach))
    return out


def _strand(d, poses):
    (ba, ra), (bb, rb) = d.ends
    xa = _world_point(poses, ba, ra, d.owner, "ends[0]")
    xb = _world_point(poses, bb, rb, d.owner, "ends[1]")
    s = np.linspace(0.0, 1.0, d.nodes)[:, None]
    X = (1.0 - s) * xa + s * xb
    seg = np.linalg.norm(np.diff(X, axis=0), axis=1)
    if not np.all(seg > 0):
        raise ModelError(f"{d.owner}: the two ends coincide at the initial state (segments of zero length)")
    attach = [None] * d.nodes
    attach[0] = ("ends[0]", ba)
    attach[-1] = ("ends[1]", bb)
    _more(d, X, attach, poses)
    mass = np.full(d.nodes, d.mass / d.nodes)
    elements = np.column_stack([np.arange(d.nodes - 1), np.arange(1, d.nodes)]).astype(np.int64)
    return X, mass, attach, elements, np.zeros((0, 3), dtype=np.int64)


def _fem(d, poses):
    from redmax.deformables.elements import lumped_masses
    from redmax.deformables.meshes import surface_triangles

    X = d.X
    attach = [None] * X.shape[0]
    _more(d, X, attach, poses)
    return X, lumped_masses(X, d.tets, d.density), attach, d.tets, surface_triangles(d.tets)


def _more(d, X, attach, poses):
    for k, a in enumerate(d.attach):
        field = f"attach[{k}]"
        if a.body is not None and a.body not in poses:
            raise ModelError(f"{d.owner}: {field}.body: unknown body '{a.body}'")
        for i in a.select(_to_body(poses, a.body, X), d.owner, field):
            if attach[i] is not None:
                raise ModelError(f"{d.owner}: {field}: node {i + 1} is already attached ({attach[i][0]})")
            attach[i] = (field, a.body)


def _nodes(d, X, mass, attach, poses, out):
    from redmax.constraints.closures import Point
    from redmax.joints import Fixed, Translational
    from redmax.spatial import trans

    damping = d.damping if d.kind == "strand" else d.rayleigh[0] * mass
    damping = np.broadcast_to(np.asarray(damping, dtype=float), (X.shape[0],))
    for i in range(X.shape[0]):
        name = f"{d.name}.{i + 1}"
        rec = {"name": name, "mass": float(mass[i]), "point_mass": True}
        a = attach[i]
        if a is not None and d.coupling == "eliminate":
            body = a[1]
            if body is None:
                rec.update(joint=Fixed(), parent=None, joint_placement=trans(*X[i]))
            else:
                E_wj = poses[body][1]
                r = E_wj[:3, :3].T @ (X[i] - E_wj[:3, 3])
                rec.update(joint=Fixed(), parent=body, joint_placement=trans(*r))
            out.bodies.append(rec)
            continue
        rec.update(joint=Translational(), parent=None, q=X[i].copy(), joint_damping=float(damping[i]))
        out.bodies.append(rec)
        if a is not None:
            body = a[1]
            r = _to_body(poses, body, X[i:i + 1])[0]
            out.constraints.append(Point([(name, (0.0, 0.0, 0.0)), ("world" if body is None else body, r)],
                                         name=f"{d.name}.attach.{i + 1}"))


def _segments(d, X, out):
    from redmax.forces import SpringDamper

    for s in range(d.nodes - 1):
        L = float(np.linalg.norm(X[s + 1] - X[s]))
        f = SpringDamper((f"{d.name}.{s + 1}", (0.0, 0.0, 0.0)), (f"{d.name}.{s + 2}", (0.0, 0.0, 0.0)),
                         k=d.stiffness / L, rest_length=L, name=f"{d.name}.segment.{s + 1}",
                         stiffness="symmetric" if d.implicit else "none")
        f.energy_key = "deformable"
        out.forces.append(f)


def _fem_force(d, X, out):
    from redmax.deformables.elements import precompute
    from redmax.deformables.fem_force import FEMForce
    from redmax.forces import GroundContact

    dN, w = precompute(X, d.tets)
    n = X.shape[0]
    code = 0 if d.material == "corotated" else 1
    # every node is a body (free, or eliminated at its point of the carrier): its point is its joint frame's origin
    out.forces.append(FEMForce(f"{d.name}.elastic", [f"{d.name}.{i + 1}" for i in range(n)], np.zeros((n, 3)),
                               d.tets, dN, w, code, d.mu, d.lam, d.rayleigh[1]))
    if d.ground is not None:
        from redmax.deformables.meshes import surface_triangles

        g = d.ground
        nodes = np.unique(surface_triangles(d.tets))
        out.forces.append(GroundContact([(f"{d.name}.{i + 1}", (0.0, 0.0, 0.0)) for i in nodes], g["kn"],
                                        g.get("kd", 0.0), g.get("kt", 0.0), g.get("mu", 0.0),
                                        origin=(0.0, 0.0, g.get("height", 0.0)), name=f"{d.name}.ground",
                                        stiffness="symmetric"))


def bind(model, plans) -> tuple:
    """The :class:`Deformable` records of a built model."""
    index = {n: i for i, n in enumerate(model.body_names)}
    out = []
    for d, X, mass, elements, surface, attach in plans:
        n = X.shape[0]
        node_body = np.array([index[f"{d.name}.{i + 1}"] for i in range(n)], dtype=np.int64)
        dofs = np.full((n, 3), -1, dtype=np.int64)
        for i, b in enumerate(node_body):
            a, c = int(model.idx[b]), int(model.idx[b + 1])
            if c - a == 3:
                dofs[i] = np.arange(a, c)
        att = tuple("" if a is None else ("world" if a[1] is None else a[1]) for a in attach)
        out.append(Deformable(d.name, d.kind, d.coupling, X.copy(), np.asarray(mass, float).copy(), node_body, dofs,
                              np.asarray(elements, np.int64), np.asarray(surface, np.int64), att))
    return tuple(out)
