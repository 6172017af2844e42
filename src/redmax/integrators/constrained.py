"""Linearly implicit Euler with constraints and hyper-reduced coordinates (RedMax paper Eq. 2; §4, Eqs. 5-10).

Per step, at the re-parameterised start state with targets at ``t_{k+1}``:

1. the linearised step ``A qd1 = b`` in joint coordinates (:mod:`redmax.integrators.step`);
2. every constraint's rows (:mod:`redmax.constraints`): equalities ``G qd1 = -gdot - beta g`` and the inequality
   rows active at the step start ``C qd1 <= -cdot - beta c`` (velocity-level Baumgarte, ``beta`` default 5);
3. hyper-reduced coordinates map the system to the model's DOFs: ``T^T A T``, ``T^T b``, ``G T``;
4. the constrained solver (``"auto"``: KKT without active inequalities, else the QP) gives ``qd1`` and the
   multipliers; ``q1 = q0 + h qd1``;
5. reactions ``-G^T lam / h`` per constraint; a prescribed joint's own torque, stiffness and damping are taken
   out of its required torque (they act on it only through that row).

The whole loop runs compiled (:mod:`redmax.integrators._loop`, hook in ``step_core``) when every force has a
compiled kernel, the linear solver is "dense" and no constraint is an inequality; otherwise the same stages run
from Python with the QP through DAQP.  Samples record the constraint violation (g at ``t_k``; ``max(c, 0)`` for
inequalities) and the reactions of the step that ends at the sample.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from redmax._kernels.workspace import work_offsets
from redmax.configuration import reparameterize
from redmax.constraints.program import constraint_reactions, evaluate_rows, program_for
from redmax.errors import SimulationError
from redmax.integrators._constrained import coupling_rows
from redmax.integrators._stages import kinematics_stage
from redmax.integrators.common import Result, time_grid
from redmax.integrators.instability import Watch
from redmax.integrators.step import linearize
from redmax.solvers.constrained import get_constrained_solver

__all__ = ["BAUMGARTE", "BAUMGARTE_ACC", "constrained_euler_step", "constrained_step", "coordinate_state",
           "euler_constrained", "min_distances", "simulate_constrained"]

_COMPILED_LOOP = True
BAUMGARTE = 5.0  # velocity-level gain (scene files: [scene] baumgarte)
BAUMGARTE_ACC = (5.0, 5.0)  # acceleration-level gains (b1, b2) of the ODE integrators


def check_gains(beta, beta_acc) -> tuple[float, tuple[float, float]]:
    """Validate the Baumgarte gains (SimulationError naming the bad one)."""
    try:
        b = float(beta)
        b1, b2 = (float(x) for x in beta_acc)
    except (TypeError, ValueError):
        raise SimulationError(f"baumgarte must be a number and baumgarte_acc two numbers, got {beta!r}, "
                              f"{beta_acc!r}") from None
    for name, v in (("baumgarte", b), ("baumgarte_acc[0]", b1), ("baumgarte_acc[1]", b2)):
        if not (np.isfinite(v) and v >= 0):
            raise SimulationError(f"{name} must be finite and >= 0, got {v}")
    return b, (b1, b2)


def _names(prog, rows, idx) -> str:
    """Names of the constraints owning the rows ``idx``."""
    out = []
    for r in np.asarray(idx, dtype=int):
        k = int(np.searchsorted(rows.roff, r, side="right") - 1)
        if 0 <= k < prog.nc and prog.constraints[k].name not in out:
            out.append(prog.constraints[k].name)
    return ", ".join(out) if out else "(none)"


def constrained_step(model, step, beta: float, csolver, linear, warm=None):
    """Solve one linearised step of ``model`` (its coordinate model's :class:`LinearizedStep`) with the
    constraints and couplings of ``model``.

    Returns:
        (qd1 (ncoord,), rows, lam (m,) multipliers of all rows (0 for inactive ones), reactions (nreact,),
        active mask of the rows).
    """
    full = model.coordinate_model
    prog = program_for(full)
    rows = evaluate_rows(full, prog, step.W, step.q, step.qd, step.t_next, 0)
    eq = np.flatnonzero(rows.kind == 0)
    act = np.flatnonzero(rows.kind == 1)
    rhs = -rows.gd - beta * rows.g
    G, rG = rows.G[eq], rhs[eq]
    C, rC = rows.G[act], rhs[act]
    d = model.dofs
    dense = getattr(linear, "name", "") == "dense"
    A = step.dense() if dense else None
    b = step.b
    ncp = 0
    if d.coupled and dense:
        T = d.T
        A, b, G, C = T.T @ A @ T, T.T @ b, G @ T, C @ T
    elif d.coupled:  # no step matrix: the couplings as equality rows in joint coordinates (same solution)
        dep, src, coef = coupling_rows(d)
        ncp = dep.size
        Gc = np.zeros((ncp, G.shape[1]))
        Gc[np.arange(ncp), dep] = 1.0
        np.subtract.at(Gc, (np.arange(ncp), src), coef)
        G, rG = np.vstack([G, Gc]), np.concatenate([rG, np.zeros(ncp)])
    w = None
    if warm is not None and act.size:
        w = np.array([warm.get(int(r), False) for r in act])
    try:
        x, lg, lc = csolver.solve(A, b, step.symmetric, G, rG, C, rC, linear, step, w)
    except SimulationError as e:
        raise SimulationError(f"{e}: {_names(prog, rows, np.concatenate([act, eq]))}") from None
    if ncp:
        lg = lg[:lg.size - ncp]
    elif d.coupled:
        x = d.expand_rate(x)
    lam = np.zeros(rows.m)
    lam[eq] = lg
    lam[act] = lc
    react = constraint_reactions(full, prog, step.W, rows, lam, step.h)
    _prescribed_correction(model, prog, step, x, react)
    return x, rows, lam, react, act


def _prescribed_correction(model, prog, step, x, react):
    """Remove a prescribed joint's own reduced forces and input torque from its required torque:
    ``lam' = lam - R_pp x_p + h (f_p + tau_p)`` (only that row's multiplier absorbs them)."""
    from redmax.constraints.prescribed import PrescribedJoint

    dep = set()
    if model.dofs.coupled:
        dep = set(np.flatnonzero(np.isin(np.arange(model.ncoord), model.dofs.dof_coord, invert=True)).tolist())
    fr = step.fr_rhs if step.fr_rhs is not None else np.zeros_like(x)
    tau = step.tau if step.tau is not None else np.zeros_like(x)
    for k, c in enumerate(prog.constraints):
        if not isinstance(c, PrescribedJoint):
            continue
        o = prog.react_off[k]
        for j, dof in enumerate(c.dofs):
            if int(dof) in dep:
                continue
            react[o + j] += -step.rdiag[dof] * x[dof] / step.h + fr[dof] + tau[dof]


def min_distances(model, prog, W) -> float:
    """The smallest signed gap of the self-collision spheres at a kinematics workspace (inf without any)."""
    from redmax.constraints.unilateral import SelfCollision

    o = work_offsets(model.nb, int(model.idx[-1]))
    best = np.inf
    for c in prog.constraints:
        if not isinstance(c, SelfCollision):
            continue
        R = W[o.wR:o.wR + 9 * model.nb].reshape(model.nb, 3, 3)
        p = W[o.wp:o.wp + 3 * model.nb].reshape(model.nb, 3)
        P = np.einsum("kij,kj->ki", R[c.bodies], c.xj) + p[c.bodies]
        r = c.radii
        n = P.shape[0]
        i, j = np.triu_indices(n, c.skip)
        d = np.linalg.norm(P[i] - P[j], axis=1) - r[i] - r[j]
        if d.size:
            best = min(best, float(d.min()))
    return best


def _has_collision(prog) -> bool:
    from redmax.constraints.unilateral import SelfCollision

    return any(isinstance(c, SelfCollision) for c in prog.constraints)


def simulate_constrained(model, st, h, duration, program, python, opts, slv, inputs, progress, *, beta=BAUMGARTE,
                         constraint_solver="auto", energy_keys=None, on_instability="warn", friction_solver="none",
                         compat=None) -> Result:
    """The Euler loop of a model with constraints and/or couplings (see the module docstring), and of a model with
    friction (``friction_solver="bisp"``: :mod:`redmax.friction.bisp` in each step).

    ``st`` is the start state in the model's DOFs; ``program``/``python`` the forces of its coordinate model."""
    from redmax.forces._compiled import NE
    from redmax.forces.program import ENERGY_KEYS
    from redmax.friction.setup import friction_setup, has_friction

    full = model.coordinate_model
    prog = program_for(full)
    csolver = get_constrained_solver(constraint_solver)
    if prog.has_inequality and not csolver.inequalities:
        raise SimulationError(f"{model.name}: inequality constraints need constraint_solver 'qp' or 'auto', got "
                              f"{csolver.name!r}")
    d = model.dofs
    if slv.name == "auto":
        exact = not python and not program.coupling and not (friction_solver != "none" and has_friction(model))
        slv = slv.choose(full.ndof, program.symmetric and not python, opts.coriolis,
                         inequalities=prog.has_inequality, coupled=d.coupled, exact=exact,
                         rows=prog.nviol + full.ndof - model.ndof)
    n, t = time_grid(st.t, h, duration)
    nc, nb = full.ndof, full.nb
    Q = np.empty((n + 1, nc))
    QD = np.empty((n + 1, nc))
    JS = np.empty((n + 1, nb), dtype=np.int64)
    E = np.zeros((n + 1, NE))
    V = np.zeros((n + 1, prog.nviol))
    RE = np.zeros((n + 1, prog.nreact))
    q, qd, js = d.expand(st.q).astype(float), d.expand_rate(st.qd).astype(float), st.jstate.copy()
    Q[0], QD[0], JS[0] = q, qd, js
    friction = None
    if friction_solver != "none" and has_friction(model):
        friction = _FrictionRun(friction_setup(full), friction_solver, compat, n)
    compiled = (not python and slv.compiled and (slv.name == "dense" or slv.matrix_free) and not prog.has_inequality
                and csolver.name in ("auto", "kkt") and _COMPILED_LOOP and friction is None)
    dist = None
    watch = Watch(full, on_instability, model.name, t)
    slv.begin(full)
    if compiled:
        from redmax.integrators.constrained_loop import run_compiled

        run_compiled(model, program, opts, inputs, st, t, h, n, Q, QD, JS, E, V, RE, beta, progress, watch=watch,
                     solver=slv)
    else:
        dist = np.full(n + 1, np.inf) if _has_collision(prog) else None
        _run_python(model, program, python, opts, slv, csolver, inputs, q, qd, js, t, h, n, Q, QD, JS, E, V, RE,
                    beta, progress, dist, watch, friction)
    keys = set(energy_keys) if energy_keys is not None else {f.energy_key for f in _forces_of(full)
                                                               if f.energy_key is not None}
    energy = {k: E[:, i].copy() for i, k in enumerate(ENERGY_KEYS) if i < 4 or k in keys}
    energy["total"] = sum(energy.values())
    meta = {"integrator": "euler", "dt": h, "steps": n, "method": "redmax", "coriolis": opts.coriolis,
            "gravity": opts.gravity, "solver": slv.name, "compiled": bool(compiled), "baumgarte": beta,
            "constraint_solver": csolver.name, **slv.run_meta(n)}
    if dist is not None:
        meta["min_distance"] = dist
    if friction is not None:
        meta.update(friction.meta())
    viol = {c.name: V[:, prog.viol_off[k]:prog.viol_off[k + 1]].copy() for k, c in enumerate(prog.constraints)}
    reac = {c.name: RE[:, prog.react_off[k]:prog.react_off[k + 1]].copy() for k, c in enumerate(prog.constraints)}
    return Result(t, d.restrict(Q), d.restrict(QD), JS, energy, meta, viol, reac)


def euler_constrained(model, state, h, duration, forces, symmetrize, progress, inputs, coriolis, gravity, solver,
                      baumgarte, constraint_solver, *, on_instability="warn", friction_solver="none",
                      compat=None) -> Result:
    """``simulate(integrator="euler")`` for a model with constraints or couplings."""
    from redmax.integrators.euler_parts import _state, resolve_forces
    from redmax.integrators.step import StepOptions
    from redmax.solvers.linear import get_solver

    beta, _ = check_gains(baumgarte, BAUMGARTE_ACC)
    full = model.coordinate_model
    opts = StepOptions(coriolis, gravity, bool(symmetrize), getattr(solver, "name", solver))
    program, python, opts = resolve_forces(full, forces, opts)
    slv = get_solver(solver)
    st = _state(model, state)
    inp = model.inputs if inputs is None else inputs
    keys = {f.energy_key for f in _forces_of(full, forces) if f.energy_key is not None}
    return simulate_constrained(model, st, h, duration, program, python, opts, slv, inp, progress, beta=beta,
                                constraint_solver=constraint_solver, energy_keys=keys, on_instability=on_instability,
                                friction_solver=friction_solver, compat=compat)


def coordinate_state(model, state):
    """A state of ``model`` (its DOFs) as a state of its coordinate model (joint coordinates)."""
    from redmax.configuration import State
    from redmax.integrators.euler_parts import _state

    st = _state(model, state)
    d = model.dofs
    return State(np.array(d.expand(st.q), dtype=float), np.array(d.expand_rate(st.qd), dtype=float), st.t,
                 st.jstate)


def constrained_euler_step(model, state, h, tau=None, *, forces=None, inputs=None, coriolis="explicit",
                           gravity="explicit", symmetrize=False, solver="dense", baumgarte=BAUMGARTE,
                           constraint_solver="auto"):
    """``euler_step`` of a model with constraints or couplings: the state at ``t + h`` (the model's DOFs)."""
    from redmax.configuration import State
    from redmax.integrators.euler_parts import _inputs_tau, resolve_forces
    from redmax.integrators.step import StepOptions
    from redmax.solvers.linear import get_solver

    full = model.coordinate_model
    d = model.dofs
    st = coordinate_state(model, state)
    opts = StepOptions(coriolis, gravity, bool(symmetrize))
    program, python, opts = resolve_forces(full, forces, opts)
    reparameterize(full, st.q, st.qd, st.jstate)
    t_next = st.t + h
    if tau is not None and d.coupled and np.shape(tau) == (model.ndof,):  # torques on the DOFs
        full_tau = np.zeros(full.ndof)
        full_tau[d.dof_coord] = np.asarray(tau, dtype=float)
        tau = full_tau
    step = linearize(full, st.q, st.qd, st.jstate, t_next, h, _inputs_tau(full, inputs, t_next, tau), program,
                     python, opts)
    x, *_ = constrained_step(model, step, check_gains(baumgarte, BAUMGARTE_ACC)[0],
                             get_constrained_solver(constraint_solver), get_solver(solver))
    q1 = step.q + h * x
    if not (np.all(np.isfinite(q1)) and np.all(np.isfinite(x))):
        raise SimulationError(f"{model.name}: step at t = {st.t:.6g} gave a non-finite state")
    return State(np.array(d.restrict(q1)), np.array(d.restrict(x)), t_next, step.jstate)


def _forces_of(full, forces=None):
    from redmax.forces.builtin import model_forces, split_legacy

    return model_forces(full) if forces is None else split_legacy(forces)[0]


def _violation(full, prog, W, q, qd, t) -> np.ndarray:
    rows = evaluate_rows(full, prog, W, q, qd, t, 2)
    return rows.violation(prog)


def _state_workspace(full, q, qd, js) -> np.ndarray:
    Ii, Ff = full.packed
    W = np.zeros(work_offsets(full.nb, full.ndof).size)
    kinematics_stage(Ii, Ff, np.array(q, dtype=float), np.array(qd, dtype=float), np.array(js, dtype=np.int64), W)
    return W


class _FrictionRun:
    """The friction of a run: its setup, the state carried between steps and each step's report."""

    def __init__(self, setup, solver: str, compat, n: int):
        from redmax.friction.bisp import FrictionState

        self.setup, self.solver, self.compat = setup, solver, compat
        self.state = FrictionState()
        self.it = np.zeros(n, dtype=np.int64)
        self.work = np.zeros(n)
        self.unconverged: list[int] = []

    def step(self, k, model, step, prog, beta, reduced):
        from redmax.friction.bisp import bisp_step

        sol, rep = bisp_step(model, self.setup, step, prog, beta, reduced, self.state, self.compat)
        self.it[k] = rep.iterations
        self.work[k] = rep.work
        if not rep.converged:
            self.unconverged.append(k)
        return sol

    def meta(self) -> dict:
        return {"friction_solver": self.solver, "friction_iterations": self.it,
                "friction_unconverged": np.array(self.unconverged, dtype=np.int64), "friction_work": self.work,
                "compat": self.compat}


def _run_python(model, program, python, opts, slv, csolver, inputs, q, qd, js, t, h, n, Q, QD, JS, E, V, RE, beta,
                progress, dist, watch=None, friction=None):
    from redmax.integrators.euler_parts import Taus, _energies

    full = model.coordinate_model
    prog = program_for(full)
    warm: dict = {}
    taus = Taus(watch, inputs, n, full.ndof)
    for k in range(n):
        E[k] = _energies(full, program, python, Q[k], QD[k], JS[k], t[k])
        reparameterize(full, q, qd, js)
        tau = taus.at(k, inputs.torque(t[k + 1]))
        step = linearize(full, q, qd, js, t[k + 1], h, tau, program, python, opts)
        V[k] = _violation(full, prog, step.W, q, qd, t[k])
        if dist is not None:
            dist[k] = min_distances(full, prog, step.W)
        try:
            if friction is None:
                x, _rows, lam, react, act = constrained_step(model, step, beta, csolver, slv, warm)
            else:
                def reduced(extra, step=step, warm=warm):
                    return constrained_step(model, dataclasses.replace(step, b=step.b + extra), beta, csolver, slv,
                                            warm)

                x, _rows, lam, react, act = friction.step(k, full, step, prog, beta, reduced)
        except SimulationError as e:
            raise SimulationError(f"{model.name}: step {k} (t = {t[k]:.6g}): {e}") from None
        warm = {int(r): bool(lam[r] > 0.0) for r in act}
        q = step.q + h * x
        qd = x
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))):
            bad = int(np.flatnonzero(~(np.isfinite(q) & np.isfinite(qd)))[0])
            raise SimulationError(f"{model.name}: step {k} (t = {t[k]:.6g}): the new state is not finite (first at "
                                  f"coordinate '{full.dof_names[bad]}'); reduce the time step")
        Q[k + 1], QD[k + 1], JS[k + 1] = q, qd, js
        RE[k + 1] = react
        taus.check(k + 1, E, QD, h)
        if progress is not None:
            progress(t[k + 1], t[-1])
    E[n] = _energies(full, program, python, Q[n], QD[n], JS[n], t[n])
    taus.check(n, E, QD, h, last=True)
    W = _state_workspace(full, Q[n], QD[n], JS[n])
    V[n] = _violation(full, prog, W, Q[n], QD[n], t[n])
    if dist is not None:
        dist[n] = min_distances(full, prog, W)

