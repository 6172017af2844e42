"""Prescribed-motion profiles: declarative functions of time with their exact first and second derivatives.

A profile gives a target ``x(t)`` of ``k`` values (joint coordinates, twist components or a joint rate), its
rate ``dx/dt`` and its acceleration ``d2x/dt2`` (the last is used only by the ODE integrators, at acceleration
level).  Scene files store profiles as tables (docs/scene-files.md); nothing is Python code, so a
scene with prescribed motion stays a data file.  Targets are evaluated at the end of each Euler step.

Kinds (``type`` in a scene file):

* ``constant``: ``x = value``.
* ``piecewise_linear``: linear between the knots ``(times[j], values[j])``, held constant outside; the rate is
  the slope of the current piece (0 outside), the acceleration 0.
* ``sigmoid`` (reference scene 09): ``x = b / (1 + exp(-a s))``, ``s = 2 ((t - t0) / (t1 - t0) - 1/2)``, and
  ``x = b`` with zero rate and acceleration from ``t1`` on; with ``hold = false`` the formula holds at every t
  (reference scene 20, whose original evaluates it at t = t1 too).
* ``sinusoid``: ``x = offset + amplitude sin(2 pi frequency t + phase)`` (frequency in Hz).

Every profile also has a flat float encoding (:meth:`Profile.encode`) read by the compiled row kernels
(:mod:`redmax.constraints._compiled`): ``[code, k, parameters...]``.
"""

from __future__ import annotations

import numpy as np

from redmax.errors import ModelError

__all__ = ["PROFILES", "Constant", "PiecewiseLinear", "Profile", "Sigmoid", "Sinusoid", "profile_from"]

P_CONSTANT = 0
P_PIECEWISE = 1
P_SIGMOID = 2
P_SINUSOID = 3


def _vec(v, what: str) -> np.ndarray:
    try:
        a = np.atleast_1d(np.asarray(v, dtype=float)).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(f"profile: {what} must be numbers, got {v!r}") from None
    if a.size == 0 or not np.all(np.isfinite(a)):
        raise ModelError(f"profile: {what} must be finite numbers, got {v!r}")
    return a


class Profile:
    """Base class: ``k`` values over time.  ``evaluate(t) -> (x, xd, xdd)``, each (k,)."""

    type = "profile"
    code = -1
    frame = "body"  # prescribed_body only: "body" or "world" (see PrescribedBody)

    @property
    def k(self) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def evaluate(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - interface
        raise NotImplementedError

    def params(self) -> list[float]:  # pragma: no cover - interface
        raise NotImplementedError

    def encode(self) -> np.ndarray:
        """Flat float encoding ``[code, k, params...]`` for the compiled kernels."""
        return np.array([float(self.code), float(self.k), *self.params()])

    def to_scene(self) -> dict:  # pragma: no cover - interface
        raise NotImplementedError

    def broadcast(self, n: int, owner: str) -> Profile:
        """Check that the profile has ``n`` values (or 1, repeated)."""
        if self.k not in (1, n):
            raise ModelError(f"{owner}: profile has {self.k} value(s), expected {n} (or 1)")
        return self

    def _with_frame(self, d: dict) -> dict:
        if self.frame != "body":
            d["frame"] = self.frame
        return d

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_scene()})"


class Constant(Profile):
    """``x(t) = value`` (k values)."""

    type = "constant"
    code = P_CONSTANT

    def __init__(self, value, frame: str = "body"):
        self.value = _vec(value, "value")
        self.frame = frame

    @property
    def k(self):
        return self.value.size

    def evaluate(self, t):
        z = np.zeros(self.k)
        return self.value.copy(), z, z.copy()

    def params(self):
        return self.value.tolist()

    def to_scene(self):
        return self._with_frame({"type": self.type, "value": self.value.tolist()})


class PiecewiseLinear(Profile):
    """Linear interpolation of ``values`` (m, k) at increasing ``times`` (m,), held constant outside."""

    type = "piecewise_linear"
    code = P_PIECEWISE

    def __init__(self, times, values, frame: str = "body"):
        t = _vec(times, "times")
        try:
            v = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            raise ModelError(f"profile: values must be numbers, got {values!r}") from None
        if v.ndim == 1:
            v = v[:, None]
        if v.ndim != 2 or v.shape[0] != t.size:
            raise ModelError(f"profile: need one row of values per time, got {t.size} times and values of shape "
                             f"{v.shape}")
        if not np.all(np.isfinite(v)):
            raise ModelError("profile: values must be finite")
        if np.any(np.diff(t) <= 0):
            raise ModelError(f"profile: times must be strictly increasing, got {t.tolist()}")
        self.times, self.values, self.frame = t, v, frame

    @property
    def k(self):
        return self.values.shape[1]

    def evaluate(self, t):
        T, V = self.times, self.values
        z = np.zeros(self.k)
        if t <= T[0]:
            return V[0].copy(), z, z.copy()
        if t >= T[-1]:
            return V[-1].copy(), z, z.copy()
        j = int(np.searchsorted(T, t, side="right")) - 1
        s = (V[j + 1] - V[j]) / (T[j + 1] - T[j])
        return V[j] + s * (t - T[j]), s, z

    def params(self):
        return [float(self.times.size), *self.times.tolist(), *self.values.reshape(-1).tolist()]

    def to_scene(self):
        return self._with_frame({"type": self.type, "times": self.times.tolist(), "values": self.values.tolist()})


class Sigmoid(Profile):
    """The smooth step of reference scene 09: ``b / (1 + exp(-a s))``, ``s = 2 ((t - t0)/(t1 - t0) - 1/2)``,
    then ``b`` (rate and acceleration 0) from ``t1`` on; ``hold=False``: the formula at every t (no switch to
    ``b``; reference scene 20, whose last target time is t1 itself)."""

    type = "sigmoid"
    code = P_SIGMOID

    def __init__(self, a, b, t0, t1, frame: str = "body", hold: bool = True):
        self.a, self.b, self.t0, self.t1 = (float(_vec(x, n)[0]) for x, n in ((a, "a"), (b, "b"), (t0, "t0"),
                                                                              (t1, "t1")))
        if not self.t1 > self.t0:
            raise ModelError(f"profile: sigmoid needs t1 > t0, got t0 = {self.t0}, t1 = {self.t1}")
        if not isinstance(hold, bool | np.bool_):
            raise ModelError(f"profile: hold: expected true or false, got {hold!r}")
        self.hold = bool(hold)
        self.frame = frame

    @property
    def k(self):
        return 1

    def evaluate(self, t):
        if self.hold and t >= self.t1:
            return np.array([self.b]), np.zeros(1), np.zeros(1)
        ds = 2.0 / (self.t1 - self.t0)
        s = ds * (t - self.t0) - 1.0
        sg = 1.0 / (1.0 + np.exp(-self.a * s))
        d1 = self.a * sg * (1.0 - sg)
        d2 = self.a * self.a * sg * (1.0 - sg) * (1.0 - 2.0 * sg)
        return np.array([self.b * sg]), np.array([self.b * d1 * ds]), np.array([self.b * d2 * ds * ds])

    def params(self):
        return [self.a, self.b, self.t0, self.t1, 1.0 if self.hold else 0.0]

    def to_scene(self):
        d = {"type": self.type, "a": self.a, "b": self.b, "t0": self.t0, "t1": self.t1}
        if not self.hold:
            d["hold"] = False
        return self._with_frame(d)


class Sinusoid(Profile):
    """``offset + amplitude sin(2 pi frequency t + phase)`` (each a scalar or k values)."""

    type = "sinusoid"
    code = P_SINUSOID

    def __init__(self, amplitude, frequency, phase=0.0, offset=0.0, frame: str = "body"):
        parts = [_vec(x, n) for x, n in ((amplitude, "amplitude"), (frequency, "frequency"), (phase, "phase"),
                                         (offset, "offset"))]
        k = max(p.size for p in parts)
        if any(p.size not in (1, k) for p in parts):
            many = "1 value" if k == 1 else f"1 or {k} values"
            raise ModelError(f"profile: sinusoid parameters must have {many} each, got "
                             f"{', '.join(str(p.size) for p in parts)}")
        self.amplitude, self.frequency, self.phase, self.offset = (np.broadcast_to(p, (k,)).copy() for p in parts)
        self.frame = frame

    @property
    def k(self):
        return self.amplitude.size

    def evaluate(self, t):
        w = 2.0 * np.pi * self.frequency
        arg = w * t + self.phase
        return (self.offset + self.amplitude * np.sin(arg), self.amplitude * w * np.cos(arg),
                -self.amplitude * w * w * np.sin(arg))

    def params(self):
        return [*self.amplitude.tolist(), *self.frequency.tolist(), *self.phase.tolist(), *self.offset.tolist()]

    def to_scene(self):
        return self._with_frame({"type": self.type, "amplitude": self.amplitude.tolist(),
                                 "frequency": self.frequency.tolist(), "phase": self.phase.tolist(),
                                 "offset": self.offset.tolist()})


PROFILES = {c.type: c for c in (Constant, PiecewiseLinear, Sigmoid, Sinusoid)}
_KEYS = {"constant": ({"value"}, {"value"}), "piecewise_linear": ({"times", "values"}, {"times", "values"}),
         "sigmoid": ({"a", "b", "t0", "t1", "hold"}, {"a", "b", "t0", "t1"}),
         "sinusoid": ({"amplitude", "frequency", "phase", "offset"}, {"amplitude", "frequency"})}


def profile_from(d, owner: str = "profile") -> Profile:
    """A profile from its table (scene-file form), or a number / list of numbers (a constant); a Profile
    passes through.  Raises ModelError naming ``owner`` and the key."""
    if isinstance(d, Profile):
        return d
    if not isinstance(d, dict):
        try:
            return Constant(d)
        except ModelError:
            raise ModelError(f"{owner}: expected a profile table or numbers, got {d!r}") from None
    kind = d.get("type")
    if kind not in PROFILES:
        raise ModelError(f"{owner}.type: unknown profile type {kind!r} (expected one of {', '.join(PROFILES)})")
    allowed, required = _KEYS[kind]
    for key in d:
        if key not in allowed | {"type", "frame"}:
            raise ModelError(f"{owner}.{key}: unknown key (expected one of: {', '.join(sorted(allowed | {'frame'}))})")
    for key in required:
        if key not in d:
            raise ModelError(f"{owner}.{key}: missing required key")
    frame = d.get("frame", "body")
    if frame not in ("body", "world"):
        raise ModelError(f"{owner}.frame: expected 'body' or 'world', got {frame!r}")
    args = {k: v for k, v in d.items() if k not in ("type", "frame")}
    for key, v in args.items():
        if key == "hold":
            if not isinstance(v, bool):
                raise ModelError(f"{owner}.hold: expected true or false, got {v!r}")
        elif isinstance(v, bool) or isinstance(v, str):
            raise ModelError(f"{owner}.{key}: expected numbers, got {v!r}")
    try:
        return PROFILES[kind](**args, frame=frame)
    except ModelError as e:
        raise ModelError(f"{owner}: {str(e).removeprefix('profile: ')}") from None
