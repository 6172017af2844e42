"""Newton's method with backtracking line search for the fully implicit integrators (Sueda notes §3.4, Alg. 12).

Solves ``g(x) = 0`` given ``g`` and its tangent ``H = dg/dx``:

* direction ``Delta = -H^-1 g`` (LU with partial pivoting, SciPy);
* backtracking on the merit ``1/2 |g|^2``: ``alpha = 1``, halved up to ``max_halvings`` times until the merit
  decreases strictly; after that the last trial is accepted anyway;
* stop when ``|g| < tol`` on the new residual after an accepted step; at least one step is always taken, at most
  ``max_iter`` (default ``10 n``); at the limit the last iterate is returned with ``converged = False`` (as the
  original does: a penalty-friction switch can make Newton cycle between two branches, e.g. diff/11 under BDF2) or,
  with ``on_max_iter="raise"``, a :class:`redmax.errors.SimulationError`;
* abort (:class:`redmax.errors.SimulationError`) when ``|Delta| > max_step`` ("diverged"), when the tangent is
  singular or when a residual is not finite; the caller adds the step to the message.

With ``want_factor`` the tangent is evaluated and factorised once more at the returned point (the adjoint method
reuses that factorisation, so its tangents belong to the returned point, not to the iterate before it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla

from redmax.errors import SimulationError

__all__ = ["NewtonOptions", "NewtonResult", "newton"]


@dataclass(frozen=True)
class NewtonOptions:
    """Settings of :func:`newton` (module docstring).

    Attributes:
        tol: stop when ``|g| < tol`` (2-norm; default 1e-9).  max_iter: iteration limit (None: ``10 n``).
        max_step: divergence threshold on ``|Delta|``.  line_search: backtracking on ``1/2 |g|^2``.
        max_halvings: halvings of the step length per iteration.
        on_max_iter: "accept" (return the last iterate, flagged unconverged; the integrators warn and list the
            steps in ``Result.meta["newton_unconverged"]``) or "raise".
    """

    tol: float = 1e-9
    max_iter: int | None = None
    max_step: float = 1e3
    line_search: bool = True
    max_halvings: int = 20
    on_max_iter: str = "accept"

    def __post_init__(self):
        if not (np.isfinite(self.tol) and self.tol > 0):
            raise SimulationError(f"newton tol must be positive and finite, got {self.tol!r}")
        if self.max_iter is not None and int(self.max_iter) < 1:
            raise SimulationError(f"newton max_iter must be at least 1, got {self.max_iter!r}")
        if not self.max_step > 0:
            raise SimulationError(f"newton max_step must be positive, got {self.max_step!r}")
        if self.on_max_iter not in ("accept", "raise"):
            raise SimulationError(f"newton on_max_iter must be 'accept' or 'raise', got {self.on_max_iter!r}")


@dataclass
class NewtonResult:
    """Outcome of one Newton solve.

    Attributes:
        x: the solution.  g: its residual.  iterations: Newton steps taken.  residuals: ``|g|`` at the initial
        guess and after every step.  lu: LU factors of the tangent at ``x`` (``want_factor``) or None.
        data: whatever the residual function attached to its last evaluation at ``x``.  converged: ``|g| < tol``.
    """

    x: np.ndarray
    g: np.ndarray
    iterations: int
    residuals: list = field(default_factory=list)
    lu: tuple | None = None
    data: object = None
    converged: bool = True


def newton(residual, tangent, x0: np.ndarray, options: NewtonOptions = NewtonOptions(), want_factor: bool = False,
           what: str = "newton") -> NewtonResult:
    """Solve ``g(x) = 0``.

    Args:
        residual: ``residual(x) -> (g, data)``; data is anything the caller wants back (and reuses in its tangent).
        tangent: ``tangent(x, data) -> H`` (n, n), data from the residual at the same x.
        x0: initial guess (n,).  options: :class:`NewtonOptions`.
        want_factor: factorise the tangent at the returned point (:attr:`NewtonResult.lu`).
        what: prefix of error messages.
    """
    x = np.array(x0, dtype=float)
    n = x.size
    max_iter = 10 * max(n, 1) if options.max_iter is None else int(options.max_iter)
    g, data = residual(x)
    r = float(np.linalg.norm(g))
    if not np.isfinite(r):
        raise SimulationError(f"{what}: the residual at the initial guess is not finite")
    residuals = [r]
    it = 0
    while True:
        H = tangent(x, data)
        try:
            lu = sla.lu_factor(H, check_finite=True)
        except (ValueError, np.linalg.LinAlgError):
            raise SimulationError(f"{what}: the Newton tangent is not finite (residual {r:.3e})") from None
        if np.any(np.diag(lu[0]) == 0):
            raise SimulationError(f"{what}: singular Newton tangent (residual {r:.3e})")
        delta = -sla.lu_solve(lu, g)
        step = float(np.linalg.norm(delta))
        if not np.isfinite(step) or step > options.max_step:
            raise SimulationError(f"{what}: Newton diverged (|step| = {step:.3e} > {options.max_step:g}, residual "
                                  f"{r:.3e})")
        merit = 0.5 * r * r
        alpha = 1.0
        for k in range(options.max_halvings + 1):
            xt = x + alpha * delta
            gt, dt = residual(xt)
            rt = float(np.linalg.norm(gt))
            if not options.line_search or (np.isfinite(rt) and 0.5 * rt * rt < merit) or k == options.max_halvings:
                break
            alpha *= 0.5
        if not np.isfinite(rt):
            raise SimulationError(f"{what}: the residual became non-finite (previous residual {r:.3e})")
        x, g, r, data = xt, gt, rt, dt
        it += 1
        residuals.append(r)
        if r < options.tol:
            break
        if it >= max_iter:
            if options.on_max_iter == "raise":
                raise SimulationError(f"{what}: Newton did not converge in {it} iterations (residual {r:.3e}, "
                                      f"tolerance {options.tol:g})")
            break
    lu = None
    if want_factor:
        lu = sla.lu_factor(tangent(x, data))
    return NewtonResult(x, g, it, residuals, lu, data, r < options.tol)
