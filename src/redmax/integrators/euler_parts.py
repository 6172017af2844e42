"""The parts of linearly implicit Euler (RedMax Eq. 2) that its constrained form shares
(:mod:`redmax.integrators.constrained`): forces resolved into a compiled program, inputs and states checked, the
compiled loop run in chunks with its failures named, the energies of the samples."""

from __future__ import annotations

import weakref

import numpy as np

from redmax._validate import all_finite
from redmax.configuration import State, charts_for
from redmax.errors import ModelError, SimulationError
from redmax.forces.builtin import model_forces, split_legacy
from redmax.forces.program import build_program
from redmax.integrators._loop import STATUS, energies_at, euler_loop, init_workspace, workspace_sizes
from redmax.integrators.instability import table_rows
from redmax.integrators.step import StepOptions

_PROGRAMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


CHUNK = 2000  # steps between two looks at the samples (progress, instability) of a long run


def resolve_forces(model, forces, options: StepOptions, armature_ok: bool = False):
    """(program of the compiled forces, list of the Python-only forces, options) for a force list (None: the
    model's applied forces).  Deprecated Gravity/Coriolis markers become options.  Models with armature (MJCF)
    step through :func:`redmax.integrators.step.linearize`, which adds it; the compiled single-step path of
    ``redmax.Simulator`` does not (``armature_ok=False`` refuses them with a SimulationError)."""
    if model.armature is not None and not armature_ok:
        raise SimulationError(f"{model.name}: this model has joint armature (rotor inertia), which the compiled "
                              "Simulator step does not include yet; use redmax.simulate(..., integrator='euler'), "
                              "euler_step or an ODE integrator")
    default = forces is None
    if default:  # the model's own forces (never legacy markers): one program per model and options
        hit = _PROGRAMS.get(model, {}).get((options.gravity, options.symmetrize))
        if hit is not None:
            return (*hit, options)
    flist = model_forces(model) if default else list(forces)
    flist, legacy = split_legacy(flist)
    if legacy:
        options = StepOptions(coriolis=legacy.get("coriolis", options.coriolis),
                              gravity=legacy.get("gravity", options.gravity), symmetrize=options.symmetrize,
                              solver=options.solver)
    key = (options.gravity, options.symmetrize)
    cache = _PROGRAMS.setdefault(model, {}) if default else {}
    if key in cache:
        return (*cache[key], options)
    compiled = [f for f in flist if f.program(model) is not None]
    python = [f for f in flist if f.program(model) is None]
    program = build_program(model, compiled, options.gravity == "implicit", options.symmetrize)
    cache[key] = (program, python)
    return program, python, options


_KEYS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> energy buckets of its own forces


def energy_keys(model, forces=None) -> frozenset:
    """The energy buckets of the applied forces (None: the model's, cached per model)."""
    if forces is None:
        hit = _KEYS.get(model)
        if hit is None:
            hit = _KEYS[model] = frozenset(f.energy_key for f in model_forces(model) if f.energy_key is not None)
        return hit
    return frozenset(f.energy_key for f in split_legacy(forces)[0] if f.energy_key is not None)


_NO_CONSTRAINTS = (0, np.zeros(1, np.int64), np.zeros(1), np.zeros(1, np.bool_), np.zeros((1, 1)), np.zeros((1, 1)))
_NO_PCG_ITERATIONS = np.zeros((1, 1), np.int64)  # (written only by a PCG solve)


def _inputs_tau(model, inputs, t: float, tau):
    if tau is not None:
        v = np.asarray(tau, dtype=float).reshape(-1)
        if v.shape != (model.ndof,) or not np.all(np.isfinite(v)):
            raise SimulationError(f"{model.name}: tau must be {model.ndof} finite values, got shape {v.shape}")
        return v
    inp = model.inputs if inputs is None else inputs
    return inp.torque(t)


def _state(model, state) -> State:
    st = model.initial_state() if state is None else state
    if not isinstance(st, State):
        raise SimulationError(f"{model.name}: state must be a redmax.State, got {type(st).__name__}")
    q, qd = model.check_state(st.q, st.qd)
    if st.jstate is None:
        js = charts_for(model, None).copy()
    else:  # the words must go with q (joint coordinates: not checked against a coupled model's DOFs)
        js = charts_for(model, st.jstate, q=q if model.uncoupled is None else None).copy()
    t = float(st.t)
    if not np.isfinite(t):
        raise SimulationError(f"{model.name}: state time must be finite, got {st.t!r}")
    return State(np.array(q, dtype=float), np.array(qd, dtype=float), t, js)


def _first_bad(*vs) -> int:
    for v in vs:
        bad = np.flatnonzero(~np.isfinite(v))
        if bad.size:
            return int(bad[0])
    return 0


def _run_compiled(model, program, opts, inp, st, t, h, n, Q, QD, JS, E, progress, cv=None, V=None, RE=None, *,
                  watch=None, solver=None, dofs=None):
    """Run the compiled loop in chunks of ``CHUNK`` steps (when a progress callback or an instability watch needs
    to look at the samples between them; otherwise in one call).  ``cv``: the constraint views (matrix-free ones
    for PCG), ``dofs``: the DOF layout of a coupled model (PCG solves its couplings as rows)."""
    from redmax.integrators._constrained import call_address, pack_views

    cvp = None
    if cv is None:  # no constraints (the plain solve: its loop never compiles the constraint code)
        cfn, CI, CF, CB, V, RE = _NO_CONSTRAINTS  # (the loop writes V and RE only with constraints)
    else:
        cvp, CI, CF, CB = pack_views(cv)
        cfn = call_address(cv.active)
    Ii, Ff = model.packed
    times, vals, per_step = inp.table(t[1:])
    if not all_finite(vals):
        k = int(np.flatnonzero(~np.all(np.isfinite(vals), axis=1))[0])
        raise SimulationError(f"{model.name}: input torque is not finite at t = {times[k]:.6g}")
    q, qd, js = st.q.copy(), st.qd.copy(), st.jstate.copy()
    pcgw, IT = None, _NO_PCG_ITERATIONS
    if solver is not None and solver.matrix_free:  # matrix-free: no n x n matrix in the workspace
        pcgw, IT = solver.compiled_workspace(model, program.symmetric, opts.coriolis, n, cvp, dofs, program)
    nmat = model.ndof if pcgw is None else 0
    nf, ni = workspace_sizes(model.nb, model.ndof, program.nblocks, program.nincs, program.nscratch, program.npairs,
                             nmat)
    WF, WI = np.zeros(nf), np.zeros(ni, dtype=np.int64)  # owned here: the compiled loop borrows views of them
    init_workspace(Ii, program.nblocks, program.nincs, program.nscratch, program.npairs, nmat, WF, WI)
    watching = watch is not None and watch.active
    chunk = n if (progress is None and not watching) else max(1, min(n, CHUNK))
    k0 = 0
    while True:
        k1 = min(n, k0 + chunk)
        status, k, idx = euler_loop(Ii, Ff, program.hdr, program.fi, program.ff, program.nblocks, program.nincs,
                                    program.nscratch, program.npairs, program.symmetric,
                                    True if opts.coriolis == "implicit" else None,
                                    model.reparam_joints, times, vals, per_step, q, qd, js, float(st.t), float(h), k0,
                                    k1, Q, QD, JS, E, cfn, CI, CF, CB, V, RE, WF, WI, pcgw, IT)
        if status != 0:
            _raise(model, program, status, k, idx, t, h, q, qd, js, solver=solver)
        if watching:
            tau = None if inp.empty else table_rows(times, vals, per_step, k0, t[k0 + 1:k1 + 1])
            watch.after_steps(k0, k1, k1 >= n, E, QD, tau, h)
        if progress is not None and k1 > k0:
            progress(t[k1], t[-1])
        if k1 >= n:
            break
        k0 = k1
    if pcgw is not None:
        solver.take_iterations(IT)


def _raise(model, program, status, k, idx, t, h, q, qd, js, label=None, solver=None):
    """Raise the SimulationError of a failed compiled step ``k`` (``label``: the step's number as the user counts
    it, default ``k``), naming the time and the first non-finite quantity."""
    what = STATUS.get(status, "step")
    where = f"{model.name}: step {k if label is None else label} (t = {t[k]:.6g} -> {t[k] + h:.6g})"
    if status == 8:
        raise SimulationError(f"{where}: PCG did not converge in {idx} iterations (tol {solver.tol:g} relative to the "
                              "warm start's residual; raise max_iter or use the 'dense' solver)")
    if status == 1:  # a force: name it by evaluating the forces one by one
        from redmax.kinematics import kinematics

        try:
            kin = kinematics(model, q, qd, js)
            for f in model.forces:
                out = f.evaluate(model, kin, t[k] + h, True, True)
                if not np.all(np.isfinite(out.f)):
                    raise SimulationError(f"{where}: force '{f.name}' is not finite; reduce the time step or check "
                                          "its parameters")
        except ModelError:
            pass
        if idx < model.nb:
            raise SimulationError(f"{where}: the applied wrench on body '{model.body_names[idx]}' is not finite")
        raise SimulationError(f"{where}: the applied force on DOF '{model.dof_names[idx - model.nb]}' is not finite")
    if status == 2:
        raise SimulationError(f"{where}: a stiffness/damping block is not finite")
    if status == 5 and solver is not None and solver.matrix_free:
        raise SimulationError(f"{where}: the '{solver.name}' solver's recursion is singular (a joint's projected "
                              "inertia and joint terms have no inverse); reduce the time step")
    if status == 5:
        raise SimulationError(f"{where}: singular linearly implicit system (the step matrix has no usable pivot); "
                              "reduce the time step or try coriolis='implicit'")
    if status == 7:
        raise SimulationError(f"{where}: the input torque on DOF '{model.dof_names[idx]}' is not finite")
    dof = model.dof_names[idx] if 0 <= idx < model.ndof else "?"
    raise SimulationError(f"{where}: the {what} is not finite (first at DOF '{dof}'); reduce the time step")


class Taus:
    """The Python loops' side of an instability :class:`Watch`: keeps the steps' input torques (when the run has
    inputs) and hands the samples to the watch every ``CHUNK`` steps and at the end."""

    def __init__(self, watch, inp, n: int, ndof: int):
        self.watch = watch if watch is not None and watch.active else None
        self.T = None if (self.watch is None or inp.empty) else np.zeros((n, ndof))
        self.k0 = 0

    def at(self, k: int, tau):
        if self.T is not None and np.shape(tau) == self.T.shape[1:]:
            self.T[k] = tau
        return tau

    def check(self, k1: int, E, QD, h: float, last: bool = False) -> None:
        """Steps ``k0 .. k1-1`` are done (E rows up to k1 - 1, and k1 when ``last``)."""
        if self.watch is None or not (last or k1 - self.k0 >= CHUNK):
            return
        if k1 > self.k0 or last:
            tau = None if self.T is None else self.T[self.k0:k1]
            self.watch.after_steps(self.k0, k1, last, E, QD, tau, h)
        self.k0 = k1


def _kin(model, step):
    from redmax.kinematics import kinematics

    return kinematics(model, step.q, step.qd, step.jstate)


def _energies(model, program, python, q, qd, js, t) -> np.ndarray:
    """Energies (NE,) at one state: compiled forces, kinetic and gravity, plus the Python forces."""
    from redmax.forces.program import BUCKETS

    Ii, Ff = model.packed
    E = energies_at(Ii, Ff, program, q, qd, js)
    if model.armature is not None:
        E[0] += 0.5 * float(np.sum(model.armature * np.asarray(qd, dtype=float) ** 2))
    if python:
        from redmax.kinematics import kinematics

        kin = kinematics(model, q, qd, js)
        for f in python:
            bk = BUCKETS.get(f.energy_key, -1)
            if bk >= 0:
                E[bk] += f.energy(model, kin)
    return E
