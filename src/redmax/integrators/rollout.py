"""Many trajectories of one model at once: :func:`rollout` (reinforcement learning, sampling-based control, restarts).

Each trajectory is the compiled linearly implicit Euler loop of :func:`redmax.simulate` (RedMax Eq. 2; with
equality constraints the KKT step of Eq. 4), run from its own initial state with its own joint torques.  The loop
releases the GIL, so the batch runs on ``threads`` Python threads, each taking the next trajectory when it
finishes one; every trajectory owns its workspaces, so it is bitwise the trajectory :func:`redmax.simulate` gives
for the same state and the same torques as a piecewise-constant input schedule, whatever the thread count.
Nothing process-wide is changed (no Numba or BLAS thread setting).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from redmax.errors import SimulationError

__all__ = ["RECORD", "Rollouts", "rollout"]

RECORD = ("q", "qdot", "energy", "reactions")
_OPTIONS = {"integrator", "coriolis", "gravity", "symmetrize", "solver", "baumgarte", "constraint_solver",
            "friction_solver", "on_instability"}


@dataclass
class Rollouts:
    """The trajectories of :func:`rollout`.

    Attributes:
        t: (steps + 1,) sample times.
        q, qdot: (B, steps + 1, n) when recorded (``record``), else None.
        energy: ``{key: (B, steps + 1)}`` as :attr:`redmax.Result.energy` when recorded, else None.
        reactions: ``{constraint: (B, steps + 1, k)}`` when recorded, else None.
        meta: ``integrator``, ``dt``, ``steps``, ``solver``, ``threads``, ``batch`` and ``failed``: a list of
            ``{"index", "step", "t", "quantity"}`` for the trajectories that went non-finite (their later samples
            are NaN).
    """

    t: np.ndarray
    q: np.ndarray | None = None
    qdot: np.ndarray | None = None
    energy: dict | None = None
    reactions: dict | None = None
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.meta.get("batch", 0))


def _batch(a, B: int | None, n: int, what: str) -> np.ndarray:
    """``a`` as a finite float array (B, n) (an (n,) row broadcast)."""
    try:
        x = np.array(a, dtype=float)
    except (TypeError, ValueError):
        raise SimulationError(f"rollout: {what} must be an array of numbers") from None
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2 or x.shape[1] != n or (B is not None and x.shape[0] not in (1, B)):
        want = f"({n},) or ({'B' if B is None else B}, {n})"
        raise SimulationError(f"rollout: {what} must have shape {want}, got {np.shape(a)}")
    if not np.all(np.isfinite(x)):
        raise SimulationError(f"rollout: {what} contains NaN or inf")
    return x


def _controls(controls, B: int, steps: int, n: int):
    """Per-trajectory torque rows: ``(C (B or 1, steps or 1, n), held)``."""
    try:
        C = np.array(controls, dtype=float)
    except (TypeError, ValueError):
        raise SimulationError("rollout: controls must be an array of numbers") from None
    if C.ndim == 3 and C.shape[1:] == (steps, n) and C.shape[0] in (1, B):
        return C
    if C.ndim == 2 and C.shape[1] == n:
        if C.shape[0] == steps and (B != steps or B == 1):
            return C[None]
        if C.shape[0] == B and B != steps:
            return C[:, None, :]
        if C.shape[0] == B:
            raise SimulationError(f"rollout: controls of shape {C.shape} are ambiguous (B = steps = {B}); give "
                                  f"them as (B, steps, n)")
    if C.ndim == 1 and C.shape[0] == n:
        return C[None, None, :]
    raise SimulationError(f"rollout: controls must have shape (B, steps, n), (steps, n) or (B, n) with B = {B}, "
                          f"steps = {steps}, n = {n}; got {C.shape}")


def _table(c, steps: int, n: int) -> np.ndarray:
    """One trajectory's torque table (steps, n), writeable and C-contiguous like the tables of ``rm.simulate`` (the
    compiled loop then runs the same specialisation: a read-only view would compile another one)."""
    if c.shape == (steps, n) and c.flags.c_contiguous and c.flags.writeable:
        return c
    return np.array(np.broadcast_to(c, (steps, n)), dtype=float, order="C")


def rollout(model, q0, qd0=None, *, dt, steps, controls=None, jstate0=None, threads=None, record=("q", "qdot"),
            **simulate_options) -> Rollouts:
    """B trajectories of ``model`` in one compiled call, parallel over the batch.

    Args:
        model: a :class:`redmax.Model` (with equality constraints or not) whose step runs compiled: no Python
            force, no inequality rows (limits, floors), no joint friction, no armature, no coupled joints.
        q0, qd0: (B, n) initial coordinates and rates, or (n,) for all (``qd0`` None: zero).
        dt: step (s).  steps: number of steps (each trajectory has steps + 1 samples).
        controls: joint torques ``controls[b, k]`` (n,) for the step from t_k to t_{k+1}: (B, steps, n),
            (steps, n) for every trajectory, or (B, n) held; None: the model's own inputs (its builder torques).
        jstate0: (B, nb) or (nb,) initial chart words (default the model's).
        threads: number of threads (default redmax's setting, :func:`redmax.set_num_threads`: every core).
        record: any of "q", "qdot", "energy", "reactions".
        simulate_options: as :func:`redmax.simulate` for linearly implicit Euler: ``coriolis``, ``gravity``,
            ``symmetrize``, ``solver`` ("auto", "dense", "pcg"), ``baumgarte``, ``constraint_solver``.
    Returns:
        :class:`Rollouts`.
    Raises:
        SimulationError: a model or option that only runs on the Python path (named), or bad shapes.
    """
    from redmax._kernels.pool import get_num_threads
    from redmax._validate import check_model
    from redmax.integrators.common import check_dt

    model = check_model(model, "rollout")
    bad = sorted(set(simulate_options) - _OPTIONS)
    if bad:
        raise SimulationError(f"rollout: unknown option {bad[0]!r} (options: {sorted(_OPTIONS)})")
    if simulate_options.get("integrator", "euler") != "euler":
        raise SimulationError(f"rollout: runs linearly implicit Euler ('euler'), got integrator="
                              f"{simulate_options['integrator']!r}")
    rec = (record,) if isinstance(record, str) else tuple(record)
    for r in rec:
        if r not in RECORD:
            raise SimulationError(f"rollout: record names one of {RECORD}, got {r!r}")
    if isinstance(steps, bool) or not isinstance(steps, int | np.integer) or steps < 1:
        raise SimulationError(f"rollout: steps must be a positive integer, got {steps!r}")
    steps = int(steps)
    check_dt(dt, steps * dt)
    h = float(dt)
    if threads is None:
        threads = get_num_threads()
    if isinstance(threads, bool) or not isinstance(threads, int | np.integer) or threads < 1:
        raise SimulationError(f"rollout: threads must be a positive integer, got {threads!r}")
    n, nb = model.ndof, model.nb
    Q0 = _batch(q0, None, n, "q0")
    B = Q0.shape[0]
    QD0 = _batch(np.zeros(n) if qd0 is None else qd0, None, n, "qd0")
    if QD0.shape[0] not in (1, B):
        B = QD0.shape[0] if B == 1 else B
        if QD0.shape[0] not in (1, B):
            raise SimulationError(f"rollout: q0 and qd0 have {Q0.shape[0]} and {QD0.shape[0]} rows")
    B = max(B, QD0.shape[0])
    plan = _Plan(model, h, steps, simulate_options)
    if controls is None:
        C = None
    else:
        C = _controls(controls, B, steps, n)
        if not np.all(np.isfinite(C)):
            raise SimulationError("rollout: controls contain NaN or inf")
        B = max(B, C.shape[0])
    if jstate0 is None:
        JS0 = np.asarray(model.jstate0, dtype=np.int64)[None]
    else:
        JS0 = np.array(jstate0, dtype=np.int64)
        JS0 = JS0[None] if JS0.ndim == 1 else JS0
        if JS0.ndim != 2 or JS0.shape[1] != nb or JS0.shape[0] not in (1, B):
            raise SimulationError(f"rollout: jstate0 must have shape ({nb},) or ({B}, {nb}), got {np.shape(jstate0)}")
    for name, a in (("q0", Q0), ("qd0", QD0)):
        if a.shape[0] not in (1, B):
            raise SimulationError(f"rollout: {name} has {a.shape[0]} rows for a batch of {B}")
    t = plan.t
    Q = np.empty((B, steps + 1, n))
    QD = np.empty((B, steps + 1, n))
    JS = np.empty((B, steps + 1, nb), dtype=np.int64)
    E = np.zeros((B, steps + 1, plan.ne))
    V = np.zeros((B, steps + 1, max(plan.nviol, 1)))
    RE = np.zeros((B, steps + 1, max(plan.nreact, 1)))
    failed = []
    lock = threading.Lock()
    nxt = [0]

    def one(b: int) -> None:
        st = plan.state(Q0[b % Q0.shape[0]], QD0[b % QD0.shape[0]], JS0[b % JS0.shape[0]])
        vals = None if C is None else _table(C[b % C.shape[0]], steps, n)
        status, k = plan.run(st, vals, Q[b], QD[b], JS[b], E[b], V[b], RE[b])
        if status != 0:
            from redmax.integrators._loop import STATUS

            Q[b, k + 1:] = np.nan
            QD[b, k + 1:] = np.nan
            E[b, k + 1:] = np.nan
            RE[b, k + 1:] = np.nan
            with lock:
                failed.append({"index": b, "step": int(k), "t": float(t[k]), "quantity": STATUS.get(status, "step")})

    def work(errors: list) -> None:
        while True:
            with lock:
                b = nxt[0]
                nxt[0] += 1
            if b >= B or errors:
                return
            try:
                one(b)
            except BaseException as e:  # re-raised by the calling thread
                errors.append(e)
                return

    errors: list = []
    helpers = [threading.Thread(target=work, args=(errors,), daemon=True) for _ in range(min(threads, B) - 1)]
    for th in helpers:
        th.start()
    work(errors)
    for th in helpers:
        th.join()
    if errors:
        raise errors[0]
    failed.sort(key=lambda f: f["index"])
    out = Rollouts(t, meta={"integrator": "euler", "dt": h, "steps": steps, "solver": plan.solver.name,
                            "threads": int(min(threads, B)), "batch": B, "failed": failed, "compiled": True})
    if "q" in rec:
        out.q = Q
    if "qdot" in rec:
        out.qdot = QD
    if "energy" in rec:
        out.energy = plan.energy_dict(E)
    if "reactions" in rec:
        out.reactions = plan.reaction_dict(RE)
    return out


class _Plan:
    """What every trajectory of a rollout shares: the compiled forces, the solver, the constraint program, the
    input table; and how one trajectory runs (:meth:`run`)."""

    def __init__(self, model, h: float, steps: int, o: dict):
        from redmax.forces._compiled import NE
        from redmax.friction.setup import has_friction
        from redmax.integrators.euler_parts import resolve_forces
        from redmax.integrators.step import StepOptions
        from redmax.solvers.linear import get_solver

        self.model, self.h, self.steps, self.ne = model, h, steps, NE
        name = model.name
        if model.uncoupled is not None:
            raise SimulationError(f"rollout: {name}: coupled joints (hyper-reduced coordinates) are not supported; "
                                  "call redmax.simulate per trajectory")
        if model.armature is not None:
            raise SimulationError(f"rollout: {name}: joint armature steps from Python; call redmax.simulate")
        if has_friction(model) and o.get("friction_solver", "bisp") != "none":
            raise SimulationError(f"rollout: {name}: joint or floor friction (BiSP) steps from Python; call "
                                  "redmax.simulate, or pass friction_solver='none'")
        solver = o.get("solver", "auto")
        opts = StepOptions(o.get("coriolis", "explicit"), o.get("gravity", "explicit"), bool(o.get("symmetrize",
                           False)), getattr(solver, "name", solver))
        program, python, opts = resolve_forces(model, None, opts)
        if python:
            raise SimulationError(f"rollout: {name}: force '{python[0].name}' has no compiled kernel (it is evaluated "
                                  "from Python); call redmax.simulate")
        slv = get_solver(solver)
        self.constrained = bool(model.constraints)
        self.nviol = self.nreact = 0
        self.beta = float(o.get("baumgarte", 5.0))
        if self.constrained:
            from redmax.constraints.program import program_for
            from redmax.solvers.constrained import get_constrained_solver

            prog = program_for(model)
            if prog.has_inequality:
                raise SimulationError(f"rollout: {name}: inequality rows (limits, floors, collisions) are solved as a "
                                      "QP from Python; call redmax.simulate")
            csolver = get_constrained_solver(o.get("constraint_solver", "auto"))
            if csolver.name not in ("auto", "kkt"):
                raise SimulationError(f"rollout: constraint_solver {csolver.name!r} steps from Python; use 'kkt'")
            if slv.name == "auto":
                slv = slv.choose(model.ndof, program.symmetric, opts.coriolis, inequalities=False, coupled=False,
                                 exact=not program.coupling, rows=prog.nviol)
            if not (slv.name == "dense" or slv.matrix_free):
                raise SimulationError(f"rollout: the {slv.name!r} solver steps constrained models from Python; use "
                                      "'dense', 'pcg' or 'recursive'")
            self.prog = prog
            self.nviol, self.nreact = prog.nviol, prog.nreact
        elif slv.name == "auto":
            slv = slv.choose(model.ndof, program.symmetric, opts.coriolis, exact=not program.coupling)
        if not slv.compiled:
            raise SimulationError(f"rollout: the {slv.name!r} solver steps from Python; use 'dense' or 'pcg'")
        if slv.matrix_free:
            slv.check(program.symmetric, opts.coriolis)
        self.program, self.opts, self.solver = program, opts, slv
        self.t = np.arange(steps + 1) * h  # t_k = t_0 + k h with t_0 = 0, as redmax.simulate's grid
        self.inputs = model.inputs.table(self.t[1:])
        from redmax.forces.builtin import model_forces

        self.keys = {f.energy_key for f in model_forces(model) if f.energy_key is not None}

    def state(self, q, qd, js):
        from redmax.configuration import State
        from redmax.integrators.euler_parts import _state

        return _state(self.model, State(q.copy(), qd.copy(), 0.0, js.copy()))

    def run(self, st, vals, Q, QD, JS, E, V, RE):
        """One trajectory into Q, QD, JS, E (steps + 1 rows), V, RE; returns (status, step)."""
        from redmax.integrators._constrained import call_address, pack_views
        from redmax.integrators._loop import euler_loop, init_workspace, workspace_sizes

        m, p, slv = self.model, self.program, self.solver
        pcg = slv.matrix_free
        if self.constrained:
            from redmax.integrators._constrained import constraint_views

            cv = constraint_views(m, self.beta, matrix_free=pcg)
            cvp, CI, CF, CB = pack_views(cv)
            cfn = call_address(cv.active)
            Vb = V[:, :self.nviol]
            REb = RE[:, :self.nreact]
        else:
            cv = cvp = None
            cfn, CI, CF, CB = 0, np.zeros(1, np.int64), np.zeros(1), np.zeros(1, np.bool_)
            Vb, REb = np.zeros((1, 1)), np.zeros((1, 1))
        pcgw, IT = None, np.zeros((1, 1), np.int64)
        if pcg:
            pcgw, IT = slv.compiled_workspace(m, p.symmetric, self.opts.coriolis, self.steps, cvp,
                                              m.dofs if self.constrained else None, p)
        nmat = m.ndof if pcgw is None else 0
        nf, ni = workspace_sizes(m.nb, m.ndof, p.nblocks, p.nincs, p.nscratch, p.npairs, nmat)
        WF, WI = np.zeros(nf), np.zeros(ni, dtype=np.int64)
        Ii, Ff = m.packed
        init_workspace(Ii, p.nblocks, p.nincs, p.nscratch, p.npairs, nmat, WF, WI)
        if vals is None:
            times, table, per_step = self.inputs
        else:
            times, table, per_step = self.t[1:], vals, True
        q, qd, js = st.q.copy(), st.qd.copy(), st.jstate.copy()
        Q[0], QD[0], JS[0] = q, qd, js
        status, k, _ = euler_loop(Ii, Ff, p.hdr, p.fi, p.ff, p.nblocks, p.nincs, p.nscratch, p.npairs, p.symmetric,
                                  True if self.opts.coriolis == "implicit" else None, m.reparam_joints, times, table,
                                  per_step, q, qd, js, 0.0, self.h, 0, self.steps, Q, QD, JS, E, cfn, CI, CF, CB, Vb,
                                  REb, WF, WI, pcgw, IT)
        del cv  # kept alive through the loop: the packed views point into it
        return status, k

    def energy_dict(self, E) -> dict:
        from redmax.forces.program import ENERGY_KEYS

        out = {k: E[:, :, i].copy() for i, k in enumerate(ENERGY_KEYS) if i < 4 or k in self.keys}
        out["total"] = sum(out.values())
        return out

    def reaction_dict(self, RE) -> dict:
        if not self.constrained:
            return {}
        p = self.prog
        return {c.name: RE[:, :, p.react_off[k]:p.react_off[k + 1]].copy() for k, c in enumerate(p.constraints)}
