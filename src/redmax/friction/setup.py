"""What friction acts where in a model: the contact sets of its joints and loop closures and its floors with
their coefficients, gathered once per run (:func:`friction_setup`).  Frames: every contact set is stored in the
joint frame of the body that carries it (the frames of the kinematics workspace ``W``)."""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from redmax.errors import SimulationError
from redmax.friction.coefficients import joint_mu, world_mu
from redmax.friction.geometry import ContactSet, Cylinder, contact_set, rotation_z_to

__all__ = ["FloorFriction", "FrictionSetup", "JointContacts", "LoopContacts", "friction_setup", "has_friction"]


@dataclass(frozen=True)
class JointContacts:
    """Joint ``joint`` (its body; the child) with contacts ``cs`` in its joint frame; ``parent`` -1 for a root."""

    joint: int
    parent: int
    cs: ContactSet


@dataclass(frozen=True)
class LoopContacts:
    """Loop closure number ``k`` of the constraint program between bodies A (child role) and B (parent role, -1:
    the world), contacts ``cs`` in A's joint frame."""

    k: int
    A: int
    B: int
    cs: ContactSet


@dataclass(frozen=True)
class FloorFriction:
    """Floor constraint number ``k``: body ``body`` touching at ``points`` (rows, 3) of its joint frame (a sphere's
    lowest point is set per step: ``radius`` > 0), floor normal ``n`` and tangents ``t`` (2, 3)."""

    k: int
    body: int
    points: np.ndarray
    radius: float
    n: np.ndarray
    t: np.ndarray


@dataclass(frozen=True)
class FrictionSetup:
    joints: tuple
    loops: tuple
    floors: tuple
    mu_joint: float
    mu_world: float

    @property
    def active(self) -> bool:
        return bool(self.joints or self.loops or self.floors)


def _floor_tangents(n) -> np.ndarray:
    x = np.array([1.0, 0.0, 0.0])
    if abs(float(n @ x)) > 0.9:
        x = np.array([0.0, 1.0, 0.0])
    x = x - (n @ x) * n
    x /= np.linalg.norm(x)
    return np.array([x, np.cross(n, x)])


def has_friction(model) -> bool:
    """True when some joint or loop of ``model`` has a contact, or it has floors and a friction table."""
    from redmax.constraints.closures import Loop
    from redmax.constraints.unilateral import Floor

    hit = _HAS_FRICTION.get(model)
    if hit is not None:
        return hit
    m = getattr(model, "coordinate_model", model)
    out = bool(any(c is not None for c in m.contacts)
               or any(isinstance(c, Loop) and c.contact is not None for c in m.constraints)
               or (world_mu(m) is not None and any(isinstance(c, Floor) for c in m.constraints)))
    _HAS_FRICTION[model] = out
    return out


_HAS_FRICTION: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> has_friction (models are immutable)


def friction_setup(model) -> FrictionSetup:
    """The :class:`FrictionSetup` of a (coordinate) model."""
    from redmax.constraints.closures import Loop
    from redmax.constraints.unilateral import Floor

    joints = []
    for i, geo in enumerate(model.contacts):
        if geo is None:
            continue
        j = model.joints[i]
        axis = getattr(j, "axis", None)
        cs = contact_set(geo, j.kind, None if axis is None else np.asarray(axis, float), f"joint "
                         f"'{model.joint_names[i]}'")
        joints.append(JointContacts(i, int(model.parent[i]), cs))
    loops, floors = [], []
    mu2 = world_mu(model)
    for k, c in enumerate(model.constraints):
        if isinstance(c, Loop) and c.contact is not None:
            if c.A < 0:
                raise SimulationError(f"{model.name}: loop '{c.name}': a loop with a contact needs a body as its "
                                      "first point")
            axis = c.aj if c.dof < 0 else np.asarray(model.joints[c.A].axis, float)  # (A's joint frame)
            cyl: Cylinder = c.contact
            # the cage is built in A's body frame (spec §2.5: its first contact on the body's own axes about the
            # hinge), centred at the loop point, then carried into A's joint frame
            R_jb = np.asarray(model.E_jb[c.A, :3, :3], float)
            base = contact_set(cyl, "revolute", R_jb.T @ axis).transformed(R_jb, np.asarray(c.xa, float))
            loops.append(LoopContacts(k, int(c.A), int(c.B), base))
        elif isinstance(c, Floor) and mu2 is not None:
            pts = c.cj if c.corners is not None else np.asarray(c.centre, float)[None, :]
            floors.append(FloorFriction(k, int(c.b), np.asarray(pts, float), 0.0 if c.radius is None else c.radius,
                                        np.asarray(c.n, float), _floor_tangents(np.asarray(c.n, float))))
    return FrictionSetup(tuple(joints), tuple(loops), tuple(floors), joint_mu(model),
                         0.0 if mu2 is None else mu2)


_ = rotation_z_to  # (re-exported for the loop axis frames of scene builders)
