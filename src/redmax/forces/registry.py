"""The compiled force types: one line per type, the dispatch of their kernels written from it, and the program's
evaluation.

A compiled force type is one class (a :class:`redmax.forces.base.Force` with ``code`` and ``kernel``, its
``program(model)`` reporting the code and parameters) registered by one entry ``"module:Class"`` here, or by
another package as an entry point of group ``redmax.forces``.  Types may share a code when they share the kernel
(a cable is a spring-damper that goes slack).  Scene files read and write the types that name a
``scene_type`` (:data:`SCENE_TYPES`; ``from_scene``, ``to_scene``).  :func:`eval_forces` runs a model's force
program: for every force, its type's kernel through :func:`force_kernel`
(:func:`redmax._kernels.dispatch.write_dispatcher`).
"""

from __future__ import annotations

from redmax._jit import njit
from redmax._kernels.dispatch import lean_gate, registered, write_dispatcher
from redmax.errors import ModelError
from redmax.forces._compiled import KERNEL_SIGNATURE

__all__ = ["ENTRY_POINTS", "FORCE_TYPES", "SCENE_TYPES", "check_registry", "eval_forces", "force_kernel"]

_REGISTERED = (
    "redmax.forces.builtin:BodyDamping",
    "redmax.forces.builtin:JointSpring",
    "redmax.forces.builtin:JointDamping",
    "redmax.forces.maximal:WorldPointForce",
    "redmax.forces.maximal:PointSpring",
    "redmax.forces.maximal:SpringDamper",
    "redmax.forces.maximal:Cable",
    "redmax.forces.maximal:GroundContact",
    "redmax.forces.reduced:JointLimit",
    "redmax.forces.builtin:GravityStiffness",
)
ENTRY_POINTS = "redmax.forces"


def check_registry(types) -> None:
    """Refuse what the program cannot serve: a class that is not a Force, a type without a compiled kernel, a
    code that another type uses with another kernel."""
    kernels: dict[int, tuple] = {}
    for cls in types:
        if not (isinstance(cls, type) and hasattr(cls, "program") and hasattr(cls, "kernel")):
            raise ModelError(f"force registry: {cls!r} is not a Force class")
        if cls.kernel is None or not hasattr(cls.kernel, "py_func"):
            raise ModelError(f"force type {cls.__name__}: kernel must be a compiled force kernel")
        if not isinstance(cls.code, int) or cls.code < 1:
            raise ModelError(f"force type {cls.__name__}: code {cls.code!r} must be a positive integer")
        seen = kernels.get(cls.code)
        if seen is not None and seen[1] is not cls.kernel:
            raise ModelError(f"force type {cls.__name__}: code {cls.code} is taken by {seen[0]} with another kernel")
        kernels.setdefault(cls.code, (cls.__name__, cls.kernel))
    scene = [cls.scene_type for cls in types if cls.scene_type is not None]
    if len(scene) != len(set(scene)):
        raise ModelError(f"force registry: a scene-file type is used twice ({', '.join(scene)})")


FORCE_TYPES: tuple[type, ...] = registered(_REGISTERED, ENTRY_POINTS, check_registry)
SCENE_TYPES: dict[str, type] = {c.scene_type: c for c in FORCE_TYPES if c.scene_type is not None}


def _cases() -> list:
    out, seen = [], set()
    for cls in FORCE_TYPES:
        if cls.code not in seen:
            seen.add(cls.code)
            out.append((cls.code, cls.__name__, cls.kernel))
    return out


force_kernel = write_dispatcher(
    "force_kernel", KERNEL_SIGNATURE, _cases(), "nblk, npair",
    "The kernel of the force type ``code``: accumulates one force; returns (blocks, pair records) written.",
    __file__, __name__)


@njit(cache=True)
def eval_forces(hdr, fi, ff, Rw, pw, Vw, q, qd, want_blocks, fw, bpair, bK, bD, fr, rK, rD, energy, scratch, ppair,
                prec, pairs_on):
    """Evaluate every force of the program and accumulate into the outputs (:mod:`redmax.forces._compiled`).

    Args:
        hdr (nf, HDR), fi, ff: the program.  Rw (nb, 9), pw (nb, 3): world joint frames; Vw (nb, 6) world twists;
        q, qd (n,).  want_blocks: also write the blocks and the diagonals rK, rD.
        fw (nb, 6), fr (n,): the forces, accumulated.  bpair (cap, 2), bK, bD (cap, 6, 6): the stiffness and
        damping blocks of each body pair, written from 0.  rK, rD (n,): the reduced forces' stiffness and damping
        diagonals, accumulated.  energy (NE,): accumulated.
        scratch: ``scratch_size(npmax)`` floats of q's dtype (the kernels allocate nothing).
        ppair (capP, 2), prec (capP, PAIR_FLOATS): two-point pair laws (point springs, two-point spring-dampers
            and cables) in "symmetric" or "none" mode are recorded here instead of as 6x6 blocks when
            ``pairs_on`` (the step's fast assembly); otherwise they write blocks like every other force.
    Returns:
        (number of blocks, number of pair records) written.
    """
    nblk = 0
    npair = 0
    for f in range(hdr.shape[0]):
        nblk, npair = force_kernel(hdr[f, 0], fi, ff, hdr[f, 2], hdr[f, 4], hdr[f, 1], hdr[f, 6], Rw, pw, Vw, q, qd,
                                   want_blocks, fw, bpair, bK, bD, fr, rK, rD, energy, scratch, ppair, prec, pairs_on,
                                   nblk, npair)
    return nblk, npair


@njit(cache=True)
def _no_forces(hdr, *rest):
    """:func:`eval_forces` of a program without forces (its writeable header, ``redmax.forces.program``)."""
    if hdr.shape[0] != 0:
        raise ValueError("redmax: a force program with forces has a writeable header (it must be read-only)")
    return 0, 0


# the loops' call: the force kernels are compiled only for programs that have forces (a read-only header)
eval_forces_gated = lean_gate(eval_forces, "eval_forces_gated", stub=_no_forces)
