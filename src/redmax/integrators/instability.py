"""Instability detection: a run whose energy or rates grow beyond what the model can explain is reported once.

MuJoCo's "simulation is unstable" warnings (Todorov et al. 2012; ``mjWARN_BADQACC``) are the model: the run goes
on, the user is told once where it went wrong.  redmax also offers ``on_instability="raise"`` (a
:class:`redmax.SimulationError`) and ``"ignore"``.

The rule.  At the start of a run the model's energy scale is

    E_s = max( |E_c(0)| for every energy component c (kinetic, gravity, joint springs, springs, applied),
               m |g| L,
               1/2 (m L^2 + sum_b I_b) (1 rad/s)^2 )

with m the total mass, g gravity, L the size of the model (the longest path from the root through the joint
offsets to a body's centre of mass, plus that body's radius of gyration) and I_b the largest principal moment of
body b: the energy of the initial state, of lifting the model by its own size, and of turning it at one radian
per second.  W(t) is the magnitude of the work the joint inputs have done so far, ``int |tau . qd| dt``.  A sample
at time t is unstable when

    |E(t) - E(0)| > FACTOR (E_s + W(t)),         FACTOR = 1e6                 (energy; ``redmax.simulate``)

and, where a step's energy is not computed (``redmax.Simulator``), when

    1/2 sum_i M_ii(q0) qd_i(t)^2 > FACTOR (E_s + W(t))              (rates, every ``CHECK_EVERY`` = 8 steps)

with ``M_ii(q0)`` the diagonal of the joint-space inertia at the start (the energy of each rate alone).  The
fixed-step Euler loops check their recorded energies every 2000 steps (so "raise" stops a long run early), the
implicit and the SciPy integrators at the end of the run.  A stable run stays far below the bound: the built-in
scenes reach at most 17 times their scale (most below 0.1), and the reference Euler scheme's +40 % over 20 s on an
undamped 50-link chain is nowhere near it; the same chain under ``coriolis="implicit"``, which explodes, passes it
at t = 8.67 s (1 ms steps), 0.04 s after its rates first exceed 1e3 rad/s.  Forces that do work without an energy
(custom forces, prescribed motion) are not counted in W: their work would have to exceed a million times the
model's own scale.

Separately, :class:`StepGuard` stops an adaptive (SciPy) integrator that cannot make progress: when over a window
of right-hand-side evaluations more than ``MIN_STEPS_LEFT`` (1e4) steps of its current size would remain and the
step has fallen below ``H_FLOOR`` (1e-6 s) or a rate is beyond any physical motion (``OMEGA_MAX`` = 1e5 rad/s, or
1e5 model sizes per second for a sliding DOF), it raises a :class:`redmax.SimulationError` naming the step size,
the time and the rate (whatever ``on_instability`` says: such a run would not end in reasonable time).
"""

from __future__ import annotations

import math
import os
import sys
import warnings
import weakref

import numpy as np

from redmax.errors import SimulationError, SimulationWarning

__all__ = ["FACTOR", "H_FLOOR", "MODES", "OMEGA_MAX", "StepGuard", "Watch", "check_mode", "energy_scale", "input_work",
           "rate_bounds", "table_rows"]

FACTOR = 1e6  # how far beyond its own scale a model's energy may grow before the run is called unstable
MODES = ("warn", "raise", "ignore")
H_FLOOR = 1e-6  # s: an adaptive step below this, for more than MIN_STEPS_LEFT steps to go, means no progress
OMEGA_MAX = 1e5  # rad/s (about a million rpm): faster than any articulated body turns (StepGuard)
MIN_STEPS_LEFT = 1e4
WINDOW = 2000  # right-hand-side evaluations per progress check of StepGuard
_EVALS_PER_STEP = {"RK45": 6, "DOP853": 12, "RK23": 3}  # SciPy's explicit methods (evaluations per step)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def check_mode(mode) -> str:
    """``on_instability`` validated: "warn", "raise" or "ignore" (a SimulationError otherwise)."""
    if not (isinstance(mode, str) and mode in MODES):
        raise SimulationError(f"on_instability must be one of 'warn', 'raise', 'ignore', got {mode!r}")
    return mode


_SIZES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> model_size (models are immutable)
_SCALES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> (m g L, turn) of energy_scale


def model_size(model) -> float:
    """L: the longest path from the root through the joint offsets to a body's centre of mass, plus that body's
    radius of gyration (model units of length).  Computed once per model."""
    size = _SIZES.get(model)
    if size is not None:
        return size
    nb = model.nb
    offset = np.linalg.norm(np.asarray(model.E_pj0)[:, :3, 3], axis=1).tolist()
    com = np.linalg.norm(np.asarray(model.E_jb)[:, :3, 3], axis=1).tolist()
    mass = np.asarray(model.mass, dtype=float)
    gyr = np.zeros(nb)
    np.sqrt(np.max(model.I_body, axis=1) / np.where(mass > 0, mass, 1.0), out=gyr, where=mass > 0)
    gyr = gyr.tolist()
    parent = np.asarray(model.parent).tolist()
    reach = [0.0] * nb
    size = 0.0
    for i in range(nb):
        p = parent[i]
        reach[i] = (reach[p] if p >= 0 else 0.0) + offset[i]
        size = max(size, reach[i] + com[i] + gyr[i])
    _SIZES[model] = size
    return size


def energy_scale(model, E0) -> float:
    """E_s of the module docstring from the energy components at the start ``E0`` (a sequence of numbers)."""
    parts = _SCALES.get(model)
    if parts is None:
        m = float(np.sum(model.mass))
        L = model_size(model)
        g = float(np.linalg.norm(model.gravity))
        parts = _SCALES[model] = (m * g * L, 0.5 * (m * L * L + float(np.sum(np.max(model.I_body, axis=1)))))
    comps = [abs(x) for x in np.asarray(E0, dtype=float).reshape(-1).tolist() if math.isfinite(x)]  # (a few)
    scale = max(0.0, *comps, *parts)
    return scale if scale > 0 and math.isfinite(scale) else 1.0


def input_work(tau, qd, h: float) -> np.ndarray:
    """Work magnitudes ``|tau_k . qd_k| h`` (k,) of the rows of tau and qd (k, n)."""
    return np.abs(np.einsum("ij,ij->i", tau, qd)) * h


def _stacklevel() -> int:
    """The stack level of the first frame outside the redmax package (the user's call)."""
    f = sys._getframe(1)
    level = 1
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PACKAGE + os.sep):
        f = f.f_back
        level += 1
    return level


def report(mode: str, message: str) -> None:
    """Warn (SimulationWarning) or raise (SimulationError) ``message`` as ``mode`` says."""
    advice = (" Reduce the time step or use a stable integrator (bdf1, sdirk2, bdf2); on_instability='raise' makes "
              "this an error, 'ignore' silences it.")
    if mode == "raise":
        raise SimulationError(message + advice.split(";")[0] + ".")
    if mode == "warn":
        warnings.warn(message + advice, SimulationWarning, stacklevel=_stacklevel())


class Watch:
    """The energy rule of one run (module docstring), fed the recorded samples chunk by chunk.

    Args:
        model: the model whose energies are recorded (the coordinate model of a coupled one).
        mode: "warn", "raise" or "ignore".  name: the model's name for messages.  t: (N+1,) sample times.
        label: "step" (fixed-step integrators: sample k ends step k) or "sample" (ODE integrators).
    The energy components at sample 0 (kinetic, gravity, joint springs, springs, applied) are taken from the first
    rows given to :meth:`after_steps` or :meth:`energies`.
    """

    def __init__(self, model, mode: str, name: str, t, label: str = "step"):
        self.mode = check_mode(mode)
        self.active = self.mode != "ignore"
        self.model = model
        self.name = name
        self.t = t
        self.label = label
        self.e0 = None
        self.scale = 1.0
        self.work = None  # (N+1,) cumulative input work, when the run has inputs (see add_work)
        self.fired = False

    def start(self, E0) -> None:
        """Set the energy at sample 0 from its components ``E0``."""
        E0 = np.asarray(E0, dtype=float)
        self.e0 = float(E0.sum())
        self.scale = energy_scale(self.model, E0)

    def add_work(self, k0: int, dW) -> None:
        """Add the work ``dW`` (k,) of the steps ending at samples ``k0 + 1 .. k0 + k``."""
        if not self.active or dW is None or len(dW) == 0:
            return
        if self.work is None:
            self.work = np.zeros(len(self.t))
        c = np.cumsum(dW) + self.work[k0]
        self.work[k0 + 1:k0 + 1 + len(c)] = c

    def after_steps(self, k0: int, k1: int, last: bool, E, QD, tau=None, h: float = 0.0) -> None:
        """Check the samples of steps ``k0 .. k1-1``: energy rows ``E[k0:k1]`` (components; also ``E[k1]`` when
        ``last``), rates ``QD[k0+1:k1+1]`` and, when the run has inputs, the steps' torques ``tau`` (k1-k0, n)."""
        if not self.active or self.fired:
            return
        if self.e0 is None:
            self.start(E[0])
        if tau is not None and np.shape(tau) == np.shape(QD[k0 + 1:k1 + 1]):
            self.add_work(k0, input_work(tau, QD[k0 + 1:k1 + 1], h))
        self.energies(k0, np.sum(E[k0:k1 + 1 if last else k1], axis=1))

    def energies(self, k0: int, total) -> None:
        """Check the total energies ``total`` (k,) of samples ``k0 .. k0 + k - 1``."""
        if not self.active or self.fired or len(total) == 0:
            return
        total = np.asarray(total, dtype=float)
        if self.e0 is None:
            raise ValueError("Watch.start was not called")
        W = 0.0 if self.work is None else self.work[k0:k0 + len(total)]
        with np.errstate(invalid="ignore", over="ignore"):
            bad = np.abs(total - self.e0) > FACTOR * (self.scale + W)
        if not bad.any():
            return
        j = int(np.flatnonzero(bad)[0])
        k = k0 + j
        w = 0.0 if self.work is None else float(self.work[k])
        self.fired = True
        report(self.mode, f"{self.name}: unstable simulation: at {self.label} {k} (t = {self.t[k]:.6g}) the total "
                          f"energy is {float(total[j]):.4g}, up from {self.e0:.4g}: more than {FACTOR:.0e} times the "
                          f"model's energy scale {self.scale:.4g} (plus the inputs' work {w:.4g}).")


def table_rows(times, vals, per_step: bool, k0: int, t_next) -> np.ndarray:
    """The input torques (k, n) of steps ``k0 .. k0 + k - 1``, ending at ``t_next`` (k,), from a table of
    ``Inputs.table`` (per-step tables have one row per step)."""
    if per_step:
        return vals[k0:k0 + len(t_next)]
    row = np.maximum(np.searchsorted(times, t_next, side="right") - 1, 0)
    return vals[row]


def rate_bounds(model, S) -> np.ndarray:
    """Per-DOF bounds (ndof,) beyond any physical motion: ``OMEGA_MAX`` rad/s for a DOF that turns, ``OMEGA_MAX``
    model sizes per second for one that slides (``S`` (6, ndof): the joint Jacobians; angular rows first)."""
    S = np.real(np.asarray(S))
    slides = np.linalg.norm(S[:3], axis=0) < 1e-12 * np.maximum(np.linalg.norm(S, axis=0), 1e-300)
    return np.where(slides, OMEGA_MAX * max(model_size(model), 1e-300), OMEGA_MAX)


class StepGuard:
    """Stops an adaptive SciPy integrator that cannot make progress (module docstring).  Call it with the time
    and rates of every right-hand-side evaluation.

    Every ``WINDOW`` evaluations at new times it estimates the mean step, ``h ~ (time advanced) x (evaluations per
    step) / WINDOW``, with the evaluations per step of the explicit methods (RK45 6, DOP853 12, RK23 3) or, for
    the implicit ones, a generous 25 (stages times Newton iterations) so that the estimate errs on the large side
    (a Jacobian by finite differences evaluates at one time and is not counted).  It raises a SimulationError when
    more than ``MIN_STEPS_LEFT`` such steps would remain and either the step is below ``H_FLOOR`` or a rate is
    beyond any physical motion (``bounds``, :func:`rate_bounds`): such a run would not end in reasonable time, and
    what it computes is not a physical motion anyway."""

    def __init__(self, name: str, integrator: str, method: str, t_end: float, dof_names, bounds=None):
        self.name, self.integrator, self.t_end, self.dofs = name, integrator, float(t_end), dof_names
        self.bounds = None if bounds is None else np.asarray(bounds, dtype=float)
        self.per_step = _EVALS_PER_STEP.get(method, 25)
        self.n = 0
        self.t_last = None
        self.t_max = -np.inf
        self.t_window = None

    def __call__(self, t: float, qd) -> None:
        if t == self.t_last:
            return
        self.t_last = t
        self.n += 1
        if t > self.t_max:
            self.t_max = t
        if self.n % WINDOW == 1:
            if self.t_window is not None:
                self._check(qd)
            self.t_window = self.t_max

    def _check(self, qd) -> None:
        h = (self.t_max - self.t_window) * self.per_step / WINDOW  # an upper estimate of the mean step
        left = self.t_end - self.t_max
        if not left > MIN_STEPS_LEFT * h:
            return
        v = np.abs(np.real(np.asarray(qd, dtype=complex)))
        if v.size == 0:
            return
        ratio = v / self.bounds if self.bounds is not None and self.bounds.shape == v.shape else v * 0.0
        k = int(np.argmax(ratio)) if ratio.max() > 1.0 else int(np.argmax(v))
        fast = ratio[k] > 1.0
        if not (h < H_FLOOR or fast):
            return
        why = (f"the rate of DOF '{self.dofs[k]}' is {float(v[k]):.3g}, beyond any physical motion "
               f"({float(self.bounds[k]):.3g}: {OMEGA_MAX:.0e} rad/s, or {OMEGA_MAX:.0e} model sizes per second for a "
               "sliding DOF)" if fast else f"below {H_FLOOR:g} s (the fastest rate is {float(v[k]):.3g}, DOF "
               f"'{self.dofs[k]}')")
        steps = f"about {left / h:.3g}" if h > 0 else "endless"
        raise SimulationError(f"{self.name}: {self.integrator} cannot make progress: its step size is {h:.3g} s at "
                              f"t = {self.t_max:.6g} and the remaining {left:.3g} s would take {steps} more steps; "
                              f"{why}.  Check the initial state and the forces, or use euler or bdf1")


def watch_samples(model, mode, t, energy, QD, inputs, name) -> None:
    """The energy rule of :mod:`redmax.integrators.instability` on the samples of a finished ODE run (the inputs'
    work by the rectangle rule over the sampling interval)."""
    watch = Watch(model, mode, name, t, label="sample")
    if not watch.active:
        return
    watch.start([v[0] for k, v in energy.items() if k != "total"])
    inp = model.inputs if inputs is None else inputs
    n = t.size - 1
    if n and not getattr(inp, "empty", False):
        tau = np.array([inp.torque(float(tk)) for tk in t[1:]]).reshape(n, -1)
        if tau.shape == QD[1:].shape:
            watch.add_work(0, input_work(tau, QD[1:], float(t[1] - t[0])))
    watch.energies(0, energy["total"])
