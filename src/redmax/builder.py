"""The builder API: ``ModelBuilder`` collects bodies, joints and forces and compiles an immutable Model.

Each body hangs on exactly one joint (RedMax supplemental §3), in any order; ``build()`` validates everything
once, orders bodies so that ``parent[i] < i`` (stable topological order: the insertion order is kept whenever
it is already valid), packs the tree into flat arrays read by the Numba kernels and checks that the
joint-space inertia is regular at the initial state.  The builder sits above the dynamics layer (it uses CRBA
for that check); the Model itself (``redmax.model.model``) imports nothing above it.

Every error is a :class:`redmax.ModelError` whose message starts with the offending body or joint.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass

import numpy as np

from redmax._validate import check_finite, check_nonneg, check_transform, check_vector
from redmax.bodies import principal_frame
from redmax.configuration import State, reparameterize
from redmax.dynamics import crba
from redmax.dynamics.diagnostics import dependent_dof, singular_inertia_message
from redmax.errors import ModelError
from redmax.forces.base import Force
from redmax.forces.points import PointForce
from redmax.forces.reduced import JointForce
from redmax.joints.base import Joint
from redmax.kinematics import kinematics
from redmax.model.inputs import Inputs, frozen, torque_spec
from redmax.model.layout import pack
from redmax.model.model import Defaults, DofLayout, Model, Tree
from redmax.model.visuals import shape_visuals
from redmax.spatial import Ad, inertia_transform, inv_se3, spatial_inertia

__all__ = ["ModelBuilder", "check_regular_somewhere"]

_frozen = frozen


# -------------------------------------------------------------------------------------------------
# Builder
# -------------------------------------------------------------------------------------------------


@dataclass
class _BodyRecord:
    name: str
    shape: object
    joint: Joint
    parent: str | None
    joint_name: str
    E_pj0: object
    E_body: object
    q: object
    qd: object
    damping: object
    stiffness: object
    rest: object
    joint_damping: object
    torque: object
    mass: object = None
    inertia: object = None
    contact: object = None
    point_mass: bool = False  # a node of a deformable body: mass only, no rotational inertia


def _shape_mass_props(rec: _BodyRecord, allow_massless: bool = False, check_inertia: bool = True):
    """(mass, principal moments (3,), E_sb (4,4)) from the body's shape or explicit mass/inertia.

    ``check_inertia=False`` keeps any finite tensor with a mass >= 0 as it is (no positivity or triangle
    inequality check, no clamping): for robot-file readers that have checked and reported each link themselves."""
    owner = f"body '{rec.name}'"
    if rec.point_mass:
        m = check_finite(rec.mass, f"{owner}: mass")
        if not m > 0.0:
            raise ModelError(f"{owner}: node mass must be positive, got {m}")
        return m, np.zeros(3), np.eye(4)
    if rec.shape is not None:
        for attr in ("mass", "I", "E_sb"):
            if not hasattr(rec.shape, attr):
                raise ModelError(f"{owner}: shape {rec.shape!r} has no '{attr}' (expected a redmax.bodies shape)")
        m = check_finite(rec.shape.mass, f"{owner}: mass")
        I = check_vector(rec.shape.I, 3, f"{owner}: principal inertia")
        E_sb = check_transform(rec.shape.E_sb, f"{owner}: shape principal frame")
    else:
        if rec.mass is None or rec.inertia is None:
            raise ModelError(f"{owner}: give a shape, or both mass and inertia")
        m = check_finite(rec.mass, f"{owner}: mass")
        Iv = np.asarray(rec.inertia, dtype=float)
        if Iv.shape == (3, 3):
            if not np.all(np.isfinite(Iv)):
                raise ModelError(f"{owner}: inertia contains NaN or inf")
            if np.abs(Iv - Iv.T).max() > 1e-9 * max(1.0, np.abs(Iv).max()):
                raise ModelError(f"{owner}: inertia tensor must be symmetric")
            V, I = principal_frame(Iv)
            E_sb = np.eye(4)
            E_sb[:3, :3] = V
        else:
            I = check_vector(Iv, 3, f"{owner}: inertia (3 principal moments or a 3x3 tensor)")
            E_sb = np.eye(4)
    if not check_inertia:
        if not m >= 0.0:
            raise ModelError(f"{owner}: mass must be >= 0, got {m}")
        return m, I, E_sb
    if allow_massless:
        if m < 0.0 or np.any(I < -1e-12 * max(1.0, float(np.abs(I).max()))):
            raise ModelError(f"{owner}: mass and principal moments must be >= 0, got {m} and {I.tolist()}")
        I = np.maximum(I, 0.0)
    elif not m > 0.0:
        raise ModelError(f"{owner}: mass must be positive, got {m}")
    elif not np.all(I > 0.0):
        raise ModelError(f"{owner}: principal moments of inertia must be positive, got {I.tolist()}")
    tol = 1e-9 * I.sum()
    if I[0] + I[1] < I[2] - tol or I[1] + I[2] < I[0] - tol or I[2] + I[0] < I[1] - tol:
        raise ModelError(f"{owner}: principal moments {I.tolist()} violate the triangle inequality")
    return m, I, E_sb


class ModelBuilder:
    """Collects bodies and joints, then :meth:`build` compiles an immutable :class:`Model`.

    Example::

        b = ModelBuilder("pendulum", gravity=(0, 0, -980))
        b.add_body("link1", Cuboid(10, 1, 1), Revolute((0, 1, 0)), body_placement=trans(5, 0, 0))
        model = b.build()
    """

    def __init__(self, name: str = "model", gravity=(0.0, 0.0, -9.81), *, friction=None):
        """``friction``: the friction coefficients ``{"joint": mu1, "world": mu2}`` (each 0.6 when left out):
        joints and loops with a ``contact`` use mu1; floors have friction mu2 only when this table is given."""
        from redmax.friction.coefficients import check_friction

        self.name = str(name)
        self._friction = check_friction(friction, f"model '{self.name}'")
        self._gravity = gravity
        self._bodies: list[_BodyRecord] = []
        self._forces: list = []
        self._constraints: list = []
        self._couplings: list = []
        self._deformables: list = []

    def set_gravity(self, gravity) -> None:
        """World gravity vector (3,) in the model's units (m/s^2, or cm/s^2 in the reference scenes)."""
        self._gravity = gravity

    def add_body(
        self,
        name: str,
        shape=None,
        joint: Joint | None = None,
        *,
        parent: str | None = None,
        joint_name: str | None = None,
        joint_placement=None,
        body_placement=None,
        q=None,
        qd=None,
        damping=0.0,
        stiffness=0.0,
        rest=None,
        joint_damping=0.0,
        torque=None,
        mass=None,
        inertia=None,
        contact=None,
    ) -> str:
        """Add body ``name`` hanging on ``joint`` from body ``parent`` (None: the world).

        Args:
            name: unique body name.
            shape: a ``redmax.bodies`` shape (mass, principal moments, principal frame); or give
                ``mass`` and ``inertia`` (3 principal moments or a 3x3 tensor at the centre of mass).
            joint: a ``redmax.joints`` description.
            parent: name of the parent body; may be added later (order is resolved by build()).
            joint_name: unique joint name (default: the body name).
            joint_placement: (4,4) rest transform of the joint in the parent joint's frame (default I).
            body_placement: (4,4) transform of the shape's frame in the joint frame (default I).
            q, qd: initial coordinates and rates of the joint (default 0).
            damping: viscous body damping d >= 0 (force ``-d phi`` on the body twist).
            stiffness: joint stiffness k >= 0 per DOF (scalar or (n,)); spring torque ``-k (q - rest)``.
            rest: spring rest coordinates (default: the initial q).
            joint_damping: joint damping >= 0 per DOF; torque ``-d qd``.
            torque: constant (n,) joint torque or callable ``t -> (n,)``.
            contact: the joint's contact geometry for joint friction: ``redmax.friction.Cylinder(radius, height)``
                (revolute), ``Box(sides)`` (prismatic) or ``Ball(radius)`` (spherical); None: no friction.
        Returns:
            The body name.
        """
        if not isinstance(name, str) or not name:
            raise ModelError(f"body name must be a non-empty string, got {name!r}")
        if not isinstance(joint, Joint):
            raise ModelError(f"body '{name}': joint must be a redmax.joints.Joint, got {type(joint).__name__}")
        if parent is not None and not isinstance(parent, str):
            raise ModelError(f"body '{name}': parent must be a body name or None, got {parent!r}")
        self._bodies.append(
            _BodyRecord(
                name=name, shape=shape, joint=joint, parent=parent,
                joint_name=joint_name if joint_name is not None else name,
                E_pj0=joint_placement, E_body=body_placement, q=q, qd=qd, damping=damping,
                stiffness=stiffness, rest=rest, joint_damping=joint_damping, torque=torque,
                mass=mass, inertia=inertia, contact=contact,
            )
        )
        return name

    def add_force(self, force) -> None:
        """Add a force (``redmax.forces``: springs, cables, contact, point forces, joint limits...).

        Bodies and joints are referred to by name and resolved by :meth:`build`.
        """
        if not isinstance(force, Force):
            raise ModelError(f"add_force: expected a redmax.forces.Force, got {type(force).__name__}")
        self._forces.append(force)

    def add_constraint(self, constraint) -> None:
        """Add a constraint (``redmax.constraints``: Loop, Point, Weld, Universal, JointRatio, Linear,
        PrescribedJoint, PrescribedBody, PrescribedRate, Limit, Floor, SelfCollision); names are resolved by
        :meth:`build`."""
        from redmax.constraints.base import Constraint

        if not isinstance(constraint, Constraint):
            raise ModelError(f"add_constraint: expected a redmax.constraints.Constraint, got "
                             f"{type(constraint).__name__}")
        self._constraints.append(constraint)

    def add_deformable(self, deformable) -> str:
        """Add a deformable body (:class:`redmax.deformables.Strand` or :class:`redmax.deformables.FEM`).

        Its nodes become bodies named ``<name>.<node>`` (numbered from 1) after every rigid body, so that
        ``Result.q`` holds the rigid DOFs first, then x, y, z of every free node (``<name>.<node>.x``).
        Returns the deformable's name."""
        from redmax.deformables.specs import FEM, Strand

        if not isinstance(deformable, Strand | FEM):
            raise ModelError(f"add_deformable: expected a redmax.deformables.Strand or FEM, got "
                             f"{type(deformable).__name__}")
        self._deformables.append(deformable)
        return deformable.name

    def couple(self, dependent: str, on: str, ratio: float, offset: float = 0.0) -> None:
        """Hyper-reduced coordinates (RedMax paper Eqs. 8-10): joint ``dependent`` follows joint ``on`` with
        ``q_dependent = ratio * q_on (+ offset)`` per DOF and is removed from the model's DOFs (``model.ndof``
        counts the others; ``Result.q`` holds only them).  Both joints need the same number of DOFs and fixed
        charts (revolute, prismatic, planar, translational, universal, ...).  The dependent joint's own initial
        q and qd are replaced by the map.  ``offset`` serves URDF mimic joints."""
        from redmax.model.coupling import check_coupling_args

        self._couplings.append(check_coupling_args(dependent, on, ratio, offset))

    def _record(self, joint_name: str) -> _BodyRecord:
        for r in self._bodies:
            if r.joint_name == joint_name:
                return r
        raise ModelError(f"joint '{joint_name}': no such joint")

    def set_state(self, joint_name: str, q=None, qd=None) -> None:
        """Set the initial coordinates and/or rates of a joint."""
        r = self._record(joint_name)
        if q is not None:
            r.q = q
        if qd is not None:
            r.qd = qd

    def set_torque(self, joint_name: str, torque) -> None:
        """Set a joint's torque: constant (n,) or callable ``t -> (n,)``."""
        self._record(joint_name).torque = torque

    # ---------------------------------------------------------------------------------------------
    def _order(self, bodies) -> list[int]:
        names = [r.name for r in bodies]
        seen: set[str] = set()
        for n in names:
            if n in seen:
                raise ModelError(f"body '{n}': duplicate body name")
            seen.add(n)
        jseen: set[str] = set()
        for r in bodies:
            if r.joint_name in jseen:
                raise ModelError(f"joint '{r.joint_name}': duplicate joint name")
            jseen.add(r.joint_name)
        pos = {n: i for i, n in enumerate(names)}
        for r in bodies:
            if r.parent is not None and r.parent not in pos:
                raise ModelError(f"body '{r.name}': unknown parent body '{r.parent}'")
            if r.parent == r.name:
                raise ModelError(f"body '{r.name}': a body cannot be its own parent (cycle)")
        # Stable topological order: repeatedly take the earliest body whose parent is placed.
        placed: list[int] = []
        done: set[str] = set()
        remaining = list(range(len(names)))
        while remaining:
            for k, i in enumerate(remaining):
                par = bodies[i].parent
                if par is None or par in done:
                    placed.append(i)
                    done.add(names[i])
                    del remaining[k]
                    break
            else:
                cyc = ", ".join(f"'{names[i]}'" for i in remaining)
                raise ModelError(f"body '{names[remaining[0]]}': cyclic parent chain among bodies {cyc}")
        return placed

    def build(self, allow_massless: bool = False, *, check_inertia: bool = True, allow_empty: bool = False,
              check_regular: bool = True) -> Model:
        """Validate and compile to a :class:`Model`. Raises :class:`ModelError` naming the element.

        Args:
            allow_massless: accept bodies of zero mass or inertia (e.g. URDF links without
                ``<inertial>``), provided every moving joint still moves some mass: the diagonal of the
                joint-space inertia at the initial state must be positive, otherwise the joint is named.
            check_inertia: refuse inertias that are not physical (a negative principal moment, the triangle
                inequality violated).  Robot-file readers pass False after warning about each link themselves
                (Pinocchio and MuJoCo accept such files).
            allow_empty: accept a model without bodies (zero DOF: a robot file whose links are all welded to the
                world); otherwise an empty builder is an error.
            check_regular: refuse a joint-space inertia that is singular at the initial state.  Robot-file readers
                pass False and check the model themselves (:func:`check_regular_somewhere`): a robot may be
                singular at its initial configuration only.
        """
        if not self._bodies and not self._deformables and not allow_empty:
            raise ModelError(f"model '{self.name}': has no bodies")
        gravity = check_vector(self._gravity, 3, f"model '{self.name}': gravity")
        bodies, forces, constraints, plans = self._bodies, self._forces, self._constraints, None
        if self._deformables:
            bodies, forces, constraints, plans = self._expand_deformables(allow_massless, check_inertia)
        order = self._order(bodies)
        recs = [bodies[i] for i in order]
        index = {r.name: k for k, r in enumerate(recs)}
        nb = len(recs)
        parent = np.array([-1 if r.parent is None else index[r.parent] for r in recs], dtype=np.int64)
        nq = [r.joint.nq for r in recs]
        idx = np.zeros(nb + 1, dtype=np.int64)
        idx[1:] = np.cumsum(nq)
        ndof = int(idx[-1])

        params, jtype, jstate0, dof_names = [], [], [], []
        E_pj0 = np.zeros((nb, 4, 4))
        E_jb = np.zeros((nb, 4, 4))
        mass = np.zeros(nb)
        I_body = np.zeros((nb, 3))
        M_body = np.zeros((nb, 6))
        M_joint = np.zeros((nb, 6, 6))
        Ad_bj = np.zeros((nb, 6, 6))
        bdamp = np.zeros(nb)
        q0 = np.zeros(ndof)
        qd0 = np.zeros(ndof)
        kst = np.zeros(ndof)
        kdm = np.zeros(ndof)
        rest = np.zeros(ndof)
        torques = []
        visuals = []
        for i, r in enumerate(recs):
            jown = f"joint '{r.joint_name}'"
            bown = f"body '{r.name}'"
            n = r.joint.nq
            a, b = idx[i], idx[i + 1]
            params.append(np.asarray(r.joint.params(jown), dtype=float))
            if not np.all(np.isfinite(params[-1])):
                raise ModelError(f"{jown}: parameters contain NaN or inf")
            jtype.append(r.joint.code)
            jstate0.append(r.joint.jstate())
            for lab in r.joint.dof_labels:
                dof_names.append(f"{r.joint_name}.{lab}" if lab else r.joint_name)
            E_pj0[i] = np.eye(4) if r.E_pj0 is None else check_transform(r.E_pj0, f"{jown}: joint_placement")
            E_user = np.eye(4) if r.E_body is None else check_transform(r.E_body, f"{bown}: body_placement")
            if r.shape is not None:
                visuals.extend(shape_visuals(r.name, r.shape, E_user))
            m, I, E_sb = _shape_mass_props(r, allow_massless, check_inertia)
            E_jb[i] = E_user @ E_sb
            mass[i], I_body[i] = m, I
            M_body[i, :3], M_body[i, 3:] = I, m
            M_joint[i] = inertia_transform(spatial_inertia(m, I), inv_se3(E_jb[i]))
            Ad_bj[i] = Ad(inv_se3(E_jb[i]))
            bdamp[i] = check_nonneg(r.damping, f"{bown}: damping")
            q0[a:b] = np.zeros(n) if r.q is None else check_vector(r.q, n, f"{jown}: initial q")
            qd0[a:b] = np.zeros(n) if r.qd is None else check_vector(r.qd, n, f"{jown}: initial qd")
            kst[a:b] = _per_dof(r.stiffness, n, f"{jown}: stiffness")
            kdm[a:b] = _per_dof(r.joint_damping, n, f"{jown}: joint_damping")
            rest[a:b] = q0[a:b] if r.rest is None else check_vector(r.rest, n, f"{jown}: rest")
            torques.append(torque_spec(r.torque, n, jown))
        couplings = None
        if self._couplings:  # hyper-reduced coordinates: the dependent coordinates follow the map from the start
            from redmax.model.coupling import resolve_couplings

            couplings = resolve_couplings(self._couplings, recs, idx, dof_names, q0, qd0, rest,
                                          [r.rest is None for r in recs])
        jp_off = np.zeros(nb + 1, dtype=np.int64)
        jp_off[1:] = np.cumsum([p.size for p in params])
        jparam = np.concatenate(params) if jp_off[-1] > 0 else np.zeros(0)
        jtype_a = np.array(jtype, dtype=np.int64)
        jstate_a = np.array(jstate0, dtype=np.int64)
        joints = tuple(r.joint for r in recs)
        reparam = [i for i in range(nb) if joints[i].can_reparam()]
        charts = [i for i in range(nb) if joints[i].chart_shifts()]
        tree = Tree(
            nb=nb, body_names=tuple(r.name for r in recs), joint_names=tuple(r.joint_name for r in recs),
            parent=_frozen(parent), jtype=_frozen(jtype_a), idx=_frozen(idx), jp_off=_frozen(jp_off),
            jparam=_frozen(jparam), E_pj0=_frozen(E_pj0), E_jb=_frozen(E_jb), mass=_frozen(mass),
            I_body=_frozen(I_body), M_body=_frozen(M_body), M_joint=_frozen(M_joint), Ad_bj=_frozen(Ad_bj),
            reparam_joints=_frozen(np.array(reparam, dtype=np.int64)),
            chart_joints=_frozen(np.array(charts, dtype=np.int64)),
            shapes=tuple(r.shape for r in recs), joints=joints,
        )
        tree = dataclasses.replace(tree, packed=pack(tree, gravity, jstate_a))
        dofs = DofLayout(ndof=ndof, dof_names=tuple(dof_names),
                         dof_joint=_frozen(np.repeat(np.arange(nb, dtype=np.int64), np.diff(idx))))
        state0 = State(_frozen(q0), _frozen(qd0), 0.0, _frozen(jstate_a))
        inputs = Inputs(self.name, tree.joint_names, idx, torques)
        model = Model(
            name=self.name, tree=tree, dofs=dofs, gravity=_frozen(gravity), body_damping=_frozen(bdamp),
            joint_stiffness=_frozen(kst), joint_damping=_frozen(kdm), q_rest=_frozen(rest),
            defaults=Defaults(state0, inputs),
            source={"name": self.name, "gravity": self._gravity, "bodies": [copy.copy(r) for r in self._bodies],
                    "forces": list(self._forces), "constraints": list(self._constraints),
                    "deformables": list(self._deformables),
                    "couplings": list(self._couplings), "friction": self._friction},
            contacts=_contacts(recs, joints), friction=self._friction, visuals=tuple(visuals),
        )
        if check_regular:
            _check_inertia_regular(model)
        if plans is not None:
            from redmax.deformables.expand import bind

            model = dataclasses.replace(model, deformables=bind(model, plans))
        model = self._bind_forces(model, forces)
        if constraints:
            model = self._bind_constraints(model, constraints)
        if couplings is not None:
            from redmax.model.coupling import coupled_model

            model = coupled_model(model, couplings)
        return model

    def _expand_deformables(self, allow_massless: bool, check_inertia: bool):
        """Bodies, forces and constraints with the deformables' pieces appended (:mod:`redmax.deformables.expand`),
        and their plans; the rigid bodies' initial world frames come from a model of the rigid bodies alone."""
        from redmax.deformables.expand import expand

        poses = {}
        if self._bodies:
            rigid = ModelBuilder(self.name, self._gravity)
            rigid._bodies = [copy.copy(r) for r in self._bodies]
            m0 = rigid.build(allow_massless, check_inertia=check_inertia, check_regular=False)
            kin = kinematics(m0, m0.q0, None, m0.jstate0)
            poses = {n: (kin.E_wb[i], kin.E_wj[i]) for i, n in enumerate(m0.body_names)}
        ex = expand(self._deformables, poses)
        recs = list(self._bodies)
        for kw in ex.bodies:
            recs.append(_BodyRecord(
                name=kw["name"], shape=None, joint=kw["joint"], parent=kw.get("parent"), joint_name=kw["name"],
                E_pj0=kw.get("joint_placement"), E_body=None, q=kw.get("q"), qd=None, damping=0.0, stiffness=0.0,
                rest=None, joint_damping=kw.get("joint_damping", 0.0), torque=None, mass=kw["mass"], inertia=None,
                point_mass=True))
        return recs, self._forces + ex.forces, self._constraints + ex.constraints, ex.plans

    def _bind_constraints(self, model: Model, constraints) -> Model:
        """Bound copies of the added constraints (names resolved, parameters checked)."""
        names, bound = set(), []
        for c in constraints:
            if c.name in names:
                raise ModelError(f"constraint '{c.name}': duplicate constraint name")
            names.add(c.name)
            bound.append(c.bind(model))
        return dataclasses.replace(model, constraints=tuple(bound))

    def _bind_forces(self, model: Model, forces) -> Model:
        """Copy each added force, resolve its body/joint names and initialise it at the initial state."""
        if not forces:
            return model
        index = {n: i for i, n in enumerate(model.body_names)}
        bound, names = [], set()
        for f in forces:
            g = copy.copy(f)
            if g.name in names:
                raise ModelError(f"force '{g.name}': duplicate force name")
            names.add(g.name)
            if isinstance(g, PointForce):
                g.bind(index)
            elif isinstance(g, JointForce):
                g.bind_joints(model)
            bound.append(g)
        kin0 = kinematics(model, model.q0, model.qd0, model.jstate0)
        for g in bound:
            if hasattr(g, "initialize"):
                g.initialize(model, kin0)
        return dataclasses.replace(model, forces=tuple(bound))


def _contacts(recs, joints) -> tuple:
    """Per joint: its checked contact geometry (or None)."""
    from redmax.friction.geometry import contact_from_scene, contact_set

    out = []
    for r, j in zip(recs, joints, strict=True):
        if r.contact is None:
            out.append(None)
            continue
        owner = f"joint '{r.joint_name}'"
        geo = contact_from_scene(r.contact, owner)
        contact_set(geo, j.kind, getattr(j, "axis", None), owner)  # (refuses a geometry that does not fit)
        out.append(geo)
    return tuple(out) if any(c is not None for c in out) else ()


def _check_inertia_regular(model: Model) -> None:
    """M(q0) must be regular: every DOF moves mass and no DOF repeats the motion of others (a redundant
    composite joint, two coincident axes).  Checked after re-parameterisation, as the first step does."""
    if model.ndof == 0:
        return
    q, qd, js = model.q0.copy(), model.qd0.copy(), model.jstate0.copy()
    reparameterize(model, q, qd, js)
    M = _inertia(model, q, js)
    d = np.diag(M)
    if np.all(d > 1e-12 * max(1.0, float(np.abs(d).max()))) and dependent_dof(M)[0] < 0:
        return
    raise ModelError(singular_inertia_message(model, q, js) + " (at the initial state)")


def _inertia(model: Model, q: np.ndarray, js: np.ndarray) -> np.ndarray:
    """M(q) in the chart words ``js``: through ``crba(model, q)`` (the call a user makes first, whose kernel is then
    compiled once for both) when the model has no Euler charts and they are its initial ones."""
    if not model.chart_joints.size and np.array_equal(js, model.jstate0):
        return crba(model, q)
    return crba(model, q, js)


def check_regular_somewhere(model: Model, samples: int = 3, seed: int = 0) -> str | None:
    """For robot files: raise ModelError when the joint-space inertia is singular at the initial state and at
    ``samples`` seeded random configurations too (a joint that moves no mass, redundant axes); return a warning
    text when it is singular at the initial state only (aligned axes at q0, like gimbal lock), else None."""
    try:
        _check_inertia_regular(model)
        return None
    except ModelError as e:
        at_q0 = str(e)
    rng = np.random.default_rng(seed)
    for _ in range(samples):
        q = model.q0 + rng.uniform(-1.0, 1.0, model.ndof)
        js = model.jstate0.copy()
        qd = np.zeros(model.ndof)
        reparameterize(model, q, qd, js)
        M = _inertia(model, q, js)
        d = np.diag(M)
        if np.all(d > 1e-12 * max(1.0, float(np.abs(d).max()))) and dependent_dof(M)[0] < 0:
            return (f"{at_q0.removesuffix(' (at the initial state)')} at the initial state q0 only (regular at other "
                    "configurations): forward dynamics (aba, minv, simulation) are ill-conditioned near q0")
    raise ModelError(at_q0)


def _per_dof(value, n: int, owner: str) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=float).reshape(-1) if value is not None else np.zeros(1)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: must be a number or a list of {n} numbers, got {value!r}") from None
    if a.size == 1:
        a = np.full(n, float(a[0]))
    v = check_vector(a, n, owner)
    if np.any(v < 0.0):
        raise ModelError(f"{owner}: must be >= 0, got {v.tolist()}")
    return v
