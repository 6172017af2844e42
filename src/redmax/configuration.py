"""Configuration state: coordinates with their charts, re-parameterisation and its events.

RedMax keeps joint coordinates in local charts instead of Lie groups (Sueda notes §2.4.5-2.4.6): a spherical
joint in exponential coordinates is re-parameterised to the shorter rotation vector when ``|q| > 1.5 pi``, an
Euler-angle joint switches to a better chart near gimbal lock.  The rotation and the angular velocity are
unchanged; q, qd and, for Euler joints, the chart word change.  A configuration is therefore ``(q, jstate)``,
never q alone: the same numbers mean different poses in different charts.  :class:`State` keeps them
together, and :func:`charts_for` refuses to guess the chart of a model that has chart joints.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from redmax.errors import ModelError
from redmax.joints.dispatch import joint_event, joint_reparam

__all__ = ["State", "charts_for", "check_charts", "events", "reparameterize"]

MAX_CHART = 12  # Euler charts are numbered 0..11 (redmax.joints.CHARTS)


@dataclass
class State:
    """Simulation state: coordinates ``q`` (ndof,), rates ``qd`` (ndof,), time ``t`` (s) and chart words.

    ``jstate`` (nb,) int64 holds each joint's chart word (only Euler-angle joints use it; None means the
    model's initial charts, accepted only when the model has no chart joint or at the initial state).
    """

    q: np.ndarray
    qd: np.ndarray
    t: float = 0.0
    jstate: np.ndarray | None = None

    def copy(self) -> State:
        js = None if self.jstate is None else np.array(self.jstate, dtype=np.int64)
        return State(np.array(self.q, copy=True), np.array(self.qd, copy=True), float(self.t), js)


def check_charts(model, jstate, what: str = "jstate") -> np.ndarray:
    """Validate chart words: shape (nb,), integers, and every Euler field a chart number 0..11 (an invalid
    word would index the chart tables out of range inside the kernels).  Returns a contiguous int64 array,
    read-only as ``model.jstate0`` (a read-only view of the caller's array if it is one already): the kernels
    only read it, and Numba compiles a kernel once more for every distinct read-only flag of its arguments (the
    second-order kernels take about 40 s each)."""
    try:
        raw = np.asarray(jstate)
    except (TypeError, ValueError):
        raise ModelError(f"{model.name}: {what} must be an array of {model.nb} integers, got {jstate!r}") from None
    if raw.shape != (model.nb,):
        raise ModelError(f"{model.name}: {what} must have shape ({model.nb},), got {raw.shape}")
    if raw.dtype.kind not in "iub" and not (raw.dtype.kind == "f" and np.all(np.isfinite(raw))
                                             and np.all(raw == np.round(raw))):
        raise ModelError(f"{model.name}: {what} must hold integer chart words, got dtype {raw.dtype}")
    if raw.dtype.kind == "u" and raw.size and int(raw.max()) > np.iinfo(np.int64).max:
        raise ModelError(f"{model.name}: {what} holds a chart word too large for int64")
    js = np.ascontiguousarray(raw, dtype=np.int64)
    for i in model.chart_joints:
        shifts = model.joints[i].chart_shifts()
        mask = sum(15 << s for s in shifts)
        for shift in shifts:
            c = (int(js[i]) >> shift) & 15
            if js[i] < 0 or c >= MAX_CHART:
                raise ModelError(f"joint '{model.joint_names[i]}': {what}[{i}] = {int(js[i])} is not a valid chart "
                                 f"word (Euler chart {c} at bit {shift}; charts are 0..{MAX_CHART - 1})")
        if int(js[i]) & ~mask:
            raise ModelError(f"joint '{model.joint_names[i]}': {what}[{i}] = {int(js[i])} is not a valid chart word "
                             f"(bits outside its chart fields {mask:#x} are set)")
    if js.flags.writeable:
        js = js.view()
        js.flags.writeable = False
    return js


def charts_for(model, jstate, what: str = "jstate") -> np.ndarray:
    """The chart words to use for a call: ``jstate`` validated, or the model's initial charts when it is None
    and the model has no chart joint.  A model with Euler-angle joints requires ``jstate`` (the same q means
    different poses in different charts); the error names the first such joint."""
    if jstate is None:
        if model.chart_joints.size:
            j = model.joint_names[int(model.chart_joints[0])]
            raise ModelError(f"joint '{j}' uses Euler-angle charts: pass jstate= (the chart words that go with "
                             f"q, e.g. state.jstate, result.jstate[k] or model.jstate0 at the initial state)")
        return model.jstate0
    return check_charts(model, jstate, what)


def reparameterize(model, q: np.ndarray, qd: np.ndarray, jstate: np.ndarray, margin: float = 0.0) -> bool:
    """Re-parameterise every joint that needs it, in place (q, qd (ndof,), jstate (nb,)).

    Spherical joints in exponential coordinates with |q| > 1.5 pi move to the equivalent shorter
    rotation vector; Euler-angle joints near gimbal lock switch charts.  Rotation and angular velocity
    are unchanged.  ``margin`` widens the trigger (ODE events).  Returns True if anything changed.
    """
    changed = False
    for i in model.reparam_joints:
        a, b = model.idx[i], model.idx[i + 1]
        js, ch = joint_reparam(model.jtype[i], model.jparam[model.jp_off[i] : model.jp_off[i + 1]], q[a:b], qd[a:b],
                               int(jstate[i]), margin)
        if ch:
            jstate[i] = js
            changed = True
    return changed


def events(model, q, jstate) -> np.ndarray:
    """Re-parameterisation event values of the joints in ``model.reparam_joints`` (negative = due)."""
    out = np.empty(model.reparam_joints.size)
    for k, i in enumerate(model.reparam_joints):
        a, b = model.idx[i], model.idx[i + 1]
        out[k] = joint_event(model.jtype[i], model.jparam[model.jp_off[i] : model.jp_off[i + 1]],
                             np.ascontiguousarray(q[a:b]), int(jstate[i]))
    return out
