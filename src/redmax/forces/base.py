"""The force interface: every applied force reports one output, ``(f, K, D)`` and its energy, block-sparse.

RedMax (paper Eq. 2, notes Eq. 2.86) integrates any force implicitly because it brings its own stiffness and
damping.  Sign conventions follow the reference implementation: ``K`` is the derivative of the force (negative
for a spring) and ``D`` the damping coefficient (positive for a damper, the force being ``-D qd``).

* Maximal forces act on bodies.  Their output is in world coordinates at the world origin (angular first):
  ``fm`` (nb, 6) wrenches, and ``Km``, ``Dm`` as lists of 6x6 body-pair blocks (:class:`BlockSparse`), the
  world form (congruence) of RedMax's body-frame matrices: for body twists ``phi_a = Ad(E_a)^-1 V_a``,
  ``K_world[a, b] = Ad(E_a)^-T K_body[a, b] Ad(E_b)^-1`` (see :mod:`redmax.forces._points`).
* Reduced forces act on joint coordinates: ``fr`` (ndof,), ``Kr``, ``Dr`` as DOF blocks (:class:`DofBlocks`).

Gravity and the quadratic velocity (Coriolis, gyroscopic) terms are not forces: they belong to the equations of
motion (``redmax.dynamics``), so no force list can drop them.  A force reports what it is at one state and
nothing of the time step; the integrator owns the linearisation (linearly implicit Euler, RedMax Eq. 2: ``f + D v``
on the right and ``J^T (h D - h^2 K) J`` on the left, :mod:`redmax.integrators._linearize` for the compiled forces).
``ForceTerms.dense()`` gives dense matrices for small systems and tests (body or world frame).
"""

from __future__ import annotations

from redmax.errors import SceneError
from redmax.forces._compiled import KERNEL_SIGNATURE
from redmax.forces.terms import BlockSparse, DofBlocks, ForceOutput, ForceTerms

__all__ = ["KERNEL_SIGNATURE", "BlockSparse", "DofBlocks", "Force", "ForceOutput", "ForceTerms"]

class Force:
    """Base class.  Subclasses implement :meth:`evaluate` (or, for compiled forces, :meth:`program`).

    Class attributes:
        space: "maximal" or "reduced".
        energy_key: name of the energy bucket ("gravity", "joint_springs", "springs", "applied") or None.
        implicit_only: True for pure linear damping ``f = -D v``, whose ``f + D v`` vanishes (informational: the
            integrator forms ``f + D v`` for every force, notes Eq. 2.83).
        code, kernel: a compiled force type's code in the program and its kernel (:data:`KERNEL_SIGNATURE`),
            registered in :mod:`redmax.forces.registry`; ``program`` reports that code.
        pair_law: a two-point law the step may record as a compact pair instead of 6x6 blocks.
        symmetric_blocks: its blocks are symmetric even in the "full" stiffness mode.
        scene_type, scene_keys, scene_required: its ``[[forces]]`` table in scene files (``type``; the keys
            besides ``type`` and ``name``; those that must be given), read by :meth:`from_scene` and written by
            :meth:`to_scene`; None: not stored in scene files.
    """

    space = "maximal"
    energy_key: str | None = None
    implicit_only = False
    name = "force"
    code = -1
    kernel = None
    pair_law = False
    symmetric_blocks = False
    scene_type: str | None = None
    scene_keys: tuple[str, ...] = ()
    scene_required: tuple[str, ...] = ()

    @classmethod
    def from_scene(cls, read) -> Force:
        """The force of a scene-file table: ``read`` gives typed access to its keys (``read.number(key, default)``,
        ``read.string``, ``read.boolean``, ``read.array(key, shape, default)``, ``read.points(key)``,
        ``read.choice(key, options, default)``; no default: required), ``read.name`` its name, ``read.err(key,
        msg)`` an error naming the file and field."""
        raise SceneError(f"force type {cls.__name__} declares scene_type {cls.scene_type!r} but no from_scene")

    def to_scene(self) -> dict:
        """The keys of its scene-file table besides ``type`` and ``name`` (plain data)."""
        raise SceneError(f"force '{self.name}' ({type(self).__name__}) declares scene_type {self.scene_type!r} but "
                         "no to_scene")

    def program(self, model):
        """The compiled form of this force for ``model``, or None when it has no compiled kernel (Python
        callables): ``(code, mode, ints, floats, pair_bodies, max_blocks)`` with the kernel's type code and
        parameters (:mod:`redmax.forces._compiled`), the stiffness mode, the bodies between which off-diagonal
        blocks can occur, and the largest number of 6x6 blocks one evaluation writes."""
        return None

    def evaluate(self, model, kin, t: float = 0.0, want_K: bool = True, want_D: bool = True) -> ForceOutput:
        """The force, its K and D (world coordinates for maximal forces) and its energy at ``kin``."""
        from redmax.forces.evaluate import evaluate_compiled

        prog = self.program(model)
        if prog is None:  # pragma: no cover - abstract
            raise NotImplementedError(f"{type(self).__name__} must implement evaluate() or program()")
        return evaluate_compiled(self, prog, model, kin, want_K, want_D)

    def energy(self, model, kin) -> float:
        """Potential energy of a conservative force (0 for forces without one)."""
        return float(self.evaluate(model, kin, 0.0, False, False).energy)
