"""Linearly implicit Euler, RedMax paper Eq. 2 (Sueda notes Eq. 2.86), as the reference does it.

Per step from t_k to t_{k+1} = t0 + (k+1) h:

1. re-parameterise joints (spherical exponential coordinates, Euler charts) at the start;
2. evaluate the forces (inputs at t_{k+1}) and their K, D at (q_k, qd_k);
3. solve ``(M + J^T (h Dm - h^2 Km) J + h Dr - h^2 Kr) qd_{k+1} = M qd_k + h (J^T (fm + Dm phi) - c + fr + Dr qd_k
   + tau)`` (:mod:`redmax.integrators.step`), where ``c`` (gravity and quadratic velocity terms) is explicit as
   in the reference (``coriolis="implicit"`` also linearises it, ``gravity="implicit"`` adds gravity's
   stiffness) and pure linear damping drops out of the right-hand side (notes Eq. 2.83); then
   ``q_{k+1} = q_k + h qd_{k+1}``.

Behaviour: the scheme is first-order and, with the quadratic velocity terms explicit, not energy-stable: on long
undamped chains it can gain energy (benchmarks/step.py shows the drift); damping and implicit stiffness
dissipate.  ``coriolis="implicit"`` removes most of the gain.

Models whose forces all have compiled kernels run the whole loop in compiled code
(:func:`redmax.integrators._loop.euler_loop`), energies included; others run the same stages from Python.
"""

from __future__ import annotations

import warnings

import numpy as np

from redmax.configuration import State, charts_for, reparameterize
from redmax.errors import SimulationError
from redmax.forces._compiled import NE
from redmax.forces.program import ENERGY_KEYS
from redmax.integrators.common import INTEGRATORS, Result, check_model, time_grid
from redmax.integrators.euler_parts import (
    Taus,
    _energies,
    _first_bad,
    _inputs_tau,
    _kin,
    _run_compiled,
    _state,
    energy_keys,
    resolve_forces,
)
from redmax.integrators.instability import Watch, check_mode
from redmax.integrators.step import LinearizedStep, StepOptions, linearize
from redmax.solvers.linear import get_solver

__all__ = ["euler_step", "euler_system", "linearized_step", "resolve_forces", "simulate_euler"]


def linearized_step(model, state, h: float, tau=None, *, forces=None, inputs=None, coriolis: str = "explicit",
                    gravity: str = "explicit", symmetrize: bool = False) -> LinearizedStep:
    """The :class:`LinearizedStep` of one Euler step from ``state`` (re-parameterised first); for a model with
    coupled joints, the step of its coordinate model (``model.coordinate_model``) at the expanded state."""
    model = check_model(model, "linearized_step")
    if model.uncoupled is not None:  # hyper-reduced coordinates
        from redmax.integrators.constrained import coordinate_state

        model, state = model.coordinate_model, coordinate_state(model, state)
    opts = StepOptions(coriolis, gravity, symmetrize)
    program, python, opts = resolve_forces(model, forces, opts, armature_ok=True)
    st = _state(model, state)
    reparameterize(model, st.q, st.qd, st.jstate)
    t_next = st.t + h
    return linearize(model, st.q, st.qd, st.jstate, t_next, h, _inputs_tau(model, inputs, t_next, tau), program,
                     python, opts)


def euler_step(model, state, h, tau=None, *args, forces=None, inputs=None, coriolis: str = "explicit",
               gravity: str = "explicit", symmetrize: bool = False, solver="dense"):
    """One linearly implicit Euler step; a pure function: ``euler_step(model, state, h, tau) -> State``.

    Args:
        state: a :class:`redmax.State` (q, qd, t, jstate); not modified.
        h: step (s).  tau: (ndof,) input torques for this step (default: ``inputs`` at ``t + h``).
        forces: applied forces (default: the model's).  inputs: :class:`redmax.model.Inputs` (default: the
            model's).  coriolis, gravity, symmetrize: see :class:`redmax.integrators.step.StepOptions`.
        solver: linear solver name or instance.
    Returns:
        The state at ``t + h`` (re-parameterised joints keep their new chart).

    The wave-one form ``euler_step(model, q, qd, jstate, t_next, h, forces, symmetrize) -> (q1, qd1, jstate1)``
    still works (deprecated).
    """
    model = check_model(model, "euler_step")
    if not isinstance(state, State) and args:
        warnings.warn("euler_step(model, q, qd, jstate, t_next, h, forces, symmetrize) is deprecated; use "
                      "euler_step(model, State(q, qd, t, jstate), h, tau)", DeprecationWarning, stacklevel=2)
        q, qd, jstate = state, h, tau
        t_next, hh = args[0], args[1]
        legacy_forces = args[2] if len(args) > 2 else None
        sym = bool(args[3]) if len(args) > 3 else False
        st = State(np.asarray(q, float), np.asarray(qd, float), float(t_next) - float(hh), jstate)
        out = euler_step(model, st, float(hh), None, forces=legacy_forces, symmetrize=sym)
        return out.q, out.qd, out.jstate
    if model.constraints or model.uncoupled is not None:  # constraints, hyper-reduced coordinates
        from redmax.integrators.constrained import constrained_euler_step

        return constrained_euler_step(model, state, float(h), tau, forces=forces, inputs=inputs, coriolis=coriolis,
                                      gravity=gravity, symmetrize=symmetrize, solver=solver)
    step = linearized_step(model, state, float(h), tau, forces=forces, inputs=inputs, coriolis=coriolis,
                           gravity=gravity, symmetrize=symmetrize)
    qd1 = get_solver(solver).solve(step)
    q1 = step.q + step.h * qd1
    if not (np.all(np.isfinite(q1)) and np.all(np.isfinite(qd1))):
        raise SimulationError(f"{model.name}: step at t = {step.t_next - step.h:.6g} gave a non-finite state "
                              f"(first at DOF '{model.dof_names[_first_bad(q1, qd1)]}')")
    return State(q1, qd1, step.t_next, step.jstate)


def euler_system(model, q, qd, jstate, t_next: float, h: float, forces=None, symmetrize: bool = False):
    """Deprecated wave-one helper: ``(A, b)`` of the step at an already re-parameterised (q, qd, jstate) with inputs
    at ``t_next``.  Use :func:`linearized_step` (``.dense()``, ``.b``)."""
    model = check_model(model, "euler_system")
    opts = StepOptions(symmetrize=symmetrize)
    program, python, opts = resolve_forces(model, forces, opts, armature_ok=True)
    js = charts_for(model, jstate)
    step = linearize(model, q, qd, js, t_next, h, model.inputs.torque(t_next), program, python, opts)
    return step.dense(), step.b


FRICTION_SOLVERS = ("bisp", "sp", "none")
COMPAT = (None, "original")


def check_friction_options(friction_solver, compat):
    """``(friction_solver, compat)`` checked: a SimulationError lists the valid values."""
    if friction_solver not in FRICTION_SOLVERS:
        raise SimulationError(f"friction_solver must be one of {list(FRICTION_SOLVERS)}, got {friction_solver!r}")
    if compat not in COMPAT:
        raise SimulationError(f"compat must be None or 'original', got {compat!r}")
    return friction_solver, compat


def simulate_euler(model, state, h: float, duration: float, forces=None, symmetrize: bool = False, progress=None,
                   *, inputs=None, coriolis: str = "explicit", gravity: str = "explicit", solver="auto",
                   baumgarte: float = 5.0, constraint_solver="auto", on_instability: str = "warn",
                   friction_solver: str = "bisp", compat=None) -> Result:
    """Integrate with linearly implicit Euler for ``round(duration / h)`` steps from ``state``.

    The whole loop runs compiled when every force has a compiled kernel and the solver is compiled ("dense",
    "pcg"); otherwise each step runs the same stages from Python.  Energies are recorded at every sample.  Models with
    constraints or coupled joints take :mod:`redmax.integrators.constrained` (velocity-level Baumgarte gain
    ``baumgarte``, constrained solver ``constraint_solver``).  The recorded energies are checked every
    ``CHUNK`` steps by the rule of :mod:`redmax.integrators.instability` (``on_instability``).  Models with joint
    contacts or floor friction step with ``friction_solver`` ("bisp"; "none" ignores friction; ``compat``:
    :mod:`redmax.friction.bisp`).
    """
    from redmax.friction.setup import has_friction

    model = check_model(model, "simulate_euler")
    check_mode(on_instability)
    fsolver, compat = check_friction_options(friction_solver, compat)
    if fsolver == "sp" and has_friction(model):  # the maximal-coordinate baseline (redmax.friction.sp)
        from redmax.friction.sp import run_sp

        return run_sp(model, state, h, duration, forces, inputs, symmetrize, baumgarte)
    if model.constraints or model.uncoupled is not None or (fsolver != "none" and has_friction(model)):
        from redmax.integrators.constrained import euler_constrained

        return euler_constrained(model, state, h, duration, forces, symmetrize, progress, inputs, coriolis, gravity,
                                 solver, baumgarte, constraint_solver, on_instability=on_instability,
                                 friction_solver=fsolver, compat=compat)
    opts = StepOptions(coriolis, gravity, bool(symmetrize), getattr(solver, "name", solver))
    program, python, opts = resolve_forces(model, forces, opts, armature_ok=True)
    slv = get_solver(solver)
    if slv.name == "auto":
        slv = slv.choose(model.ndof, program.symmetric and not python, opts.coriolis,
                         exact=not python and not program.coupling)
    st = _state(model, state)
    n, t = time_grid(st.t, h, duration)
    nd, nb = model.ndof, model.nb
    Q = np.empty((n + 1, nd))
    QD = np.empty((n + 1, nd))
    JS = np.empty((n + 1, nb), dtype=np.int64)
    E = np.zeros((n + 1, NE))
    Q[0], QD[0], JS[0] = st.q, st.qd, st.jstate
    inp = model.inputs if inputs is None else inputs
    keys = energy_keys(model, forces)
    compiled = not python and slv.compiled and model.armature is None  # the compiled loop has no armature
    watch = Watch(model, on_instability, model.name, t)
    slv.begin(model)
    if compiled:
        _run_compiled(model, program, opts, inp, st, t, h, n, Q, QD, JS, E, progress, watch=watch, solver=slv)
    else:
        _run_python(model, program, python, opts, slv, inp, st, t, h, n, Q, QD, JS, E, progress, watch)
    energy = {k: E[:, i].copy() for i, k in enumerate(ENERGY_KEYS) if i < 4 or k in keys}
    energy["total"] = sum(energy.values())
    meta = {"integrator": "euler", "dt": h, "steps": n, "method": "redmax", "coriolis": opts.coriolis,
            "gravity": opts.gravity, "solver": slv.name, "compiled": bool(compiled), **slv.run_meta(n)}
    return Result(t, Q, QD, JS, energy, meta)


def _run_python(model, program, python, opts, slv, inp, st, t, h, n, Q, QD, JS, E, progress, watch=None):
    q, qd, js = st.q.copy(), st.qd.copy(), st.jstate.copy()
    taus = Taus(watch, inp, n, model.ndof)
    for k in range(n):
        E[k] = _energies(model, program, python, Q[k], QD[k], JS[k], t[k])
        reparameterize(model, q, qd, js)
        tau = taus.at(k, inp.torque(t[k + 1]))
        step = linearize(model, q, qd, js, t[k + 1], h, tau, program, python, opts)
        try:
            qd1 = slv.solve(step)
        except SimulationError as e:
            raise SimulationError(f"{model.name}: step {k} (t = {t[k]:.6g}): {e}") from None
        q = step.q + h * qd1
        qd = qd1
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))):
            bad = [fo.name for fo in python if not np.all(np.isfinite(fo.evaluate(model, _kin(model, step), t[k + 1],
                                                                                     False, False).f))]
            first = f"force '{bad[0]}'" if bad else f"the new state at DOF '{model.dof_names[_first_bad(q, qd)]}'"
            raise SimulationError(f"{model.name}: step {k} (t = {t[k]:.6g}): {first} is not finite; reduce the time "
                                  "step")
        Q[k + 1], QD[k + 1], JS[k + 1] = q, qd, js
        taus.check(k + 1, E, QD, h)
        if progress is not None:
            progress(t[k + 1], t[-1])
    E[n] = _energies(model, program, python, Q[n], QD[n], JS[n], t[n])
    taus.check(n, E, QD, h, last=True)


@INTEGRATORS.register("euler")
def _run(model, state, s) -> Result:
    """``simulate(..., integrator="euler")``: linearly implicit Euler at the fixed step ``s.dt``."""
    if s.method != "redmax":
        raise SimulationError("the linearly implicit Euler integrator uses method='redmax'")
    return simulate_euler(model, state, s.dt, s.duration, s.forces, s.symmetrize, s.progress, inputs=s.inputs,
                          coriolis=s.coriolis, gravity=s.gravity, solver=s.solver, baumgarte=s.baumgarte,
                          constraint_solver=s.constraint_solver, on_instability=s.on_instability,
                          friction_solver=s.friction_solver, compat=s.compat)
