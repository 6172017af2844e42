"""BDF1, SDIRK2 and BDF2 (started by one SDIRK2 step) with Newton on the positions (Sueda notes §3.4).

The residuals of the stages (notes Eqs. 3.64, 3.69, 3.74, 3.80; ``a = (2 - sqrt 2)/2``), each solved by
:meth:`redmax.integrators.implicit.ImplicitSystem.solve` as ``M (x - base) - c2 f(x, qd(x)) = 0`` with
``qd(x) = (c1/c2)(x - z)``:

=================  ============================================================  ============================  ========
stage              base                                                          z                             c1
=================  ============================================================  ============================  ========
BDF1               ``q_k + h qd_k``                                              ``q_k``                       h
SDIRK2 stage a     ``q_k + a h qd_k``                                            ``q_k``                       a h
SDIRK2 stage b     ``q_k + (2a - 1) h qd_k + 2 (1 - a) h qd_a``                  ``q_k + (1 - a) h qd_a``      a h
BDF2 (k >= 1)      ``4/3 q_k - 1/3 q_{k-1} + 8/9 h qd_k - 2/9 h qd_{k-1}``       ``4/3 q_k - 1/3 q_{k-1}``     2h/3
=================  ============================================================  ============================  ========

and ``c2 = c1^2``.  Initial guesses: BDF1 and BDF2 ``q_k + h qd_k``, stage a ``q_k + a h qd_k``, stage b
``q_a + (1 - a) h qd_a``.  Inputs are evaluated at the stage time (stage a: ``t_k + a h``; the others:
``t_{k+1}``).  After each step the joints re-parameterise (:func:`redmax.integrators.charts.switch_charts`), the
previous state of BDF2 with them.  BDF1 is first-order and L-stable; SDIRK2 and BDF2 are second-order and
L-stable.  Numerical damping is the price of L-stability: energy decays with h (not a defect).

With ``record=True`` :func:`simulate_implicit` also returns a :class:`Tape`: every stage's solution, rate, LU
factors of the tangent at the solution, M and ``D = df/dqd`` there, and ``base``/``z`` as linear combinations of
earlier solutions and of the initial state (the structure the adjoint method transposes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from redmax.configuration import State, charts_for
from redmax.errors import SimulationError
from redmax.forces.builtin import model_forces, split_legacy
from redmax.integrators.charts import switch_charts
from redmax.integrators.common import INTEGRATORS, Result, check_model, record_energies, time_grid
from redmax.integrators.implicit import ImplicitSystem, StageRecord
from redmax.integrators.instability import Watch, check_mode, input_work
from redmax.solvers.newton import NewtonOptions

__all__ = ["ALPHA", "IMPLICIT", "Tape", "simulate_implicit"]

ALPHA = (2.0 - math.sqrt(2.0)) / 2.0  # SDIRK2 (Nishikawa 2019)
IMPLICIT = ("bdf1", "sdirk2", "bdf2")


@dataclass
class Tape:
    """What the adjoint method needs from a forward run (see the module docstring).

    Attributes:
        method, h: integrator and step.  t: (N+1,) sample times.  records: one :class:`StageRecord` per Newton
        solve, in order.  outputs: (N+1,) the record index of each sample (-1 for the initial state).
        q0, qd0, jstate0: the initial state.  reparameterized: a chart switch or re-parameterisation happened
        (the adjoint then refuses: it does not transport through a chart map).  system: the :class:`ImplicitSystem`.
    """

    method: str
    h: float
    t: np.ndarray
    records: list
    outputs: np.ndarray
    q0: np.ndarray
    qd0: np.ndarray
    jstate0: np.ndarray
    system: ImplicitSystem
    reparameterized: bool = False
    stats: dict = field(default_factory=dict)


def _lin(*terms) -> dict:
    """Sum of ``coefficient * {key: c}`` combinations."""
    out: dict = {}
    for c, d in terms:
        for k, v in d.items():
            out[k] = out.get(k, 0.0) + c * v
    return {k: v for k, v in out.items() if v != 0.0}


def _initial(model, state):
    st = model.initial_state() if state is None else state
    if not isinstance(st, State):
        raise SimulationError(f"{model.name}: state must be a redmax.State, got {type(st).__name__}")
    q, qd = model.check_state(st.q, st.qd)
    js = charts_for(model, None if (st.jstate is None and not model.chart_joints.size) else st.jstate,
                    q=q if model.uncoupled is None else None)
    t0 = float(st.t)
    if not np.isfinite(t0):
        raise SimulationError(f"{model.name}: state time must be finite, got {st.t!r}")
    return np.array(q, dtype=float), np.array(qd, dtype=float), np.array(js, dtype=np.int64), t0


def simulate_implicit(model, state, method: str, h: float, duration: float, forces=None, progress=None, *,
                      inputs=None, newton: NewtonOptions | None = None, record: bool = False,
                      on_instability: str = "warn"):
    """Integrate with ``method`` in ("bdf1", "sdirk2", "bdf2") for ``round(duration / h)`` steps.

    Args:
        state: initial :class:`redmax.State` (default: the model's).  forces: applied forces (default: the
            model's; their stiffness is taken exact).  inputs: joint torques (object with ``torque(t)``).
        newton: :class:`redmax.solvers.newton.NewtonOptions` (tolerance 1e-9 on ``|g|``, line search, ...).
        record: also return the :class:`Tape` for the adjoint method.
        on_instability: "warn", "raise" or "ignore": the energy rule of :mod:`redmax.integrators.instability`,
            checked on the recorded energies at the end of the run.
    Returns:
        :class:`redmax.integrators.Result` (``meta["newton_iterations"]`` per step, ``meta["newton_residuals"]``
        the residual norms of every Newton iterate of each step, ``meta["newton_unconverged"]`` the steps whose
        Newton solve stopped at the iteration limit, with a RuntimeWarning), and the Tape when ``record``.
    """
    if method not in IMPLICIT:
        raise SimulationError(f"unknown implicit integrator {method!r}; expected one of {', '.join(IMPLICIT)}")
    model = check_model(model, "simulate_implicit")
    check_mode(on_instability)
    q, qd, js, t0 = _initial(model, state)
    nsteps, t = time_grid(t0, h, duration)
    system = ImplicitSystem(model, forces, inputs, newton)
    flist = model_forces(model) if forces is None else split_legacy(list(forces))[0]
    n = model.ndof
    Q = np.empty((nsteps + 1, n))
    QD = np.empty((nsteps + 1, n))
    JS = np.empty((nsteps + 1, model.nb), dtype=np.int64)
    reparam = switch_charts(model, q, qd, js)
    Q[0], QD[0], JS[0] = q, qd, js
    tape = Tape(method, float(h), t, [], np.full(nsteps + 1, -1), q.copy(), qd.copy(), js.copy(), system)
    iters = np.zeros(nsteps, dtype=np.int64)
    resid: list = []
    unconverged: list = []
    prev = None  # (q_{k-1}, qd_{k-1}, their key dicts)
    Qk, QDk = {"q0": 1.0}, {"qd0": 1.0}
    a = ALPHA
    nrep = int(reparam)

    def stage(k, tt, c1, c2, B, Z, base, z, guess, label):
        what = f"{model.name}: {method} step {k} (t = {t[k]:.6g} -> {t[k + 1]:.6g}){label}"
        x, v, res, tau, MD = system.solve(tt, c1, c2, base, z, guess, js, record, what)
        rec = StageRecord(tt, c1, c2, x, v, (x - base) / c2, tau, js.copy(), k, B, Z, res.iterations, res.residuals)
        if record:
            rec.lu = res.lu
            rec.M, rec.D = MD
        tape.records.append(rec)
        m = len(tape.records) - 1
        kappa = c1 / c2
        return x, v, res, {m: 1.0}, _lin((kappa, {m: 1.0}), (-kappa, Z))

    for k in range(nsteps):
        tk, t1 = float(t[k]), float(t[k + 1])
        if method == "bdf1":
            base = q + h * qd
            B, Z = _lin((1.0, Qk), (h, QDk)), Qk
            x, v, res, Xk, Vk = stage(k, t1, h, h * h, B, Z, base, q, base, "")
            its, rs, solves = res.iterations, list(res.residuals), (res,)
        elif method == "sdirk2" or prev is None:
            c1 = a * h
            base = q + c1 * qd
            Ba, Za = _lin((1.0, Qk), (c1, QDk)), Qk
            xa, va, ra, _, Va = stage(k, tk + c1, c1, c1 * c1, Ba, Za, base, q, base, " stage a")
            base = q + (2 * a - 1) * h * qd + 2 * (1 - a) * h * va
            z = q + (1 - a) * h * va
            Bb = _lin((1.0, Qk), ((2 * a - 1) * h, QDk), (2 * (1 - a) * h, Va))
            Zb = _lin((1.0, Qk), ((1 - a) * h, Va))
            x, v, rb, Xk, Vk = stage(k, t1, c1, c1 * c1, Bb, Zb, base, z, xa + (1 - a) * h * va, " stage b")
            its, rs, solves = ra.iterations + rb.iterations, list(ra.residuals) + list(rb.residuals), (ra, rb)
        else:
            qp, qdp, Qp, QDp = prev
            c1 = 2.0 * h / 3.0
            z = (4.0 * q - qp) / 3.0
            base = z + (8.0 * qd - 2.0 * qdp) * h / 9.0
            Z = _lin((4.0 / 3.0, Qk), (-1.0 / 3.0, Qp))
            B = _lin((1.0, Z), (8.0 * h / 9.0, QDk), (-2.0 * h / 9.0, QDp))
            x, v, res, Xk, Vk = stage(k, t1, c1, c1 * c1, B, Z, base, z, q + h * qd, "")
            its, rs, solves = res.iterations, list(res.residuals), (res,)
        iters[k] = its
        resid.append(np.array(rs))
        if not all(r.converged for r in solves):
            unconverged.append(k)
        prev = (q.copy(), qd.copy(), Qk, QDk)
        q, qd = x.copy(), v.copy()
        Qk, QDk = Xk, Vk
        hist = [(prev[0], prev[1])]
        if switch_charts(model, q, qd, js, hist):
            nrep += 1
            reparam = True
        tape.outputs[k + 1] = len(tape.records) - 1
        Q[k + 1], QD[k + 1], JS[k + 1] = q, qd, js
        if progress is not None:
            progress(t1, float(t[-1]))
    tape.reparameterized = bool(reparam)
    if unconverged:
        import warnings

        k = unconverged[0]
        warnings.warn(f"{model.name}: {method}: Newton reached its iteration limit without |g| < "
                      f"{system.options.tol:g} in {len(unconverged)} step(s) (first: step {k}, t = {t[k + 1]:.6g}, "
                      f"residual {resid[k][-1]:.3e}); the last iterates were accepted (NewtonOptions(on_max_iter="
                      f"'raise') makes this an error)", RuntimeWarning, stacklevel=3)
    energy = record_energies(model, flist, Q, QD, JS)
    _watch(model, on_instability, t, energy, QD, tape, system.inputs, h)
    meta = {"integrator": method, "dt": float(h), "steps": nsteps, "method": "redmax",
            "newton_iterations": iters, "newton_residuals": resid, "newton_tol": system.options.tol,
            "newton_unconverged": np.array(unconverged, dtype=np.int64),
            "reparameterizations": nrep}
    result = Result(t, Q, QD, JS, energy, meta)
    return (result, tape) if record else result


def _watch(model, mode, t, energy, QD, tape, inputs, h) -> None:
    """The energy rule of :mod:`redmax.integrators.instability` on a finished run (inputs' work from the torques of
    each step's last stage)."""
    watch = Watch(model, mode, model.name, t)
    if not watch.active:
        return
    watch.start([v[0] for k, v in energy.items() if k != "total"])
    n = t.size - 1
    if n and not getattr(inputs, "empty", False):
        tau = np.array([tape.records[int(tape.outputs[k + 1])].tau for k in range(n)])
        if tau.shape == QD[1:].shape:
            watch.add_work(0, input_work(tau, QD[1:], h))
    watch.energies(0, energy["total"])


def _run(model, state, s) -> Result:
    """``simulate(..., integrator=name)`` for the fully implicit integrators (fixed step ``s.dt``, Newton)."""
    if s.method != "redmax":
        raise SimulationError(f"the {s.integrator} integrator uses method='redmax'")
    if getattr(model, "constraints", ()):
        raise SimulationError(f"{model.name}: the {s.integrator} integrator does not handle constraints yet; use "
                              "'euler' or an ODE integrator (rk45, dop853)")
    opts = NewtonOptions(**s.newton) if isinstance(s.newton, dict) else s.newton
    return simulate_implicit(model, state, s.integrator, s.dt, s.duration, s.forces, s.progress, inputs=s.inputs,
                             newton=opts, on_instability=s.on_instability)


for _name in IMPLICIT:
    INTEGRATORS.register(_name, _run)
