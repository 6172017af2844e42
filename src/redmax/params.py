"""Parameters of a simulation that the adjoint method differentiates (Sueda notes §3.5): ``rm.params.Torque("J1")``, ...

A parameter has a value vector; :meth:`Parameter.apply` puts the value into the run (model, inputs or initial
state) and :meth:`Parameter.gradient` turns the adjoint of the run into ``dP/dp = -sum_m z_m^T dg_m/dp`` (plus the
initial-state terms).  Stage residuals are ``g_m = c2 (ID(x, qd, a; f_app) - tau - f_r)`` (see
:mod:`redmax.integrators.implicit`), so:

* :class:`Torque` -- a constant torque ``scale * p`` on a joint's DOFs at every stage: ``dg_m/dp = -c2 scale``
  (the SDIRK2 stages use their own ``c2 = (a h)^2``, stage a included);
* :class:`TorqueSequence` -- one torque per time step (``(N, n_j)`` values, step k applies on ``(t_k, t_k+1]``);
* :class:`InitialQ`, :class:`InitialQd` -- the initial coordinates / rates of a joint (or of all DOFs);
* :class:`Stiffness`, :class:`Damping` -- a joint's linear spring stiffness / damping (``dg/dk = c2 (q - q_rest)``,
  ``dg/dd = c2 qd``) or the stiffness / damping of a named force that is linear in it (point springs,
  spring-dampers, cables, joint limits: ``dg/dk = -c2 J^T f(k = 1, d = 0)``);
* :class:`Mass` -- a body's mass with its rotational inertia scaled in proportion (uniform density; the centre of
  mass and the shape stay): body b's part of ID is linear in it, ``z^T dg/dm_b = (c2 / m_b) (J_b z) . w_b`` with
  ``w_b = M_b (J_b a + Jdot_b qd) - ad(phi_b)^T M_b phi_b - [0; m_b R^T g]`` (body frame).
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np

from redmax.configuration import State
from redmax.errors import SceneError

__all__ = ["Damping", "InitialQ", "InitialQd", "Mass", "Parameter", "Setup", "Stiffness", "Torque", "TorqueSequence"]


@dataclasses.dataclass
class Setup:
    """A run being prepared: model, initial state, joint torques (base inputs plus parameter torques), grid."""

    model: object
    state: State
    base_inputs: object
    t0: float
    h: float
    nsteps: int
    extra: list = dataclasses.field(default_factory=list)

    @property
    def inputs(self):
        return _SumInputs(self.base_inputs, self.extra, self.model.ndof)


class _SumInputs:
    """Joint torques ``base.torque(t) + sum_k extra_k(t)``."""

    def __init__(self, base, extra, n):
        self.base, self.extra, self.n = base, list(extra), n

    def torque(self, t):
        tau = np.array(self.base.torque(t), dtype=float) if self.base is not None else np.zeros(self.n)
        for fn in self.extra:
            tau = tau + fn(t)
        return tau


def _joint(model, name: str, what: str) -> int:
    if name not in model.joint_names:
        raise SceneError(f"{what}: unknown joint '{name}' (joints: {', '.join(model.joint_names)})")
    return model.joint_names.index(name)


def _dofs(model, joint) -> np.ndarray:
    return np.arange(int(model.idx[joint]), int(model.idx[joint + 1]))


class Parameter:
    """Base class.  ``name`` labels the parameter (default: kind and target); ``size`` is known after
    :meth:`bind`."""

    kind = "parameter"

    def __init__(self, target=None, name: str | None = None):
        self.target = target
        self.name = name or (self.kind if target is None else f"{self.kind}:{target}")
        self.size = 0

    def bind(self, model, nsteps: int) -> None:
        """Resolve names against the model; set :attr:`size`."""

    def initial(self, model) -> np.ndarray:
        """The parameter's value in the model as given (torques: zero)."""
        return np.zeros(self.size)

    def apply(self, setup: Setup, value: np.ndarray) -> None:
        """Put ``value`` into the run."""

    def gradient(self, setup: Setup, tape, adj, value) -> np.ndarray:
        """``-sum_m z_m^T dg_m/dp`` (plus initial-state terms)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.target!r})"

    def to_dict(self) -> dict:
        return {"type": self.kind, "target": self.target}


# ----------------------------------------------------------------------------------------------------------------
# torques
# ----------------------------------------------------------------------------------------------------------------


class Torque(Parameter):
    """Constant torque ``scale * p`` (p of the joint's DOF count) on ``joint`` at every stage of the run."""

    kind = "torque"

    def __init__(self, joint: str, scale: float = 1.0, name: str | None = None):
        super().__init__(joint, name)
        self.scale = float(scale)

    def bind(self, model, nsteps):
        self.joint = _joint(model, self.target, f"parameter '{self.name}'")
        self.dofs = _dofs(model, self.joint)
        self.size = self.dofs.size

    def apply(self, setup, value):
        tau = np.zeros(setup.model.ndof)
        tau[self.dofs] = self.scale * np.asarray(value, dtype=float)
        setup.extra.append(lambda t, tau=tau: tau)

    def gradient(self, setup, tape, adj, value):
        g = np.zeros(self.size)
        for rec, z in zip(tape.records, adj.z, strict=True):
            g += rec.c2 * z[self.dofs]
        return self.scale * g

    def to_dict(self):
        return {"type": self.kind, "joints": [self.target], "scale": self.scale}


class TorqueSequence(Parameter):
    """One torque per time step on ``joint``: ``scale * p[k]`` applies on ``(t_k, t_{k+1}]`` (both SDIRK2 stages of
    step k).  Values are (N, n_j), flattened step-major."""

    kind = "torque_sequence"

    def __init__(self, joint: str, scale: float = 1.0, name: str | None = None):
        super().__init__(joint, name)
        self.scale = float(scale)

    def bind(self, model, nsteps):
        self.joint = _joint(model, self.target, f"parameter '{self.name}'")
        self.dofs = _dofs(model, self.joint)
        self.nsteps = int(nsteps)
        self.size = self.nsteps * self.dofs.size

    def apply(self, setup, value):
        vals = self.scale * np.asarray(value, dtype=float).reshape(self.nsteps, self.dofs.size)
        n, dofs, t0, h, N = setup.model.ndof, self.dofs, setup.t0, setup.h, self.nsteps

        def fn(t):
            k = min(max(int(np.ceil((t - t0) / h - 1e-6)) - 1, 0), N - 1)
            tau = np.zeros(n)
            tau[dofs] = vals[k]
            return tau

        setup.extra.append(fn)

    def gradient(self, setup, tape, adj, value):
        g = np.zeros((self.nsteps, self.dofs.size))
        for rec, z in zip(tape.records, adj.z, strict=True):
            g[rec.step] += rec.c2 * z[self.dofs]
        return self.scale * g.reshape(-1)

    def to_dict(self):
        return {"type": self.kind, "joints": [self.target], "scale": self.scale}


# ----------------------------------------------------------------------------------------------------------------
# initial state
# ----------------------------------------------------------------------------------------------------------------


class _Initial(Parameter):
    field = "q"

    def __init__(self, joint: str | None = None, name: str | None = None):
        super().__init__(joint, name)

    def bind(self, model, nsteps):
        if self.target is None:
            self.dofs = np.arange(model.ndof)
        else:
            self.dofs = _dofs(model, _joint(model, self.target, f"parameter '{self.name}'"))
        self.size = self.dofs.size

    def initial(self, model):
        return np.array(getattr(model.initial_state(), self.field)[self.dofs], dtype=float)

    def apply(self, setup, value):
        v = np.array(getattr(setup.state, self.field), dtype=float)
        v[self.dofs] = value
        setattr(setup.state, self.field, v)

    def gradient(self, setup, tape, adj, value):
        return np.array((adj.dq0 if self.field == "q" else adj.dqd0)[self.dofs])


class InitialQ(_Initial):
    """The initial coordinates of ``joint`` (None: all DOFs).  Joint-spring rest positions are model fields and do
    not move with it."""

    kind = "initial_q"
    field = "q"


class InitialQd(_Initial):
    """The initial rates of ``joint`` (None: all DOFs)."""

    kind = "initial_qd"
    field = "qd"


# ----------------------------------------------------------------------------------------------------------------
# physical parameters
# ----------------------------------------------------------------------------------------------------------------

_FORCE_ATTRS = {"PointSpring": ("ks", "kd"), "SpringDamper": ("k", "d"), "Cable": ("k", "d"), "JointLimit": ("k", "d")}


def _force_attrs(force):
    for cls in type(force).__mro__:
        if cls.__name__ in _FORCE_ATTRS:
            return _FORCE_ATTRS[cls.__name__]
    return None


def _kin_at(model, rec):
    from redmax.kinematics import kinematics

    return kinematics(model, rec.x, rec.qd, rec.jstate)


class _Coefficient(Parameter):
    """Stiffness or damping of a joint (its linear spring / damper, every DOF) or of a named force."""

    index = 0  # 0: stiffness, 1: damping
    joint_field = "joint_stiffness"

    def bind(self, model, nsteps):
        names = [f.name for f in model.forces]
        if self.target in model.joint_names:
            self.joint = model.joint_names.index(self.target)
            self.dofs = _dofs(model, self.joint)
            self.force = None
        elif self.target in names:
            self.joint = None
            self.force = names.index(self.target)
            f = model.forces[self.force]
            if _force_attrs(f) is None:
                raise SceneError(f"parameter '{self.name}': force '{self.target}' ({type(f).__name__}) has no "
                                 "stiffness/damping parameter the adjoint supports (point springs, spring-dampers, "
                                 "cables, joint limits)")
        else:
            raise SceneError(f"parameter '{self.name}': '{self.target}' is neither a joint nor a force of the model")
        self.size = 1

    def initial(self, model):
        if self.force is None:
            return np.array([float(getattr(model, self.joint_field)[self.dofs[0]])])
        f = model.forces[self.force]
        return np.array([float(getattr(f, _force_attrs(f)[self.index]))])

    def apply(self, setup, value):
        m = setup.model
        v = float(np.asarray(value).reshape(-1)[0])
        if self.force is None:
            arr = np.array(getattr(m, self.joint_field), dtype=float)
            arr[self.dofs] = v
            arr.setflags(write=False)
            setup.model = dataclasses.replace(m, **{self.joint_field: arr})
            return
        forces = list(m.forces)
        f = copy.copy(forces[self.force])
        setattr(f, _force_attrs(f)[self.index], v)
        forces[self.force] = f
        setup.model = dataclasses.replace(m, forces=tuple(forces))

    def _unit(self, model):
        f = copy.copy(model.forces[self.force])
        k, d = _force_attrs(f)
        setattr(f, k, 1.0 if self.index == 0 else 0.0)
        setattr(f, d, 1.0 if self.index == 1 else 0.0)
        return f

    def gradient(self, setup, tape, adj, value):
        from redmax.kinematics import JT_product

        m = setup.model
        g = 0.0
        if self.force is None:
            for rec, z in zip(tape.records, adj.z, strict=True):
                d = self.dofs
                v = rec.x[d] - m.q_rest[d] if self.index == 0 else rec.qd[d]
                g -= rec.c2 * float(z[d] @ v)
            return np.array([g])
        unit = self._unit(m)
        for rec, z in zip(tape.records, adj.z, strict=True):
            kin = _kin_at(m, rec)
            out = unit.evaluate(m, kin, rec.t, False, False)
            if out.space == "maximal":
                from redmax.spatial import Ad

                fb = np.array([Ad(kin.E_wb[i]).T @ out.f[i] for i in range(m.nb)])
                tau = JT_product(kin, m, fb)
            else:
                tau = out.f
            g += rec.c2 * float(z @ tau)
        return np.array([g])


class Stiffness(_Coefficient):
    """Stiffness of a joint's linear spring (every DOF of the joint) or of a named force (point spring ``ks``,
    spring-damper/cable ``k``, joint limit ``k``)."""

    kind = "stiffness"
    index = 0
    joint_field = "joint_stiffness"


class Damping(_Coefficient):
    """Damping of a joint (every DOF) or of a named force (``kd`` / ``d``)."""

    kind = "damping"
    index = 1
    joint_field = "joint_damping"


class Mass(Parameter):
    """Mass of ``body``; its rotational inertia scales in proportion (uniform density)."""

    kind = "mass"

    def bind(self, model, nsteps):
        if self.target not in model.body_names:
            raise SceneError(f"parameter '{self.name}': unknown body '{self.target}'")
        self.body = model.body_names.index(self.target)
        self.size = 1

    def initial(self, model):
        return np.array([float(model.mass[self.body])])

    def apply(self, setup, value):
        from redmax.model.layout import pack

        m = setup.model
        v = float(np.asarray(value).reshape(-1)[0])
        if not v > 0:
            raise SceneError(f"parameter '{self.name}': mass must be positive, got {v}")
        s = v / float(m.mass[self.body])
        t = m.tree
        arrs = {}
        for key in ("mass", "I_body", "M_body", "M_joint"):
            a = np.array(getattr(t, key), dtype=float)
            a[self.body] *= s
            a.setflags(write=False)
            arrs[key] = a
        tree = dataclasses.replace(t, **arrs)
        tree = dataclasses.replace(tree, packed=pack(tree, m.gravity, m.jstate0))
        setup.model = dataclasses.replace(m, tree=tree)

    def gradient(self, setup, tape, adj, value):
        from redmax.kinematics import J_product, Jdot_product
        from redmax.spatial import ad

        m = setup.model
        b = self.body
        Mb = m.M_body[b]
        g = 0.0
        for rec, z in zip(tape.records, adj.z, strict=True):
            kin = _kin_at(m, rec)
            acc = J_product(kin, m, rec.a)[b] + Jdot_product(kin, m, rec.qd)[b]
            phi = kin.phi[b]
            w = Mb * acc - ad(phi).T @ (Mb * phi)
            w[3:] -= m.mass[b] * (kin.E_wb[b, :3, :3].T @ m.gravity)
            g -= rec.c2 / m.mass[b] * float(J_product(kin, m, z)[b] @ w)
        return np.array([g])
