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
from redmax.joints.composite import is_free_exp
from redmax.joints.dispatch import joint_event, joint_reparam
from redmax.joints.primitive import COMPOSITE
from redmax.joints.spherical_exp import REPARAM_RADIUS, SPHERICAL_EXP

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

    def __post_init__(self):
        """Refuse what can never be a state (None, text, objects, booleans) with a ModelError; shapes and
        finiteness are checked against the model where the state is used."""
        for name in ("q", "qd"):
            v = getattr(self, name)
            try:
                a = np.asarray(v)
            except (TypeError, ValueError):
                raise ModelError(f"State: {name} must be an array of numbers, got {type(v).__name__}") from None
            if a.dtype.kind not in "iufc":
                raise ModelError(f"State: {name} must be an array of numbers, got "
                                 f"{'None' if v is None else f'dtype {a.dtype}'}")
        if isinstance(self.t, bool) or not isinstance(self.t, int | float | np.integer | np.floating):
            raise ModelError(f"State: t must be a number, got {self.t!r}")

    def copy(self) -> State:
        js = None if self.jstate is None else np.array(self.jstate, dtype=np.int64)
        return State(np.array(self.q, copy=True), np.array(self.qd, copy=True), float(self.t), js)


def check_charts(model, jstate, what: str = "jstate", q=None) -> np.ndarray:
    """Validate chart words: shape (nb,), integers, and every Euler field a chart number 0..11 (an invalid
    word would index the chart tables out of range inside the kernels); with ``q`` (the coordinates the words go
    with), also that every Euler field other than the joint's own chart is regular at q (:func:`check_foreign`).
    Returns a contiguous int64 array,
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
    if q is not None:
        check_foreign(model, js, q, what)
    if js.flags.writeable:
        js = js.view()
        js.flags.writeable = False
    return js


FOREIGN_MIN = 0.1  # |det S_top| below which a chart other than the joint's own cannot go with q (check_foreign)


def _euler_fields(joint):
    """(bit shift, offset of its q) of every Euler-angle chart field of a joint (a SphericalEuler, or the
    SphericalEuler parts of a Composite)."""
    if joint.kind == "spherical_euler":
        return [(0, 0)]
    out, off = [], 0
    for k, part in enumerate(getattr(joint, "joints", ())):
        if part.kind == "spherical_euler":
            out.append((4 * k, off))
        off += part.nq
    return out


def check_foreign(model, js, q, what: str = "jstate") -> None:
    """Refuse an Euler chart word that does not go with ``q``: a chart other than the joint's own (its word in
    ``model.jstate0``) is accepted only where q is regular in it, ``|det S_top| >= FOREIGN_MIN``.

    The simulation switches a joint to the best of all twelve charts near gimbal lock (``|det S_top| < 1/2``;
    ``redmax.joints.spherical_euler``), so any chart can follow a joint, but only at configurations regular in it:
    ``|det S_top|`` is at least ``sqrt(2/3)`` right after a switch and at least about 1/2 (less one step's change)
    until the next one.  A word such as 0 (chart XYX) given with angles meant for an XYZ joint sits at the
    singularity of XYX (``q2 = 0``) and is refused."""
    if len(model.chart_joints) == 0:
        return
    from redmax.joints.spherical_euler import CHART_AXES, CHARTS

    qv = np.real(np.asarray(q)).reshape(-1)
    home = model.jstate0
    for i in model.chart_joints:
        a = int(model.idx[i])
        for shift, off in _euler_fields(model.joints[i]):
            c, h = (int(js[i]) >> shift) & 15, (int(home[i]) >> shift) & 15
            if c == h or a + off + 1 >= qv.size:
                continue
            q2 = float(qv[a + off + 1])
            axes = CHART_AXES[c]
            det = abs(np.sin(q2)) if axes[0] == axes[2] else abs(np.cos(q2))
            if not det >= FOREIGN_MIN:
                raise ModelError(f"joint '{model.joint_names[i]}': {what}[{i}] = {int(js[i])} selects Euler chart "
                                 f"{CHARTS[c]}, not the joint's own {CHARTS[h]} (word {int(home[i])}), and q is "
                                 f"singular in that chart (|det S| = {det:.2g} < {FOREIGN_MIN:g}): pass the chart "
                                 "words that go with q (model.jstate0 for the joint's own charts, state.jstate or "
                                 "result.jstate[k])")


def charts_for(model, jstate, what: str = "jstate", q=None) -> np.ndarray:
    """The chart words to use for a call: ``jstate`` validated, or the model's initial charts when it is None
    and the model has no chart joint.  A model with Euler-angle joints requires ``jstate`` (the same q means
    different poses in different charts); the error names the first such joint.  With ``q``, the words are also
    checked against it (:func:`check_foreign`): the simulation entry points and ``forward_kinematics`` pass it."""
    if jstate is None:
        if model.chart_joints.size:
            j = model.joint_names[int(model.chart_joints[0])]
            raise ModelError(f"joint '{j}' uses Euler-angle charts: pass jstate= (the chart words that go with "
                             f"q, e.g. state.jstate, result.jstate[k] or model.jstate0 at the initial state)")
        return model.jstate0
    return check_charts(model, jstate, what, q)


def _stays(code, p, q, margin: float) -> bool:
    """True when the compiled re-parameterisation certainly leaves a joint as it is: a spherical joint in exponential
    coordinates, or the rotation vector of the free joint (translation first), whose angle is below the kernels'
    own trigger ``REPARAM_RADIUS - margin`` by more than round-off.  Decided here so that the re-parameterisation's
    dispatch over every joint family is compiled only when some joint may need it (a robot file's floating base at
    its initial state never does: about 7 s of compiling at the first ``load_urdf``)."""
    if code == SPHERICAL_EXP:
        w = q
    elif code == COMPOSITE and is_free_exp.py_func(p):  # (its Python function: nothing to compile)
        w = q[3:6]
    else:
        return False
    t = np.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    return bool(t.real < (REPARAM_RADIUS - margin) * (1.0 - 1e-12))


def reparameterize(model, q: np.ndarray, qd: np.ndarray, jstate: np.ndarray, margin: float = 0.0) -> bool:
    """Re-parameterise every joint that needs it, in place (q, qd (ndof,), jstate (nb,)).

    Spherical joints in exponential coordinates with |q| > 1.5 pi move to the equivalent shorter
    rotation vector; Euler-angle joints near gimbal lock switch charts.  Rotation and angular velocity
    are unchanged.  ``margin`` widens the trigger (ODE events).  Returns True if anything changed.
    """
    changed = False
    for i in model.reparam_joints:
        a, b = model.idx[i], model.idx[i + 1]
        if _stays(model.jtype[i], model.jparam[model.jp_off[i] : model.jp_off[i + 1]], q[a:b], margin):
            continue
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
