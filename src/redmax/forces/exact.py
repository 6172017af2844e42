"""Force lists with exact stiffness, for Newton's method and the adjoint (Sueda notes §3.3.3).

Linearly implicit Euler lets a force choose how its stiffness enters the step ("full", RedMax's "symmetric" form,
or "none").  A fully implicit integrator needs the exact derivative ``K = df/dq`` whatever that choice: Newton
converges quadratically only with it, and the adjoint's gradients are exact only with it.  :func:`exact_forces`
returns the applied forces with every point force switched to "full" (shallow copies; the originals are not
touched).
"""

from __future__ import annotations

import copy

from redmax.forces.builtin import model_forces, split_legacy

__all__ = ["exact_forces"]


def exact_forces(model, forces=None) -> list:
    """The applied forces (default: the model's) with exact stiffness (module docstring)."""
    flist = model_forces(model) if forces is None else split_legacy(list(forces))[0]
    out = []
    for f in flist:
        if getattr(f, "stiffness", "full") != "full" and hasattr(f, "mode"):
            g = copy.copy(f)
            g.stiffness = "full"
            out.append(g)
        else:
            out.append(f)
    return out
