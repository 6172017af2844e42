"""Kernel entry points used by the recursive algorithms: one call per joint, selected by type code."""

from __future__ import annotations

from redmax._jit import njit
from redmax._kernels.dispatch import lean_gate
from redmax.joints.composite import calc_composite, event_composite, reparam_composite
from redmax.joints.primitive import COMPOSITE, primitive_calc, primitive_event, primitive_reparam


@njit(cache=True, inline="always")  # a dispatch layer: no compile level of its own
def joint_calc(code, p, q, qd, js, Q, S, Sdot):
    """Fill Q (4,4), S (6,n) and Sdot (6,n) of one joint; the outputs must be zero on entry.

    Args:
        code: joint type code.  p: (k,) parameters.  q, qd: (n,) coordinates and rates.
        js: chart word.  Q, S, Sdot: outputs, dtype of q.
    """
    if code == COMPOSITE:
        calc_composite(p, q, qd, js, Q, S, Sdot)
    else:
        primitive_calc(code, p, q, qd, js, Q, S, Sdot)


@njit(cache=True, inline="always")  # a dispatch layer: no compile level of its own
def joint_reparam(code, p, q, qd, js, margin):
    """Re-parameterise q, qd (views, modified in place) if needed; returns (js_new, changed).

    ``margin`` >= 0 widens the trigger (used after an ODE event located the crossing).
    """
    if code == COMPOSITE:
        return reparam_composite(p, q, qd, js, margin)
    return primitive_reparam(code, p, q, qd, js, margin)


@njit(cache=True, inline="always")  # a dispatch layer: no compile level of its own
def joint_event(code, p, q, js):
    """Value that becomes negative when the joint must re-parameterise (for ODE event location)."""
    if code == COMPOSITE:
        return event_composite(p, q, js)
    return primitive_event(code, p, q, js)


# for kernels over a model's arrays whose tag (the packed ints, or the joint type codes of Model.kernel_args) says
# whether it has joint families beyond fixed/revolute/prismatic (redmax._kernels.dispatch.lean_gate)
joint_calc_gated = lean_gate(joint_calc, "joint_calc_gated", prepend=True)
