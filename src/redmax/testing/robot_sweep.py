"""One robot file against Pinocchio (shared by ``tests/io/test_robot_collection.py`` and
``benchmarks/robots_sweep.py``): load it with Pinocchio and with :func:`redmax.load_urdf`, fixed or floating base,
and compare rnea, aba and crba at random states.

Outcomes of :func:`check_file`:

* ``agree``: every difference < ``TOL`` (1e-9) relative to the largest entry of Pinocchio's result;
* ``agree-cond``: as ``agree`` except aba, whose difference exceeds ``TOL`` but stays within what the
  conditioning of M allows (``< COND_EPS * cond(M)``), with our normwise backward error
  ``|rnea(aba(tau)) - tau| / (|M||qdd| + |tau|)`` below ``BACKWARD`` (100 eps): M so ill-conditioned (icub:
  cond ~ 1e9, point masses with 1e-18 inertias) that neither library's forward dynamics is accurate to 1e-9;
* ``singular``: redmax declines with a ModelError naming a joint because the joint-space inertia is singular,
  and Pinocchio's own M is singular there too (its ``aba`` returns NaN/inf or garbage) -- the issue's exception;
* ``pinocchio-refuses``: Pinocchio cannot load the file (not counted);
* ``DIFFER``, ``REFUSED`` (a RedmaxError on a file Pinocchio loads), ``LEAK`` (any other exception): failures.
"""

from __future__ import annotations

import contextlib
import os
import warnings

import numpy as np

import redmax as rm
from redmax.testing.pinocchio_bridge import compare_with_pinocchio

__all__ = ["BACKWARD", "COND_EPS", "FAILURES", "TOL", "check_file", "pinocchio_model", "pinocchio_singular"]

TOL = 1e-9
COND_EPS = 1e-15  # forward error allowed per unit of cond(M) (a few eps: both results carry ~eps * cond)
BACKWARD = 1e-14
FAILURES = ("DIFFER", "REFUSED", "LEAK")


@contextlib.contextmanager
def _quiet_stderr():
    """Silence C++ prints on file descriptor 2 (Pinocchio's URDF parser warns there)."""
    fd = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(fd, 2)
            os.close(fd)


def pinocchio_model(path: str, floating: bool):
    import pinocchio as pin

    with _quiet_stderr():
        try:
            return pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
        except Exception as e:
            return str(e).splitlines()[0] if str(e) else type(e).__name__


def pinocchio_singular(pm, rng) -> bool:
    """True when Pinocchio's joint-space inertia is singular at a random configuration (cond > 1e12)."""
    import pinocchio as pin

    pd = pm.createData()
    q = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq)) if pm.nq else np.zeros(0)
    M = pin.crba(pm, pd, q)
    M = np.triu(M) + np.triu(M, 1).T
    ev = np.linalg.eigvalsh(M)
    return bool(ev.size and (ev[0] <= 1e-12 * max(1.0, ev[-1])))


def check_file(path: str, floating: bool, states: int, seed: int = 0):
    """(outcome, detail, warnings) for one file and base."""
    pm = pinocchio_model(path, floating)
    if isinstance(pm, str):
        return "pinocchio-refuses", pm, []
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", rm.RedmaxWarning)
        try:
            model = rm.load_urdf(path, floating_base=floating)
        except rm.ModelError as e:
            msg = str(e)
            if ("moves no mass" in msg or "dependent" in msg) and pinocchio_singular(pm, rng):
                return "singular", msg, []
            return "REFUSED", msg, []
        except Exception as e:
            return "LEAK", f"{type(e).__name__}: {e}", []
    warns = [str(w.message) for w in caught if issubclass(w.category, rm.RedmaxWarning)]
    if model.ndof != pm.nv:
        return "DIFFER", f"{model.ndof} DOFs here, {pm.nv} in Pinocchio", warns
    try:
        worst = compare_with_pinocchio(model, pm, rng, states, conditioning=True)
    except rm.ModelError as e:
        if pinocchio_singular(pm, rng):
            return "singular", str(e), warns
        return "REFUSED", f"at a random state: {e}", warns
    cond, backward = worst.pop("cond", 1.0), worst.pop("aba_backward", 0.0)
    bad = {k: v for k, v in worst.items() if not v < TOL}
    top = max(worst.values(), default=0.0)
    if set(bad) == {"aba"} and bad["aba"] < COND_EPS * cond and backward < BACKWARD:
        return "agree-cond", (f"{model.ndof} dof, worst {top:.1e}, aba {bad['aba']:.1e} with cond(M) {cond:.1e} "
                              f"(backward error {backward:.1e})"), warns
    if bad:
        diffs = ", ".join(f"{k} {v:.1e}" for k, v in bad.items())
        return "DIFFER", f"{diffs} (cond(M) {cond:.1e}, aba backward error {backward:.1e})", warns
    return "agree", f"{model.ndof} dof, worst {top:.1e}", warns
