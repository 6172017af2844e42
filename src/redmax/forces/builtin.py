"""Applied forces every model has from its own fields: body damping (maximal), joint springs and joint damping
(reduced).

* Body damping (reference ``Body.computeForceDamping``): ``-d phi`` on the body twist, ``Dm = d I6`` (body
  frame); implicit only.
* Joint spring (notes §2.5): ``-k (q - q_rest)``, ``Kr = -diag(k)``; energy ``1/2 k (q - q_rest)^2``.
* Joint damping (notes Eq. 2.81): ``-d qd``, ``Dr = diag(d)``; implicit only.

Gravity and the Coriolis/gyroscopic terms are not forces: they are part of the equations of motion.  The classes
:class:`Gravity` and :class:`Coriolis` remain only so that wave-one code that put them in a force list keeps
working; they apply nothing and carry the old options (gravity stiffness, Coriolis damping), which the
integrators read as ``gravity="implicit"`` / ``coriolis="implicit"`` with a DeprecationWarning.
"""

from __future__ import annotations

import warnings
import weakref

import numpy as np

from redmax._jit import njit
from redmax.errors import ModelError
from redmax.forces._compiled import F_BODY_DAMPING, F_GRAVITY_K, F_JOINT_DAMPING, F_JOINT_SPRING, _com
from redmax.forces._points import MODE_FULL
from redmax.forces.base import Force

__all__ = ["BodyDamping", "Coriolis", "Gravity", "GravityStiffness", "JointDamping", "JointSpring", "JointTorque",
           "coriolis_wrenches", "model_forces", "split_legacy"]


def coriolis_wrenches(M_body, phi):
    """``ad(phi_i)^T M_i phi_i`` for all bodies: (nb, 6) from diagonal inertias M_body (nb, 6), twists (nb, 6).

    With ``M phi = [n; g]``: ``[-(w x n) - (v x g); -(w x g)]`` (notes Eq. 1.23).
    """
    Mphi = M_body * phi
    w, v = phi[:, :3], phi[:, 3:]
    n, g = Mphi[:, :3], Mphi[:, 3:]
    out = np.empty_like(Mphi)
    out[:, :3] = -np.cross(w, n) - np.cross(v, g)
    out[:, 3:] = -np.cross(w, g)
    return out


class _Legacy(Force):
    """Marker of a wave-one force list entry for a term that now belongs to the dynamics."""

    def program(self, model):
        return None


class Gravity(_Legacy):
    """Deprecated marker: gravity is part of the equations of motion.  ``Gravity(stiffness=True)`` in a force
    list means ``gravity="implicit"``."""

    name = "gravity"

    def __init__(self, stiffness: bool = False):
        self.stiffness = bool(stiffness)


class Coriolis(_Legacy):
    """Deprecated marker: the quadratic velocity terms are part of the equations of motion.
    ``Coriolis(damping=True)`` in a force list means ``coriolis="implicit"``."""

    name = "coriolis"

    def __init__(self, damping: bool = False):
        self.damping = bool(damping)


class JointTorque(Force):
    """Removed: joint torques are inputs (``redmax.model.Inputs``, ``simulate(inputs=...)``), not forces."""

    def __init__(self, *args, **kwargs):
        raise ModelError("JointTorque is no longer a force: joint torques are inputs; set them with "
                         "ModelBuilder.add_body(torque=...) / set_torque, or pass simulate(..., inputs=...)")


def split_legacy(forces) -> tuple[list, dict]:
    """Remove the deprecated Gravity/Coriolis markers from a force list; returns (forces, options) where options
    may hold ``gravity="implicit"`` / ``coriolis="implicit"``.  Warns when a marker is found."""
    out, opts = [], {}
    for f in forces:
        if isinstance(f, _Legacy):
            warnings.warn(f"{type(f).__name__} in a force list is deprecated: gravity and the Coriolis terms belong "
                          "to the dynamics and are always applied; use gravity='implicit' / coriolis='implicit' for "
                          "their linearisation", DeprecationWarning, stacklevel=3)
            if isinstance(f, Gravity) and f.stiffness:
                opts["gravity"] = "implicit"
            if isinstance(f, Coriolis) and f.damping:
                opts["coriolis"] = "implicit"
            continue
        out.append(f)
    return out, opts


@njit(cache=True, inline="always")
def _body_block(bpair, bK, bD, nblk, i):
    """Block nblk is body i's own (i, i) block, its K and D zeroed."""
    bpair[nblk, 0] = i
    bpair[nblk, 1] = i
    for r in range(6):
        for s in range(6):
            bK[nblk, r, s] = 0.0
            bD[nblk, r, s] = 0.0


@njit(cache=True, inline="always")  # compiled into the step's force loop
def kernel_body_damping(fi, ff, io, fo, mode, bucket, Rw, pw, Vw, q, qd, want_blocks, fw, bpair, bK, bD, fr, rK,
                        rD, energy, scratch, ppair, prec, pairs_on, nblk, npair):
    """Viscous damping of each body's twist at its centre of mass (d (nb), centres (3 nb) in the joint frames)."""
    nb = Vw.shape[0]
    for i in range(nb):
        d = ff[fo + i]
        if d == 0.0:
            continue
        c0, c1, c2 = _com(Rw, pw, ff, fo + nb, i)
        # D_w = d Ad^-T Ad^-1 = d [[1 - [c][c], [c]], [-[c], 1]] for the body frame at c (rotation-free)
        Dm = scratch[0:36].reshape((6, 6))
        for r in range(36):
            scratch[r] = 0.0
        cc = c0 * c0 + c1 * c1 + c2 * c2
        cv = (c0, c1, c2)
        for r in range(3):
            for s in range(3):
                Dm[r, s] = (cc if r == s else 0.0) - cv[r] * cv[s]
            Dm[r, r] += 1.0
            Dm[3 + r, 3 + r] = 1.0
        Dm[0, 4] = -c2
        Dm[0, 5] = c1
        Dm[1, 3] = c2
        Dm[1, 5] = -c0
        Dm[2, 3] = -c1
        Dm[2, 4] = c0
        for r in range(3):
            for s in range(3):
                Dm[3 + r, s] = Dm[s, 3 + r]
        V = Vw[i]
        for r in range(6):
            acc = 0.0 * V[0]
            for s in range(6):
                acc += Dm[r, s] * V[s]
            fw[i, r] -= d * acc
        if want_blocks:
            _body_block(bpair, bK, bD, nblk, i)
            for r in range(6):
                for s in range(6):
                    bD[nblk, r, s] = d * Dm[r, s]
            nblk += 1
    return nblk, npair


@njit(cache=True, inline="always")  # compiled into the step's force loop
def kernel_gravity_stiffness(fi, ff, io, fo, mode, bucket, Rw, pw, Vw, q, qd, want_blocks, fw, bpair, bK, bD, fr, rK,
                             rD, energy, scratch, ppair, prec, pairs_on, nblk, npair):
    """The stiffness of gravity's wrenches (notes Eq. 1.35): ``K_w = [[[c][F], 0], [[F], 0]]`` per body (masses
    (nb), centres (3 nb) in the joint frames, gravity (3)); the wrenches themselves are the equations' own."""
    nb = Vw.shape[0]
    g0 = ff[fo + 4 * nb]
    g1 = ff[fo + 4 * nb + 1]
    g2 = ff[fo + 4 * nb + 2]
    if want_blocks:
        for i in range(nb):
            m = ff[fo + i]
            c0, c1, c2 = _com(Rw, pw, ff, fo + nb, i)
            F = (m * g0, m * g1, m * g2)
            Fx = scratch[0:9].reshape((3, 3))
            for r in range(9):
                scratch[r] = 0.0
            Fx[0, 1] = -F[2]
            Fx[0, 2] = F[1]
            Fx[1, 0] = F[2]
            Fx[1, 2] = -F[0]
            Fx[2, 0] = -F[1]
            Fx[2, 1] = F[0]
            _body_block(bpair, bK, bD, nblk, i)
            for s in range(3):
                bK[nblk, 0, s] = c1 * Fx[2, s] - c2 * Fx[1, s]
                bK[nblk, 1, s] = c2 * Fx[0, s] - c0 * Fx[2, s]
                bK[nblk, 2, s] = c0 * Fx[1, s] - c1 * Fx[0, s]
                for r in range(3):
                    bK[nblk, 3 + r, s] = Fx[r, s]
            nblk += 1
    return nblk, npair


@njit(cache=True, inline="always")  # compiled into the step's force loop
def kernel_joint_spring(fi, ff, io, fo, mode, bucket, Rw, pw, Vw, q, qd, want_blocks, fw, bpair, bK, bD, fr, rK,
                        rD, energy, scratch, ppair, prec, pairs_on, nblk, npair):
    """``-k (q - rest)`` per coordinate (k (n), rest (n)); ``K = -diag(k)``."""
    n = q.shape[0]
    for a in range(n):
        k = ff[fo + a]
        if k == 0.0:
            continue
        ea = q[a] - ff[fo + n + a]
        fr[a] -= k * ea
        if want_blocks:
            rK[a] -= k
        if bucket >= 0:
            energy[bucket] += 0.5 * k * (ea * ea).real
    return nblk, npair


@njit(cache=True, inline="always")  # compiled into the step's force loop
def kernel_joint_damping(fi, ff, io, fo, mode, bucket, Rw, pw, Vw, q, qd, want_blocks, fw, bpair, bK, bD, fr, rK,
                         rD, energy, scratch, ppair, prec, pairs_on, nblk, npair):
    """``-d qd`` per coordinate (d (n)); ``D = diag(d)``."""
    n = q.shape[0]
    for a in range(n):
        d = ff[fo + a]
        if d == 0.0:
            continue
        fr[a] -= d * qd[a]
        if want_blocks:
            rD[a] += d
    return nblk, npair


class BodyDamping(Force):
    """Viscous damping on body twists: wrench ``-d_i phi_i``, ``Dm = blockdiag(d_i I6)`` (body frame)."""

    space = "maximal"
    implicit_only = True
    name = "body_damping"
    code = F_BODY_DAMPING
    kernel = kernel_body_damping
    symmetric_blocks = True

    def program(self, model):
        ff = np.concatenate([model.body_damping, model.E_jb[:, :3, 3].reshape(-1)])
        return self.code, MODE_FULL, np.zeros(0, dtype=np.int64), ff, (), model.nb


class JointSpring(Force):
    """Linear joint springs ``-k (q - q_rest)``; ``Kr = -diag(k)``."""

    space = "reduced"
    energy_key = "joint_springs"
    name = "joint_spring"
    code = F_JOINT_SPRING
    kernel = kernel_joint_spring

    def program(self, model):
        ff = np.concatenate([model.joint_stiffness, model.q_rest])
        return self.code, MODE_FULL, np.zeros(0, dtype=np.int64), ff, (), 0


class JointDamping(Force):
    """Linear joint damping ``-d qd``; ``Dr = diag(d)``."""

    space = "reduced"
    implicit_only = True
    name = "joint_damping"
    code = F_JOINT_DAMPING
    kernel = kernel_joint_damping

    def program(self, model):
        return self.code, MODE_FULL, np.zeros(0, dtype=np.int64), np.asarray(model.joint_damping, float), (), 0


class GravityStiffness(Force):
    """Gravity's stiffness blocks alone (what ``gravity="implicit"`` adds to the step matrix; no force: the
    gravity wrenches belong to the equations of motion)."""

    space = "maximal"
    name = "gravity_stiffness"
    code = F_GRAVITY_K
    kernel = kernel_gravity_stiffness

    def program(self, model):
        ff = np.concatenate([model.mass, np.ascontiguousarray(model.E_jb[:, :3, 3]).reshape(-1), model.gravity])
        return self.code, MODE_FULL, np.zeros(0, dtype=np.int64), ff, (), model.nb


def model_forces(model, gravity_stiffness: bool = False, coriolis_damping: bool = False) -> list[Force]:
    """The applied forces of ``model``: its model-field forces (zero-valued ones left out) followed by the forces
    added with ``ModelBuilder.add_force``.  Gravity and the Coriolis terms are not in the list: they are part
    of the dynamics.

    Args:
        gravity_stiffness, coriolis_damping: deprecated; use ``simulate(..., gravity="implicit",
            coriolis="implicit")``.  When set, the list carries the corresponding markers.
    """
    if not (gravity_stiffness or coriolis_damping):
        cached = _MODEL_FORCES.get(model)
        if cached is None:
            cached = _MODEL_FORCES[model] = tuple(_model_forces(model, []))
        return list(cached)
    out: list[Force] = []
    if gravity_stiffness or coriolis_damping:
        warnings.warn("model_forces(gravity_stiffness=, coriolis_damping=) is deprecated: pass gravity='implicit' / "
                      "coriolis='implicit' to simulate", DeprecationWarning, stacklevel=2)
        if gravity_stiffness:
            out.append(Gravity(True))
        if coriolis_damping:
            out.append(Coriolis(True))
    return _model_forces(model, out)


_MODEL_FORCES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> its forces (models are immutable)


def _model_forces(model, out: list) -> list:
    """``out`` followed by the model-field forces (zero-valued ones left out) and the forces added to it."""
    if np.any(model.body_damping > 0):
        out.append(BodyDamping())
    if np.any(model.joint_stiffness > 0):
        out.append(JointSpring())
    if np.any(model.joint_damping > 0):
        out.append(JointDamping())
    out.extend(model.forces)
    return out
