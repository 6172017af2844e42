"""Force programs: a model's applied forces compiled to flat arrays for :func:`redmax.forces._compiled.eval_forces`.

A force with a compiled kernel reports ``program(model) -> (code, mode, ints, floats)``; the model-field forces
(body damping, joint springs, joint damping) and the gravity-stiffness option are added here.  The program also
carries the capacities the step needs (number of 6x6 blocks, number of path increments of the assembly).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from redmax.forces._compiled import F_BODY_DAMPING, F_GRAVITY_K, HDR, eval_forces
from redmax.forces._points import MODE_FULL, MODE_NONE, map_point_law
from redmax.forces.base import BlockSparse, DofBlocks, ForceOutput

__all__ = ["BUCKETS", "ForceProgram", "build_program", "evaluate_compiled", "joint_frame_point", "world_arrays"]

BUCKETS = {"gravity": 1, "joint_springs": 2, "springs": 3, "applied": 4}
ENERGY_KEYS = ("kinetic", "gravity", "joint_springs", "springs", "applied")


@dataclass(frozen=True, eq=False)
class ForceProgram:
    """Compiled forces of a model (see :mod:`redmax.forces._compiled`).

    Attributes:
        hdr: (nf, 8) int64 headers.  fi: int64 parameters.  ff: float64 parameters.
        nblocks: capacity of the block buffers.  nincs: capacity of the assembly's path increments.
        symmetric: every stiffness and damping block comes with its transposed partner, so the step matrix is
            symmetric.  names: force names (for messages).
    """

    hdr: np.ndarray
    fi: np.ndarray
    ff: np.ndarray
    nblocks: int
    nincs: int
    symmetric: bool
    names: tuple


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
    nblocks = 0
    nincs = 0
    symmetric = True

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
        if f.space == "maximal" and mode == MODE_FULL and cap_blocks and code not in (F_BODY_DAMPING,):
            symmetric = False
        push(code, mode, fi, ff, BUCKETS.get(f.energy_key, -1), f.implicit_only, f.name)
        nblocks += cap_blocks
        nincs += _pair_increments(model, cap_bodies)
    if gravity_implicit:
        push(F_GRAVITY_K, MODE_FULL, [], np.concatenate([model.mass, _com_joint(model).reshape(-1), model.gravity]),
             -1, False, "gravity_stiffness")
        nblocks += model.nb
        symmetric = symmetric and symmetrize
    hdr = np.array(rows, dtype=np.int64).reshape(-1, HDR)
    fi = np.concatenate(ints) if ints else np.zeros(0, dtype=np.int64)
    ff = np.concatenate(flts) if flts else np.zeros(0)
    return ForceProgram(hdr, fi, ff, nblocks, 2 * nincs, symmetric, tuple(names))


def world_arrays(model, kin):
    """(Rw (nb, 9), pw (nb, 3), Vw (nb, 6)) of a Kinematics: world joint frames ``E_wb E_jb^-1`` and world twists
    ``Ad(E_wb) phi``, both from the body frames and body twists (so that variations of those propagate)."""
    from redmax.spatial import Ad, inv_se3

    nb = model.nb
    dt = np.result_type(kin.E_wb, kin.phi)
    E_wj = np.array([kin.E_wb[i] @ inv_se3(model.E_jb[i]) for i in range(nb)], dtype=dt).reshape(nb, 4, 4)
    Vw = np.array([Ad(kin.E_wb[i]) @ kin.phi[i] for i in range(nb)], dtype=dt).reshape(nb, 6)
    Rw = np.ascontiguousarray(E_wj[:, :3, :3]).reshape(nb, 9)
    pw = np.ascontiguousarray(E_wj[:, :3, 3])
    return Rw, pw, Vw


def evaluate_compiled(force, prog, model, kin, want_K: bool = True, want_D: bool = True) -> ForceOutput:
    """Evaluate one compiled force at ``kin`` (the Python face of the compiled kernels)."""
    code, mode, fi, ff, _, cap_blocks = prog
    hdr = np.array([[code, mode, 0, len(fi), 0, len(ff), 0, int(force.implicit_only)]], dtype=np.int64)
    fi = np.asarray(fi, dtype=np.int64)
    ff = np.asarray(ff, dtype=float)
    Rw, pw, Vw = world_arrays(model, kin)
    q, qd = kin.q, kin.qd
    dt = np.result_type(q, qd, float)
    nb, n = model.nb, model.ndof

    def run(cK, cD, blocks):
        fw = np.zeros((nb, 6), dtype=dt)
        fw_rhs = np.zeros((nb, 6), dtype=dt)
        bpair = np.zeros((max(cap_blocks, 1), 2), dtype=np.int64)
        bB = np.zeros((max(cap_blocks, 1), 6, 6), dtype=dt)
        fr = np.zeros(n, dtype=dt)
        fr_rhs = np.zeros(n, dtype=dt)
        rdiag = np.zeros(n, dtype=dt)
        energy = np.zeros(5)
        k = eval_forces(hdr, fi, ff, Rw.astype(dt), pw.astype(dt), Vw.astype(dt), q.astype(dt), qd.astype(dt),
                        cK, cD, blocks, fw, fw_rhs, bpair, bB, fr, fr_rhs, rdiag, energy)
        keep = np.flatnonzero(np.any(bB[:k] != 0, axis=(1, 2)))  # drop identically zero blocks (e.g. K of a damper)
        return fw, fw_rhs, BlockSparse(nb, bpair[keep].copy(), bB[keep].copy()), fr, fr_rhs, rdiag, energy[0]

    fw, fw_rhs, BK, fr, fr_rhs, rK, energy = run(1.0, 0.0, want_K)
    K = D = None
    if want_D:
        _, _, BD, _, _, rD, _ = run(0.0, 1.0, True)
    if force.space == "maximal":
        if want_K:
            K = BK if mode != MODE_NONE else BlockSparse.empty(nb, dt)
        if want_D:
            D = BD
        return ForceOutput("maximal", fw, K, D, fw_rhs, energy)
    if want_K:
        K = DofBlocks(n)
        K.add_diagonal(rK)
    if want_D:
        D = DofBlocks(n)
        D.add_diagonal(rD)
    return ForceOutput("reduced", fr, K, D, fr_rhs, energy)


def evaluate_point_law(force, model, kin, want_K: bool = True, want_D: bool = True) -> ForceOutput:
    """A PointForce with a Python ``law``: world points, the law, then the compiled mapping to wrenches and blocks."""
    ps = force.point_set
    x, xd = ps.world(kin)
    F, dFdx, dFdxd = force.law(x, xd, True)
    dt = np.result_type(x, xd, F, float)
    nb = model.nb
    npt = ps.n
    mode = force.mode
    out = {}
    for key, (cK, cD) in (("K", (1.0, 0.0)), ("D", (0.0, 1.0))):
        fw = np.zeros((nb, 6), dtype=dt)
        fw_rhs = np.zeros((nb, 6), dtype=dt)
        bpair = np.zeros((npt * npt, 2), dtype=np.int64)
        bB = np.zeros((npt * npt, 6, 6), dtype=dt)
        k = map_point_law(ps.bodies, x.astype(dt), xd.astype(dt), F.astype(dt), dFdx.astype(dt), dFdxd.astype(dt),
                          False, mode, cK, cD, fw, fw_rhs, True, bpair, bB, 0)
        out[key] = (fw, fw_rhs, BlockSparse(nb, bpair[:k].copy(), bB[:k].copy()))
    fw, fw_rhs, K = out["K"]
    if force.implicit_only:
        fw_rhs = np.zeros_like(fw_rhs)
    return ForceOutput("maximal", fw, K if want_K else None, out["D"][2] if want_D else None, fw_rhs,
                       float(np.real(force.potential(x.real))))
