"""A stepping object for controllers: one compiled linearly implicit Euler step per call.

    sim = rm.Simulator(model, dt=1e-3)
    for k in range(1000):
        tau = controller(sim.q, sim.qd)
        sim.step(tau)

Each :meth:`Simulator.step` runs the same compiled step as ``simulate(integrator="euler")`` (re-parameterisation,
forces, right-hand side, assembly, Cholesky/LU; :mod:`redmax.integrators._loop`) on workspaces allocated once,
with a handful of array arguments, so the per-call cost is the step itself plus Numba's dispatch.
"""

from __future__ import annotations

import numpy as np

from redmax.configuration import State
from redmax.errors import SimulationError
from redmax.integrators._loop import energies_at, init_workspace, sim_step, workspace_sizes
from redmax.integrators.euler_parts import _raise, _state, resolve_forces
from redmax.integrators.instability import FACTOR, check_mode, energy_scale, report
from redmax.integrators.step import StepOptions
from redmax.solvers.linear import get_solver

__all__ = ["Simulator"]


def _compiled_solver(solver, n: int, symmetric: bool, coriolis: str, coupled: bool, exact: bool = False,
                     rows: int = 0):
    """The linear solver of a Simulator: "dense", "pcg" or "recursive" (compiled); "auto" chooses among them by
    size, structure and symmetry (:class:`redmax.solvers.auto.AutoSolver`, with the dense solve where it would take
    the sparse one)."""
    slv = get_solver(solver)
    if slv.name == "auto":
        slv = slv.choose(n, symmetric, coriolis, coupled=coupled, exact=exact, rows=rows)
        if not (slv.name == "dense" or slv.matrix_free):
            slv = get_solver("dense")
    if not (slv.name == "dense" or slv.matrix_free):
        raise SimulationError(f"Simulator: solver {slv.name!r} does not run in the compiled step; use 'dense', "
                              "'pcg', 'recursive' or 'auto'")
    if slv.matrix_free:
        slv.check(symmetric, coriolis)
    return slv

CHECK_EVERY = 8  # steps between two looks at the rates (the instability check; a few microseconds each)


class Simulator:
    """Step ``model`` with linearly implicit Euler from Python, one step per :meth:`step` call.

    Args:
        model: a compiled Model (all its forces need compiled kernels: every built-in force has one).
        state: the initial :class:`redmax.State` (default: the model's).
        dt: the step (s).
        forces, inputs, coriolis, gravity, symmetrize: as :func:`redmax.simulate`; ``inputs`` give the torques
            of steps called without ``tau``.
        solver: "auto" (default: the dense solve below 200 DOFs, PCG from there for a symmetric step), "dense",
            "pcg" or a :class:`redmax.solvers.PCGSolver` (its tol and max_iter): the linear solver of each step.
        baumgarte: the constraints' velocity-level stabilisation gain (as :func:`redmax.simulate`; 5).
        on_instability: "warn" (default), "raise" or "ignore": every ``CHECK_EVERY`` (8) steps the rates are
            compared with what the model can explain (:mod:`redmax.integrators.instability`): the energy of each
            rate alone, ``1/2 sum_i M_ii(q0) qd_i^2`` with M_ii at the state the simulator was created with, above
            1e6 times the model's energy scale at the last :meth:`reset` plus the work of the torques since, gives
            one :class:`redmax.SimulationWarning` (per reset) naming the step, time and DOF, or a
            :class:`redmax.SimulationError`.
    Attributes:
        model, dt, solver (the one chosen).  ``pcg_iterations`` (PCG's iterations in the last step).  ``state``
        (get/set a :class:`redmax.State`), ``q``, ``qd``, ``t``, ``jstate`` (read-only views).

    The step runs on the calling thread; from ``LAPACK_MIN`` (40) DOFs on its factorisations are LAPACK's (SciPy's
    OpenBLAS, with the thread count the process gave it: redmax does not change it).
    """

    def __init__(self, model, state=None, dt: float = 1e-3, *, forces=None, inputs=None, coriolis: str = "explicit",
                 gravity: str = "explicit", symmetrize: bool = False, on_instability: str = "warn",
                 solver="auto", baumgarte: float = 5.0):
        from redmax.integrators.common import check_dt, check_model

        model = check_model(model, "Simulator")
        check_dt(dt, 0.0)
        self._mode = check_mode(on_instability)
        opts = StepOptions(coriolis, gravity, bool(symmetrize))
        program, python, opts = resolve_forces(model.coordinate_model, forces, opts)
        if python:
            raise SimulationError(f"{model.name}: Simulator needs compiled forces; force(s) "
                                  f"{', '.join(repr(f.name) for f in python)} have Python laws (use euler_step)")
        full = model.coordinate_model
        from redmax.constraints.program import program_for

        rows = (program_for(full).nviol if full.constraints else 0) + full.ndof - model.ndof
        self.solver = _compiled_solver(solver, full.ndof, program.symmetric, opts.coriolis, model.dofs.coupled,
                                       not program.coupling, rows)
        pcg = self.solver.matrix_free
        from redmax.integrators._constrained import CALL_TABLE, call_address, constraint_views, pack_views

        beta = float(baumgarte) if isinstance(baumgarte, int | float | np.number) else float("nan")
        if not (np.isfinite(beta) and beta >= 0.0):
            raise SimulationError(f"{model.name}: baumgarte must be a finite number >= 0, got {baumgarte!r}")
        self._cv, *self._C = pack_views(constraint_views(model, beta, matrix_free=pcg))
        self._cfn, self._CT = call_address(self._cv.active), np.zeros(CALL_TABLE, np.int64)
        self._pcgw, self._IT = None, None
        if pcg:
            self._pcgw, self._IT = self.solver.compiled_workspace(full, program.symmetric, opts.coriolis, 1, self._cv,
                                                                  model.dofs, program)
        self.model = model
        self.dt = float(dt)
        self.inputs = model.inputs if inputs is None else inputs
        self._program = program
        n, nb = full.ndof, model.nb
        rep = np.asarray(model.reparam_joints, dtype=np.int64)
        self._PI = np.concatenate([[program.hdr.shape[0], int(program.symmetric), int(opts.coriolis == "implicit"),
                                    program.nblocks, program.nincs, program.nscratch, program.npairs, rep.size], rep,
                                   program.hdr.reshape(-1), program.fi]).astype(np.int64)
        self._PI.setflags(write=program.hdr.flags.writeable)  # the header's tag (redmax.forces.program)
        nmat = 0 if pcg else n  # PCG: no n x n matrix in the workspace
        nf, ni = workspace_sizes(nb, n, program.nblocks, program.nincs, program.nscratch, program.npairs, nmat)
        self._WF = np.zeros(nf)
        self._WI = np.zeros(ni, dtype=np.int64)
        init_workspace(model.packed[0], program.nblocks, program.nincs, program.nscratch, program.npairs, nmat,
                       self._WF, self._WI)
        self._X = np.zeros(2 * n + 2)
        self._js = np.zeros(nb, dtype=np.int64)
        self._tau = np.zeros(n)
        self._n = n
        self._no_inputs = self.inputs.empty
        self._qd = self._X[n:2 * n]  # a view: the rates of the instability check
        self._sqm = None
        self.reset(state)
        if self._mode != "ignore":  # sqrt(M_ii) at the start: 1/2 |sqm * qd|^2 is the energy of each rate alone
            self._sqm = np.sqrt(np.maximum(self._diagonal_inertia(), 0.0))
            self._buf = np.empty(n)

    def close(self) -> None:
        """Nothing to release (kept so that ``with Simulator(...) as sim:`` and ``sim.close()`` keep working)."""

    def __enter__(self) -> Simulator:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- state ---------------------------------------------------------------------------------------
    def reset(self, state=None) -> None:
        """Back to ``state`` (default: the model's initial state); the instability check starts afresh."""
        self.state = self.model.initial_state() if state is None else state
        self._steps = 0  # steps taken since the last reset (named in errors)
        self._work = 0.0  # |work| of the torques since the reset (an estimate from every CHECK_EVERY-th step)
        self._fired = self._mode == "ignore"
        if not self._fired:
            E0 = self._energy_row(self._X[:self._n].copy(), self._X[self._n:2 * self._n].copy(), self._js.copy())
            self._scale = energy_scale(self.model.coordinate_model, E0)

    @property
    def state(self) -> State:
        """A copy of the current state (the model's DOFs)."""
        n, d = self._n, self.model.dofs
        return State(d.restrict(self._X[:n]).copy(), d.restrict(self._X[n:2 * n]).copy(), float(self._X[2 * n]),
                     self._js.copy())

    @state.setter
    def state(self, state) -> None:
        st = _state(self.model, state)
        n, d = self._n, self.model.dofs
        self._X[:n] = d.expand(st.q)
        self._X[n:2 * n] = d.expand_rate(st.qd)
        self._X[2 * n] = st.t
        self._X[2 * n + 1] = self.dt
        self._js[:] = st.jstate

    @property
    def q(self) -> np.ndarray:
        """Current coordinates (ndof,) (a read-only view; a copy for a model with coupled joints)."""
        v = self.model.dofs.restrict(self._X[:self._n])
        v.flags.writeable = False
        return v

    @property
    def qd(self) -> np.ndarray:
        """Current rates (ndof,) (a read-only view; a copy for a model with coupled joints)."""
        n = self._n
        v = self.model.dofs.restrict(self._X[n:2 * n])
        v.flags.writeable = False
        return v

    @property
    def pcg_iterations(self) -> np.ndarray | None:
        """The PCG iterations of each solve of the last step (1 + rows,), None with the dense solver."""
        if self._pcgw is None:
            return None
        its = self._pcgw[18]
        return its[:max(int(its[-1]), 1)].copy()

    @property
    def t(self) -> float:
        return float(self._X[2 * self._n])

    @property
    def jstate(self) -> np.ndarray:
        v = self._js.view()
        v.flags.writeable = False
        return v

    # -- stepping ------------------------------------------------------------------------------------
    def step(self, tau=None) -> None:
        """Advance one step of ``dt`` with input torques ``tau`` (ndof,) for this step (default: the inputs at the
        end of the step).  Raises SimulationError naming the step's time and what went non-finite."""
        if tau is None:
            if self._no_inputs:
                tau = self._tau
            else:
                tau = self.inputs.torque(self._X[2 * self._n] + self.dt)
        elif not (type(tau) is np.ndarray and tau.dtype == np.float64 and tau.shape == self._tau.shape):
            tau = np.asarray(tau, dtype=float)
            if self.model.uncoupled is not None and tau.shape == (self.model.ndof,):  # torques on the DOFs
                full = np.zeros(self._n)
                full[self.model.dofs.dof_coord] = tau
                tau = full
            if tau.shape != self._tau.shape:
                raise SimulationError(f"{self.model.name}: tau must have shape {self._tau.shape}, got {tau.shape}")
        Ii, Ff = self.model.packed
        CI, CF, CB = self._C
        status, idx = sim_step(Ii, Ff, self._PI, self._program.ff, self._WF, self._WI, self._X, self._js, tau,
                               self._cfn, self._CT, CI, CF, CB, self._pcgw)
        if status != 0:
            n = self._n
            t = float(self._X[2 * n])
            _raise(self.model.coordinate_model, self._program, status, 0, idx, np.array([t]), self.dt, self._X[:n],
                   self._X[n:2 * n], self._js, label=self._steps, solver=self.solver)
        self._steps += 1
        if not self._fired and self._steps % CHECK_EVERY == 0:
            self._check(tau)

    def _check(self, tau) -> None:
        """The rate rule (class docstring) at the current state; ``tau`` the last step's torques."""
        b = self._buf
        np.multiply(self._sqm, self._qd, out=b)
        T = 0.5 * float(b.dot(b))
        if tau is not self._tau:
            self._work += CHECK_EVERY * self.dt * abs(float(np.dot(tau, self._qd)))
        if T > FACTOR * (self._scale + self._work) or T != T:
            self._fired = True
            k = int(np.argmax(np.abs(b)))
            dof = self.model.coordinate_model.dof_names[k]
            report(self._mode, f"{self.model.name}: unstable simulation: at step {self._steps} (t = {self.t:.6g}) the "
                               f"rate of DOF '{dof}' is {float(self._qd[k]):.4g}; the energy of the rates alone "
                               f"(1/2 sum M_ii qd_i^2) is {T:.4g}, more than {FACTOR:.0e} times the model's energy "
                               f"scale {self._scale:.4g} (plus the torques' work {self._work:.4g}).")

    def _diagonal_inertia(self) -> np.ndarray:
        """M_ii (ncoord,) at the current state: twice the kinetic energy of each unit rate alone."""
        n = self._n
        q, js = self._X[:n].copy(), self._js.copy()
        out = np.empty(n)
        e = np.zeros(n)
        for i in range(n):
            e[:] = 0.0
            e[i] = 1.0
            out[i] = 2.0 * self._energy_row(q, e, js)[0]
        return out

    def _energy_row(self, q, qd, js) -> np.ndarray:
        """Energy components (NE,) (kinetic, gravity, joint springs, springs, applied, deformable) at (q, qd, js)."""
        Ii, Ff = self.model.packed
        return energies_at(Ii, Ff, self._program, q, qd, js)

    def energy(self) -> dict:
        """Energies at the current state (kinetic, gravity, joint_springs, springs, applied, total)."""
        from redmax.forces.program import ENERGY_KEYS

        n = self._n
        E = self._energy_row(self._X[:n].copy(), self._X[n:2 * n].copy(), self._js.copy())
        out = dict(zip(ENERGY_KEYS, map(float, E), strict=True))
        out["total"] = sum(out.values())
        return out
