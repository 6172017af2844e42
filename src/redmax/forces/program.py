"""Force programs: a model's applied forces compiled to flat arrays for :func:`redmax.forces.registry.eval_forces`.

A force with a compiled kernel reports ``program(model) -> (code, mode, ints, floats)``; the model-field forces
(body damping, joint springs, joint damping) and the gravity-stiffness option are added here.  The program also
carries the capacities the step needs (number of 6x6 blocks, number of path increments of the assembly).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from redmax.forces._compiled import HDR, scratch_size
from redmax.forces._points import MODE_FULL
from redmax.model import layout

__all__ = ["BUCKETS", "ENERGY_KEYS", "ForceProgram", "build_program", "joint_frame_point"]

BUCKETS = {"gravity": 1, "joint_springs": 2, "springs": 3, "applied": 4, "deformable": 5}
ENERGY_KEYS = ("kinetic", "gravity", "joint_springs", "springs", "applied", "deformable")  # NE buckets


@dataclass(frozen=True, eq=False)
class ForceProgram:
    """Compiled forces of a model (see :mod:`redmax.forces._compiled`).

    Attributes:
        hdr: (nf, 8) int64 headers, read-only; writeable when there is no force (nf = 0), so that the compiled
            loops leave every force kernel out (``eval_forces_gated``).  fi: int64 parameters.  ff: float64
            parameters.
        nblocks: capacity of the block buffers.  nincs: capacity of the assembly's path increments.
        symmetric: every stiffness and damping block comes with its transposed partner, so the step matrix is
            symmetric.  names: force names (for messages).  nscratch: floats of scratch ``eval_forces`` needs.
        npairs: capacity of the pair-law records (two-point springs in symmetric or explicit mode).
        coupling: ``(force name, body a, body b)`` of the first force that can join two moving bodies (bodies with
            a DOF on their path to the root), or ``()``: then every block of the step's B belongs to one body and
            the articulated-body recursion solves the step exactly (``solver="recursive"``).
    """

    hdr: np.ndarray
    fi: np.ndarray
    ff: np.ndarray
    nblocks: int
    nincs: int
    symmetric: bool
    names: tuple
    nscratch: int
    npairs: int = 0
    coupling: tuple = ()


def joint_frame_point(model, body: int, r) -> np.ndarray:
    """A point given in body ``body``'s frame, expressed in its joint frame (``E_jb r``); world points as is."""
    r = np.asarray(r, dtype=float)
    if body < 0:
        return r.copy()
    E = model.E_jb[body]
    return E[:3, :3] @ r + E[:3, 3]


def _path_dofs(model, a: int, c: int) -> int:
    n = 0
    while a != c and a >= 0:
        n += int(model.idx[a + 1] - model.idx[a])
        a = int(model.parent[a])
    return n


def _lca(model, a: int, b: int) -> int:
    anc = set()
    x = a
    while x >= 0:
        anc.add(x)
        x = int(model.parent[x])
    y = b
    while y >= 0 and y not in anc:
        y = int(model.parent[y])
    return y


def _pair_increments(model, bodies) -> int:
    """Upper bound of path increments for all body pairs among ``bodies`` (world points excluded)."""
    bs = sorted({int(b) for b in bodies if b >= 0})
    n = 0
    for a in bs:
        for b in bs:
            if a != b:
                c = _lca(model, a, b)
                n += _path_dofs(model, a, c) + _path_dofs(model, b, c)
    return n


def _com_joint(model) -> np.ndarray:
    """Centres of mass in the joint frames (nb, 3)."""
    return np.ascontiguousarray(model.E_jb[:, :3, 3])


def build_program(model, forces, gravity_implicit: bool = False, symmetrize: bool = False) -> ForceProgram | None:
    """The program of ``forces`` (Force objects; the model-field forces are among them when the caller passes
    :func:`redmax.forces.model_forces`), or None when a force has no compiled kernel.

    Args:
        gravity_implicit: add gravity's stiffness blocks (notes Eq. 1.35), off in the reference.
        symmetrize: use ``(K + K^T)/2`` for every stiffness (all point forces in "symmetric" mode).
    """
    from redmax.forces._points import MODE_SYMMETRIC

    rows, ints, flts, names = [], [], [], []
    npmax = 1
    npairs = 0
    nblocks = 0
    nincs = 0
    symmetric = True
    coupling = ()
    moving = model.moving

    def push(code, mode, fi, ff, bucket, implicit_only, name):
        rows.append([code, mode, sum(len(x) for x in ints), len(fi), sum(len(x) for x in flts), len(ff), bucket,
                     int(implicit_only)])
        ints.append(np.asarray(fi, dtype=np.int64).reshape(-1))
        flts.append(np.asarray(ff, dtype=float).reshape(-1))
        names.append(name)

    for f in forces:
        prog = f.program(model)
        if prog is None:
            return None
        code, mode, fi, ff, cap_bodies, cap_blocks = prog
        if symmetrize and mode == MODE_FULL:
            mode = MODE_SYMMETRIC
        if f.space == "maximal" and mode == MODE_FULL and cap_blocks and not f.symmetric_blocks:
            symmetric = False
        push(code, mode, fi, ff, BUCKETS.get(f.energy_key, -1), f.implicit_only, f.name)
        ps = getattr(f, "_set", None)
        if ps is not None:
            npmax = max(npmax, ps.n)
            if ps.n == 2 and mode != MODE_FULL and f.pair_law:
                npairs += 1
        nblocks += cap_blocks
        nincs += _pair_increments(model, cap_bodies)
        joined = sorted({int(b) for b in np.asarray(cap_bodies, dtype=np.int64).reshape(-1) if b >= 0 and moving[b]})
        if not coupling and len(joined) > 1:
            coupling = (f.name, model.body_names[joined[0]], model.body_names[joined[1]])
    if gravity_implicit:
        from redmax.forces.builtin import GravityStiffness

        gk = GravityStiffness()
        code, mode, fi, ff, _, _ = gk.program(model)
        push(code, mode, fi, ff, -1, False, gk.name)
        nblocks += model.nb
        symmetric = symmetric and symmetrize
    hdr = np.array(rows, dtype=np.int64).reshape(-1, HDR)
    hdr.setflags(write=not rows and layout.LEAN_KERNELS)  # the type says "no forces" (see lean_gate)
    fi = np.concatenate(ints) if ints else np.zeros(0, dtype=np.int64)
    fi.setflags(write=False)  # as the Simulator's slice of its packed table: every caller one eval_forces type
    ff = np.concatenate(flts) if flts else np.zeros(0)
    return ForceProgram(hdr, fi, ff, nblocks, 2 * nincs, symmetric, tuple(names), scratch_size(npmax), npairs,
                        coupling)
