"""The force interface: every force reports f, K = df/dq and D = -df/dqd in its natural coordinates.

RedMax (paper Eq. 2, notes Eq. 2.86) integrates any force implicitly because it brings its own stiffness
and damping.  Sign conventions follow the reference implementation: ``K`` is the derivative of the
force (negative for a spring) and ``D`` is the damping coefficient (positive for a damper, the force
being ``-D qd``).

* Maximal forces act on bodies: ``fm`` is (nb, 6), a wrench per body in its body frame, angular first;
  ``Km``/``Dm`` are (6nb, 6nb) with respect to the body twists (position variations ``E <- E exp([dx])``).
* Reduced forces act on joint coordinates: ``fr`` (ndof,), ``Kr``/``Dr`` (ndof, ndof).

Integrators sum the terms of all forces; no force is special-cased inside an integrator.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Force", "ForceTerms"]


class ForceTerms:
    """Accumulator for force contributions at one state.

    Attributes:
        fm: (nb, 6) maximal wrenches (body frames).  fr: (ndof,) reduced forces.
        Km, Dm: (6nb, 6nb) or None.  Kr, Dr: (ndof, ndof) or None (allocated on demand).
        fm_rhs, fr_rhs: the parts of fm/fr that enter the explicit right-hand side of linearly
        implicit Euler (pure linear damping is implicit only, so it is left out there).
    """

    def __init__(self, nb: int, ndof: int, want_K: bool, want_D: bool, dtype=np.float64):
        self.nb = nb
        self.ndof = ndof
        self.want_K = want_K
        self.want_D = want_D
        self.fm = np.zeros((nb, 6), dtype=dtype)
        self.fr = np.zeros(ndof, dtype=dtype)
        self.fm_rhs = np.zeros((nb, 6), dtype=dtype)
        self.fr_rhs = np.zeros(ndof, dtype=dtype)
        self.Km = None
        self.Dm = None
        self.Kr = None
        self.Dr = None
        self.dtype = dtype

    def _mat(self, name: str, n: int) -> np.ndarray:
        M = getattr(self, name)
        if M is None:
            M = np.zeros((n, n), dtype=self.dtype)
            setattr(self, name, M)
        return M

    def Km_(self) -> np.ndarray:
        return self._mat("Km", 6 * self.nb)

    def Dm_(self) -> np.ndarray:
        return self._mat("Dm", 6 * self.nb)

    def Kr_(self) -> np.ndarray:
        return self._mat("Kr", self.ndof)

    def Dr_(self) -> np.ndarray:
        return self._mat("Dr", self.ndof)


class Force:
    """Base class.  Subclasses implement :meth:`accumulate` and, when they have one, :meth:`energy`.

    Class attributes:
        space: "maximal" or "reduced".
        energy_key: name of the energy bucket ("gravity", "joint_springs", "springs") or None.
        inertial: True for forces the recursive algorithms already contain (gravity through the
            base acceleration, Coriolis through the velocity products); they are skipped when the
            external forces of RNEA/ABA are assembled.
        implicit_only: True for pure linear damping ``f = -D qd``: linearly implicit Euler puts it
            only on the left (``h D``), exactly as the reference does (notes Eq. 2.83).
    """

    space = "maximal"
    energy_key: str | None = None
    inertial = False
    implicit_only = False
    name = "force"

    def accumulate(self, model, kin, t: float, terms: ForceTerms) -> None:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must implement accumulate()")

    def energy(self, model, kin) -> float:
        """Potential energy of a conservative force (0 for forces without one)."""
        return 0.0
