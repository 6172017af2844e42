"""Python-side joint descriptions: what the builder stores and validates before compiling to arrays.

A joint is a small interface (ARCHITECTURE pattern 3): a type ``code`` selecting its Numba kernel, the
number of coordinates ``nq`` (always equal to the number of velocities in RedMax), a flat float64
parameter vector, an initial chart/state word ``jstate`` (Euler-angle charts), and labels for its DOFs.
The kernels themselves live beside each class, in the family's module, as ``calc`` (Q, S, Sdot) and,
where the parameterisation has singularities, ``reparam`` and ``event``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from redmax.errors import ModelError

__all__ = ["Joint", "JointKernels", "as_axis"]


class JointKernels(NamedTuple):
    """The compiled kernels of one primitive joint family, read by the dispatchers that
    :mod:`redmax.joints.primitive` generates from its registry (type code -> kernel).  Each is a Numba function
    of the joint's parameters ``p``, coordinates ``q`` and rates ``qd`` (n,), chart word ``js``; outputs are
    zero on entry and share the dtype of ``q`` (complex step):

    * ``calc(p, q, qd, js, Q, S, Sdot)``: the joint transform Q (4, 4), its Jacobian S (6, n) with
      ``[S_k] = Q^-1 dQ/dq_k`` and Sdot (6, n) (RedMax supplemental §4, Sueda notes §2.4);
    * ``layout(js, tangent, sizes, o)``: the sizes of its core joints (Singh, Russell & Wensing, §II) appended
      to ``sizes[o:]``; returns ``(o_new, trivial)``, trivial when the core rates are the joint's rates;
    * ``expand(p, q, js, tangent, jets, Sv, A, dA, d2A, d3A)``: the core twists Sv (6, m) in the joint's frame and
      the map A (m, n) with ``S = Sv A`` and its first ``jets`` derivatives in q (see
      :mod:`redmax.joints.core_expansion`); the analytic derivatives read only these two;
    * ``reparam(p, q, qd, js, margin) -> (js, changed)`` and ``event(p, q, js) -> float``: only for
      coordinates with singular charts (re-parameterise in place; an event value that turns negative when
      it must).  None: the joint never re-parameterises.

    A family without DOFs (fixed) needs ``calc`` only; every other one needs ``layout`` and ``expand``.
    """

    calc: Any
    layout: Any = None
    expand: Any = None
    reparam: Any = None
    event: Any = None


def as_axis(value, what: str, owner: str) -> np.ndarray:
    """Validate and normalise a 3-vector axis; raise ModelError naming ``owner`` otherwise."""
    try:
        a = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: {what} must be a 3-vector of numbers, got {value!r}") from None
    if a.shape != (3,):
        raise ModelError(f"{owner}: {what} must have 3 components, got {a.size}")
    if not np.all(np.isfinite(a)):
        raise ModelError(f"{owner}: {what} contains NaN or inf: {a.tolist()}")
    with np.errstate(over="ignore"):
        n = float(np.linalg.norm(a))
    if not np.isfinite(n):  # |a| overflows (components near 1e300): normalise the scaled vector instead
        a = a / float(np.abs(a).max())
        n = float(np.linalg.norm(a))
    if n < 1e-12:
        raise ModelError(f"{owner}: {what} must be non-zero, got {a.tolist()}")
    return a / n


class Joint:
    """Base class of joint descriptions: one family per subclass, listed once in ``redmax.joints._registry``.

    Attributes:
        kind: short family name ("revolute", "spherical_exp", ...), also the scene-file ``type``.
        code: integer type code selecting the kernel (see ``redmax.joints.primitive``).
        kernels: the compiled kernels of a primitive family (:class:`JointKernels`); None for composites.
        nq: number of coordinates (= number of velocities).
        dof_labels: one label per coordinate, used to build ``model.dof_names``.
        scene_keys: the keys of the family's scene-file table besides ``type`` (read by :meth:`from_scene`).
    """

    kind: str = "joint"
    code: int = -1
    kernels: JointKernels | None = None
    nq: int = 0
    dof_labels: tuple[str, ...] = ()
    scene_keys: tuple[str, ...] = ()

    @classmethod
    def from_scene(cls, read) -> Joint:
        """Build the joint from its scene-file table; ``read`` gives typed access to the table's keys
        (``read.array(key, shape, default)``, ``read.string(key, default)``, ``read.placements(key)``,
        ``read.joints(key)``) and reports errors naming the file and field."""
        return cls()

    def to_scene(self, write) -> dict:
        """The joint's scene-file table (``write.placement(E)`` turns a transform into a placement table)."""
        return self.describe()

    def maximal_basis(self, p) -> tuple[np.ndarray, str]:
        """The constant allowed-twist basis S (6, n) used by the maximal-coordinate mode, and the kind of
        projection that recovers q from a relative pose; families with configuration-dependent S raise."""
        raise ModelError(f"joint kind '{self.kind}' is not supported in maximal-coordinate mode")

    def params(self, owner: str) -> np.ndarray:
        """Flat float64 parameter vector read by the kernel; validates and raises ModelError for ``owner``."""
        return np.zeros(0)

    def jstate(self) -> int:
        """Initial chart word (only Euler-angle spherical joints use it)."""
        return 0

    def can_reparam(self) -> bool:
        """True if the coordinates re-parameterise (exponential coordinates, Euler charts)."""
        return False

    def chart_shifts(self) -> tuple[int, ...]:
        """Bit positions of the Euler chart fields in this joint's chart word (empty: no chart)."""
        return ()

    def describe(self) -> dict:
        """Plain-data description (for printing and scene files)."""
        return {"type": self.kind}

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={v!r}" for k, v in self.describe().items() if k != "type")
        return f"{type(self).__name__}({items})"
