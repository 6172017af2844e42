"""One force evaluated from Python: the compiled kernels on one force, and Python point laws through the compiled
mapping.  Outputs are :class:`redmax.forces.terms.ForceOutput` in world coordinates."""

from __future__ import annotations

import numpy as np

from redmax.forces._compiled import NE, PAIR_FLOATS, scratch_size
from redmax.forces._points import MAP_SCRATCH, MODE_NONE, map_point_law
from redmax.forces.registry import eval_forces
from redmax.forces.terms import BlockSparse, DofBlocks, ForceOutput

__all__ = ["NO_PAIRS", "NO_RECORDS", "evaluate_compiled", "evaluate_point_law", "world_arrays"]

NO_PAIRS = np.zeros((1, 2), dtype=np.int64)  # pair-law buffers when pair records are off
NO_RECORDS = np.zeros((1, PAIR_FLOATS))


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
    # the array types of a force program in the compiled loops (read-only header and ints, writeable floats), so
    # that this call and the loops share one compiled eval_forces (each variant is a compile of every force kernel)
    hdr = np.array([[code, mode, 0, len(fi), 0, len(ff), 0, int(force.implicit_only)]], dtype=np.int64)
    fi = np.array(fi, dtype=np.int64)
    hdr.setflags(write=False)
    fi.setflags(write=False)
    ff = np.array(ff, dtype=float)
    Rw, pw, Vw = world_arrays(model, kin)
    q, qd = kin.q, kin.qd
    dt = np.result_type(q, qd, float)
    nb, n = model.nb, model.ndof

    cap = max(cap_blocks, 1)
    fw = np.zeros((nb, 6), dtype=dt)
    bpair = np.zeros((cap, 2), dtype=np.int64)
    bK = np.zeros((cap, 6, 6), dtype=dt)
    bD = np.zeros((cap, 6, 6), dtype=dt)
    fr = np.zeros(n, dtype=dt)
    rK = np.zeros(n, dtype=dt)
    rD = np.zeros(n, dtype=dt)
    energy = np.zeros(NE)
    npt = force.point_set.n if getattr(force, "_set", None) is not None else 1
    k, _ = eval_forces(hdr, fi, ff, Rw.astype(dt), pw.astype(dt), Vw.astype(dt), q.astype(dt), qd.astype(dt),
                       want_K or want_D, fw, bpair, bK, bD, fr, rK, rD, energy, np.zeros(scratch_size(npt), dtype=dt),
                       NO_PAIRS, NO_RECORDS.astype(dt), False)
    energy = energy[0]
    if force.space == "maximal":
        K = _nonzero_blocks(nb, bpair[:k], bK[:k]) if want_K and mode != MODE_NONE else None
        if want_K and K is None:
            K = BlockSparse.empty(nb, dt)
        D = _nonzero_blocks(nb, bpair[:k], bD[:k]) if want_D else None
        return ForceOutput("maximal", fw, K, D, energy=energy)
    K = D = None
    if want_K:
        K = DofBlocks(n)
        K.add_diagonal(rK)
    if want_D:
        D = DofBlocks(n)
        D.add_diagonal(rD)
    return ForceOutput("reduced", fr, K, D, energy=energy)


def _nonzero_blocks(nb, pairs, blocks) -> BlockSparse:
    """The blocks that are not identically zero (e.g. K of a damper) as a BlockSparse."""
    keep = np.flatnonzero(np.any(blocks != 0, axis=(1, 2)))
    return BlockSparse(nb, pairs[keep].copy(), blocks[keep].copy())


def evaluate_point_law(force, model, kin, want_K: bool = True, want_D: bool = True) -> ForceOutput:
    """A PointForce with a Python ``law``: world points, the law, then the compiled mapping to wrenches and blocks."""
    ps = force.point_set
    x, xd = ps.world(kin)
    F, dFdx, dFdxd = force.law(x, xd, True)
    dt = np.result_type(x, xd, F, float)
    nb = model.nb
    npt = ps.n
    fw = np.zeros((nb, 6), dtype=dt)
    bpair = np.zeros((npt * npt, 2), dtype=np.int64)
    bK = np.zeros((npt * npt, 6, 6), dtype=dt)
    bD = np.zeros((npt * npt, 6, 6), dtype=dt)
    k = map_point_law(ps.bodies, x.astype(dt), xd.astype(dt), F.astype(dt), dFdx.astype(dt), dFdxd.astype(dt),
                      False, force.mode, fw, True, bpair, bK, bD, 0, np.zeros(MAP_SCRATCH, dtype=dt))
    K = BlockSparse(nb, bpair[:k].copy(), bK[:k].copy()) if want_K else None
    D = BlockSparse(nb, bpair[:k].copy(), bD[:k].copy()) if want_D else None
    return ForceOutput("maximal", fw, K, D, energy=float(np.real(force.potential(x.real))))
