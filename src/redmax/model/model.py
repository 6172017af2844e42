"""The immutable, array-based Model: a composition of the articulated tree, the DOF layout and the elements
acting on them (forces; constraints and deformables later).

Frames (RedMax supplemental Eq. 22, notes Fig. 2):

* ``E_pj0[i]`` (4,4): joint i's rest placement in its parent joint's frame (world for a root); the joint
  frame moves as ``E_pj = E_pj0 Q(q)``.
* ``E_jb[i]`` (4,4): body i's principal frame (centre of mass, principal axes) in joint i's frame.

The model holds physics only.  The state the builder was given (``q``, ``qd`` of ``add_body``) and its joint
torques are kept apart in ``model.defaults`` (a :class:`redmax.State` and a :class:`redmax.model.Inputs`), used
only as the defaults of ``simulate`` and ``Simulator``; every algorithm takes its state and inputs as arguments.
Arrays are read-only.  Model attributes of the tree and the DOF layout are also readable directly on the model
(``model.nb``, ``model.parent``, ``model.ndof``, ...).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

import numpy as np

from redmax.model.layout import is_lean

__all__ = ["Defaults", "DofLayout", "Model", "Tree"]


def _restore_frozen(obj, state: dict) -> None:
    """``__setstate__`` of the frozen model records: the fields back, their arrays read-only again (pickling and
    ``copy.deepcopy`` hand back writeable copies; a model's arrays are read-only wherever it comes from, so that
    the compiled kernels see one array type and compile once, in a Dask worker as in the process that built it)."""
    for v in state.values():
        for a in (v if isinstance(v, tuple) else (v,)):
            if isinstance(a, np.ndarray):
                a.flags.writeable = False
    obj.__dict__.update(state)


@dataclass(frozen=True, eq=False)
class Tree:
    """Articulated tree: topology, joints and mass properties, in flat read-only arrays.

    Shapes: ``nb`` bodies (= joints).  Body i's DOFs are ``idx[i]:idx[i+1]``; its joint parameters
    ``jparam[jp_off[i]:jp_off[i+1]]``.  ``packed`` is the ``(Ii, Ff)`` view the fast kernels read
    (``redmax.model.layout``).
    """

    nb: int
    body_names: tuple[str, ...]
    joint_names: tuple[str, ...]
    parent: np.ndarray  # (nb,) int64, parent[i] < i, -1 for roots
    jtype: np.ndarray  # (nb,) int64 joint type codes
    idx: np.ndarray  # (nb+1,) int64 DOF offsets
    jp_off: np.ndarray  # (nb+1,) int64 parameter offsets
    jparam: np.ndarray  # (k,) float64 joint parameters
    E_pj0: np.ndarray  # (nb,4,4)
    E_jb: np.ndarray  # (nb,4,4)
    mass: np.ndarray  # (nb,)
    I_body: np.ndarray  # (nb,3) principal moments
    M_body: np.ndarray  # (nb,6) diagonal spatial inertia at the body frame
    M_joint: np.ndarray  # (nb,6,6) spatial inertia at the joint frame, Ad_bj^T M_b Ad_bj
    Ad_bj: np.ndarray  # (nb,6,6) Ad(E_jb^-1): joint-frame twist -> body-frame twist (constant)
    reparam_joints: np.ndarray  # joints whose coordinates can re-parameterise
    chart_joints: np.ndarray  # joints that carry an Euler chart word
    shapes: tuple = ()  # per body: the Shape (for drawing and reports)
    joints: tuple = ()  # per joint: the Joint description
    packed: tuple = ()  # (Ii, Ff) for the packed kernels

    def __setstate__(self, state: dict) -> None:
        _restore_frozen(self, state)
        if self.packed and is_lean(self.jtype):  # a lean model's ints stay writeable (redmax.model.layout)
            self.packed[0].flags.writeable = True


@dataclass(frozen=True, eq=False)
class DofLayout:
    """The model's DOFs: ``ndof`` coordinates (= velocities), their names, and the joint owning each.

    Hyper-reduced coordinates (RedMax paper Eqs. 8-10, notes §2.6; ``ModelBuilder.couple``): the ``ncoord`` joint
    coordinates of the tree are a constant affine map of the model's DOFs, ``q_joint = T q + q_offset``,
    ``qd_joint = T qd``, where row c of T has one non-zero, ``coord_coef[c]`` in column ``coord_dof[c]``.  An
    independent coordinate is a DOF itself (factor 1, offset 0; ``dof_coord`` lists them); a coupled one
    follows its DOF with a ratio (and an offset, for URDF mimic joints).  Without couplings ``ncoord == ndof``
    and T is the identity.  Generalized forces map back with ``T^T``, the step matrix with ``T^T A T``.

    Attributes:
        ndof, dof_names, dof_joint: the DOFs (model coordinates), their names and owning joints.
        ncoord, coord_names, coord_dof, coord_coef, q_offset: the joint coordinates and their map (None: the
        identity).  dof_coord (ndof,): the coordinate of each DOF.  couplings: ``(dependent, independent, ratio,
        offset)`` joint-name records.
    """

    ndof: int
    dof_names: tuple[str, ...]
    dof_joint: np.ndarray  # (ndof,) int64: index of the joint owning each DOF
    ncoord: int | None = None
    coord_names: tuple[str, ...] | None = None
    coord_dof: np.ndarray | None = None  # (ncoord,) int64
    coord_coef: np.ndarray | None = None  # (ncoord,)
    q_offset: np.ndarray | None = None  # (ncoord,)
    dof_coord: np.ndarray | None = None  # (ndof,) int64
    couplings: tuple = ()

    def __setstate__(self, state: dict) -> None:
        _restore_frozen(self, state)

    def __post_init__(self):
        if self.ncoord is None:
            object.__setattr__(self, "ncoord", int(self.ndof))
        if self.coord_names is None:
            object.__setattr__(self, "coord_names", tuple(self.dof_names))

    @property
    def coupled(self) -> bool:
        """True when some joint coordinates are eliminated (``ncoord > ndof``)."""
        return self.coord_dof is not None

    @property
    def T(self) -> np.ndarray:
        """The map (ncoord, ndof) from DOF rates to joint-coordinate rates."""
        if not self.coupled:
            return np.eye(self.ndof)
        T = np.zeros((self.ncoord, self.ndof))
        T[np.arange(self.ncoord), self.coord_dof] = self.coord_coef
        return T

    def expand(self, q) -> np.ndarray:
        """Joint coordinates ``T q + q_offset`` (ncoord,) of DOF coordinates q (ndof,) (also complex)."""
        q = np.asarray(q)
        if not self.coupled:
            return q
        return self.coord_coef * q[self.coord_dof] + self.q_offset

    def expand_rate(self, qd) -> np.ndarray:
        """Joint rates ``T qd`` (ncoord,) (also accelerations)."""
        qd = np.asarray(qd)
        if not self.coupled:
            return qd
        return self.coord_coef * qd[self.coord_dof]

    def restrict(self, x) -> np.ndarray:
        """The DOF values (ndof,) (or (..., ndof)) of joint-coordinate values (..., ncoord) that satisfy the map."""
        x = np.asarray(x)
        if not self.coupled:
            return x
        return x[..., self.dof_coord]

    def reduce(self, f) -> np.ndarray:
        """Generalized forces on the DOFs ``T^T f`` (ndof,) of joint-coordinate forces f (ncoord,)."""
        f = np.asarray(f)
        if not self.coupled:
            return f
        out = np.zeros(self.ndof, dtype=np.result_type(f, float))
        np.add.at(out, self.coord_dof, self.coord_coef * f)
        return out


@dataclass(frozen=True, eq=False)
class Defaults:
    """The builder's initial state and inputs (defaults of ``simulate``; algorithms never read them)."""

    state: object  # redmax.State
    inputs: object  # redmax.model.Inputs

    def __setstate__(self, state: dict) -> None:
        st = state.get("state")
        for name in ("q", "qd", "jstate"):
            a = getattr(st, name, None)
            if isinstance(a, np.ndarray):
                a.flags.writeable = False
        _restore_frozen(self, state)


@dataclass(frozen=True, eq=False)
class Model:
    """Immutable articulated model (ARCHITECTURE: Model/Data split): tree + DOF layout + elements.

    Attributes:
        name: model name.  tree: :class:`Tree`.  dofs: :class:`DofLayout`.
        gravity: (3,) world gravity.  body_damping: (nb,) viscous damping on body twists (force ``-d phi``).
        joint_stiffness, joint_damping, q_rest: (ndof,) linear joint springs ``-k (q - q_rest)`` and
        damping ``-d qd``.  forces: the forces added with ``ModelBuilder.add_force``, bound to this model.
        constraints: the bound constraints (``redmax.constraints``, added with ``ModelBuilder.add_constraint``).
        defaults: the builder's initial state and inputs.
        source: the builder records (lossless scene files).  meta: free-form information.
        armature: None, or (ndof,) rotor inertias added to the diagonal of the joint-space inertia (MuJoCo's
            ``armature``; packed into the kernels' arrays, see ``redmax.io.mjcf.with_armature``).
        contacts: per joint, its contact geometry for joint friction (``redmax.friction``) or None.
        friction: the friction coefficients ``{"joint": mu1, "world": mu2}`` (see :mod:`redmax.friction`).
        deformables: the deformable bodies (:class:`redmax.deformables.Deformable`: nodes, elements, DOFs).
        visuals: the visual geometry (:class:`redmax.model.visuals.Visual`): the bodies' shapes, URDF ``<visual>``
            elements, MJCF geoms; drawing only.
    """

    name: str
    tree: Tree
    dofs: DofLayout
    gravity: np.ndarray
    body_damping: np.ndarray
    joint_stiffness: np.ndarray
    joint_damping: np.ndarray
    q_rest: np.ndarray
    forces: tuple = ()
    constraints: tuple = ()
    defaults: Defaults | None = None
    source: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)
    armature: np.ndarray | None = None  # (ndof,) rotor inertia added to diag M (MJCF armature); None: none
    uncoupled: Model | None = None  # hyper-reduced models: the same model with every joint coordinate a DOF
    contacts: tuple = ()  # per joint: its contact geometry (redmax.friction.Cylinder/Box/Ball) or None
    friction: dict | None = None  # {"joint": mu1, "world": mu2 or None}; None: the builder declared no table
    deformables: tuple = ()  # redmax.deformables.expand.Deformable records (strands, meshes)
    visuals: tuple = ()  # redmax.model.visuals.Visual records: what the bodies look like (no physics)

    def __getstate__(self) -> dict:
        """Pickled state: the fields, without the per-process caches of ``redmax.dynamics._single_call.lean`` and
        ``redmax.dynamics.lanes.tables``."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_lean", "_lanes")}

    def __setstate__(self, state: dict) -> None:
        _restore_frozen(self, state)

    @property
    def coordinate_model(self) -> Model:
        """The model whose DOFs are all joint coordinates: itself unless joints are coupled
        (``ModelBuilder.couple``); algorithms of a coupled model run on it and map through ``model.dofs``."""
        return self if self.uncoupled is None else self.uncoupled

    @property
    def ncoord(self) -> int:
        """Number of joint coordinates (``ndof`` unless joints are coupled)."""
        return self.dofs.ncoord

    @property
    def moving(self) -> np.ndarray:
        """(nb,) bool: the bodies with a DOF on their path to the root (the others are welded to the world)."""
        mov = np.zeros(self.nb, dtype=bool)
        for i in range(self.nb):
            p = self.parent[i]
            mov[i] = self.idx[i + 1] > self.idx[i] or (p >= 0 and mov[p])
        return mov

    # -------------------------------------------------------------------------------------------
    def initial_state(self):
        """A fresh copy of the builder's initial State (q, qd, t = 0, initial charts)."""
        return self.defaults.state.copy()

    @property
    def q0(self) -> np.ndarray:
        """The builder's initial coordinates (ndof,) (``model.defaults.state.q``)."""
        return self.defaults.state.q

    @property
    def qd0(self) -> np.ndarray:
        """The builder's initial rates (ndof,)."""
        return self.defaults.state.qd

    @property
    def jstate0(self) -> np.ndarray:
        """The initial chart words (nb,) int64."""
        return self.defaults.state.jstate

    @property
    def inputs(self):
        """The builder's joint torques (:class:`redmax.model.Inputs`)."""
        return self.defaults.inputs

    @property
    def has_torques(self) -> bool:
        return not self.defaults.inputs.empty

    def joint_torque(self, t: float) -> np.ndarray:
        """The builder's joint torques (ndof,) at time t (``model.inputs.torque(t)``)."""
        return self.defaults.inputs.torque(t)

    def kernel_args(self) -> tuple:
        """The flat arrays the tree kernels read, in their fixed order.  The joint type codes are those of the packed
        ints (a view): writeable for a lean model, the tag its kernels read (``redmax.model.layout``)."""
        t = self.tree
        jtype = self.packed[0][2 + t.nb: 2 + 2 * t.nb] if self.packed else t.jtype
        return (t.parent, jtype, t.idx, t.jp_off, t.jparam, t.E_pj0, t.E_jb, t.Ad_bj)

    def check_state(self, q, qd=None, what: str = "state") -> tuple[np.ndarray, np.ndarray | None]:
        """Validate sizes and finiteness of q (and qd); returns contiguous arrays (dtype kept)."""
        from redmax._validate import all_finite
        from redmax.errors import ModelError

        out = []
        for name, v in (("q", q), ("qd", qd)):
            if v is None:
                out.append(None)
                continue
            try:
                a = np.ascontiguousarray(v)
            except (TypeError, ValueError):
                raise ModelError(f"{self.name}: {what} {name} must be an array of numbers, got {v!r}") from None
            if a.shape != (self.ndof,):
                raise ModelError(f"{self.name}: {what} {name} must have shape ({self.ndof},), got {a.shape}")
            if a.dtype.kind not in "fciub":
                raise ModelError(f"{self.name}: {what} {name} must hold numbers, got dtype {a.dtype}")
            if not all_finite(a):
                raise ModelError(f"{self.name}: {what} {name} contains NaN or inf")
            out.append(a)
        return out[0], out[1]

    def events(self, q, jstate) -> np.ndarray:
        """Re-parameterisation event values of the joints in ``reparam_joints`` (negative = due)."""
        from redmax.configuration import events

        return events(self, q, jstate)

    def describe(self, details: bool = False) -> str:
        """A short summary (bodies, DOFs, joint kinds, gravity, forces, where the model came from); with ``details``
        also one line per body (its mass, joint, parent and DOF names)."""
        kinds: dict = {}
        for j in self.joints:
            kinds[j.kind] = kinds.get(j.kind, 0) + 1
        joints = ", ".join(f"{v} {k}" for k, v in kinds.items()) or "none"
        src = self.meta.get("path")
        lines = [f"model '{self.name}': {self.nb} bodies, {self.ndof} DOFs (joints: {joints}), gravity "
                 f"{self.gravity.tolist()}, {len(self.forces)} added force(s)"
                 + (", armature" if self.armature is not None else "") + (f"; from {src}" if src else "")]
        if details:
            for i in range(self.nb):
                p = self.parent[i]
                pname = "world" if p < 0 else self.body_names[p]
                dofs = list(self.dofs.coord_names[self.idx[i]:self.idx[i + 1]])
                lines.append(f"  [{i}] body '{self.body_names[i]}' (mass {self.mass[i]:.6g}) on "
                             f"{self.joints[i].kind} joint '{self.joint_names[i]}' -> parent {pname}; dofs {dofs}")
        else:
            lines.append("  (model.describe(details=True) lists every body; model.dof_names the coordinates)")
        for dep, on, ratio, offset in self.dofs.couplings:
            off = f" + {offset:g}" if offset else ""
            lines.append(f"  coupling: joint '{dep}' = {ratio:g} * joint '{on}'{off} (eliminated)")
        for d in self.deformables:
            lines.append(f"  {d.describe()}")
        held = {d.name: 0 for d in self.deformables}
        for c in self.constraints:
            owner = c.name.split(".attach.")[0] if ".attach." in c.name else None
            if owner in held:  # a deformable's attachment rows: counted, not listed
                held[owner] += 1
                continue
            lines.append(f"  constraint: {c.describe()}")
        for name, k in held.items():
            if k:
                lines.append(f"  constraint: {k} point attachment(s) of deformable '{name}' ('{name}.attach.<node>', "
                             "3 rows each)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"<redmax.Model '{self.name}': {self.nb} bodies, {self.ndof} DOFs, {len(self.forces)} added "
                f"force(s); model.describe(details=True) lists them>")


# Tree and DOF-layout attributes read directly on the model (operator.attrgetter: a C-level getter, as fast
# as a plain attribute for the per-call fast paths).
_TREE = ("nb", "body_names", "joint_names", "parent", "jtype", "idx", "jp_off", "jparam", "E_pj0", "E_jb", "mass",
         "I_body", "M_body", "M_joint", "Ad_bj", "reparam_joints", "chart_joints", "shapes", "joints", "packed")
_DOFS = ("ndof", "dof_names", "dof_joint")
for _name in _TREE:
    setattr(Model, _name, property(operator.attrgetter(f"tree.{_name}"), doc=f"``model.tree.{_name}``"))
for _name in _DOFS:
    setattr(Model, _name, property(operator.attrgetter(f"dofs.{_name}"), doc=f"``model.dofs.{_name}``"))
del _name
