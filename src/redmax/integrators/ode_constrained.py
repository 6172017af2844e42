"""The ODE integrators (``rk45``, ``dop853``, ...) with constraints and hyper-reduced coordinates.

Constraints enter at acceleration level with Baumgarte gains ``(b1, b2)`` (Sueda notes §1.12, Eq. 1.97):

    G q̈ = -(Ġ q̇ + gddot) - 2 b1 (G q̇ + gdot) - b2² g          (equalities)
    C q̈ <= -Ċ q̇ - 2 b1 C q̇ - b2² c                               (inequalities active at the state)

so a prescribed joint follows ``q̈ = q̈* + 2 b1 (q̇* - q̇) + b2² (q* - q)`` (the original's defect of using the
joint's own rate as the target rate is not copied).

* ``method="redmax"``: ``M_R q̈ + G^T lam = f_R`` with the dense RedMax system in the model's DOFs
  (``M_R = T^T J^T M J T``), by a dense KKT solve, or the QP (DAQP) when an inequality row is active.
* ``method="recursive"``: the O(n) hybrid dynamics (Kim & Pollard 2011; supplemental Alg. 6) takes the prescribed
  joints (their q̈ from the Baumgarte law), and every other row goes through the Schur complement
  ``S = G H^-1 G^T`` built from ``m + 1`` hybrid-dynamics solves (``H^-1`` = the response of the free DOFs with the
  prescribed ones held).  Coupled models and active inequalities use the dense path.

The reactions per sample are ``-G^T lam`` at the sample (a force, not an impulse).
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from redmax.configuration import State, charts_for
from redmax.constraints.prescribed import PrescribedJoint
from redmax.constraints.program import constraint_reactions, evaluate_rows, program_for
from redmax.dynamics import hybrid_dynamics
from redmax.dynamics.redmax import applied_terms, redmax_system
from redmax.errors import ModelError, SimulationError
from redmax.integrators.common import _METHODS, Result, record_energies, reparameterize, time_grid
from redmax.integrators.constrained import _has_collision, _state_workspace, check_gains, min_distances
from redmax.integrators.instability import watch_samples
from redmax.kinematics import kinematics

__all__ = ["constrained_accelerations", "simulate_ode_constrained"]

_EVENT_MARGIN = 1e-6


def _rows(full, prog, q, qd, js, t):
    W = _state_workspace(full, q, qd, js)
    return W, evaluate_rows(full, prog, W, q, qd, t, 1)


def constrained_accelerations(model, q, qd, t, jstate, forces=None, method="redmax", inputs=None,
                              baumgarte_acc=(5.0, 5.0), want_reactions=False):
    """q̈ (ndof,) of ``model`` at (q, qd) (its DOFs) with its constraints at acceleration level.

    Returns q̈, or (q̈, reactions (nreact,)) with ``want_reactions``."""
    full = model.coordinate_model
    d = model.dofs
    prog = program_for(full)
    b1, b2 = baumgarte_acc
    qj = np.asarray(d.expand(q), dtype=float)
    qdj = np.asarray(d.expand_rate(qd), dtype=float)
    js = charts_for(full, jstate)
    tau = (full.inputs if inputs is None else inputs).torque(t)
    W, rows = _rows(full, prog, qj, qdj, js, t)
    eq = np.flatnonzero(rows.kind == 0)
    act = np.flatnonzero(rows.kind == 1)
    Gq = rows.G @ qdj
    rhs = -rows.ga - 2.0 * b1 * (Gq + rows.gd) - b2 * b2 * rows.g
    lam = np.zeros(rows.m)
    pj = [c for c in prog.constraints if isinstance(c, PrescribedJoint)]
    if method == "recursive" and not d.coupled and act.size == 0:
        qdd, lam_r, tau_p = _recursive(full, prog, rows, rhs, eq, qj, qdj, js, t, tau, forces, pj)
        lam[eq] = lam_r
    else:
        if method not in ("redmax", "recursive"):
            raise SimulationError(f"unknown dynamics method {method!r}; expected 'redmax' or 'recursive'")
        sys = redmax_system(full, qj, qdj, t, js, forces, tau=tau)
        M, f = sys.Mr, sys.fr
        G, C = rows.G[eq], rows.G[act]
        if d.coupled:
            T = d.T
            M, f, G, C = T.T @ M @ T, T.T @ f, G @ T, C @ T
        if act.size:
            from redmax.solvers.qp import solve_qp

            x, lg, lc = solve_qp(M, f, G, rhs[eq], C, rhs[act], True)
            lam[act] = lc
        else:
            x, lg = _kkt_dense(M, f, G, rhs[eq])
        lam[eq] = lg
        qdd = x
        tau_p = None
    if not want_reactions:
        return qdd
    react = constraint_reactions(full, prog, W, rows, lam, 1.0)
    _prescribed_torques(full, prog, rows, react, lam, tau_p, qj, qdj, js, t, forces, tau, pj)
    return qdd, react


def _kkt_dense(M, f, G, r):
    n, m = M.shape[0], G.shape[0]
    if m == 0:
        return np.linalg.solve(M, f), np.zeros(0)
    K = np.zeros((n + m, n + m))
    K[:n, :n], K[:n, n:], K[n:, :n] = M, G.T, G
    sol = np.linalg.lstsq(K, np.concatenate([f, r]), rcond=1e-13)[0]
    return sol[:n], sol[n:]


def _recursive(full, prog, rows, rhs, eq, q, qd, js, t, tau, forces, pj):
    """Hybrid dynamics for the prescribed joints + Schur complement for the other equality rows."""
    nb = full.nb
    pres = np.zeros(nb, dtype=bool)
    qdd_in = np.zeros(full.ndof)
    pj_rows = []
    for c in pj:
        k = prog.constraints.index(c)
        r0 = rows.roff[k]
        for j, dof in enumerate(c.dofs):
            qdd_in[dof] = -rhs[r0 + j]  # G = -I: -q̈ = rhs
            pj_rows.append(r0 + j)
        pres[full.dof_joint[c.dofs[0]]] = True
    kin = kinematics(full, q, qd, js)
    terms = applied_terms(full, kin, t, forces)
    tq = terms.fr + tau
    fext = terms.fm_body(kin)
    qdd_u, tau_u = hybrid_dynamics(full, q, qd, tq, qdd_in, pres, f_ext=fext, jstate=js)
    other = [r for r in eq if r not in set(pj_rows)]
    lam = np.zeros(eq.size)
    if not other:
        return qdd_u, lam, tau_u
    zero = np.zeros(full.ndof)
    G = rows.G[other]
    Y = np.zeros((full.ndof, len(other)))
    TY = np.zeros((full.ndof, len(other)))
    for k in range(len(other)):
        Y[:, k], TY[:, k] = hybrid_dynamics(full, q, zero, G[k], zero, pres, jstate=js, gravity=False)
    S = G @ Y
    lo = np.linalg.lstsq(S, G @ qdd_u - rhs[other], rcond=1e-11)[0]
    qdd = qdd_u - Y @ lo
    # the torque a prescribed joint needs: the hybrid-dynamics torque of the realised motion plus the other rows'
    # own pull on its coordinates (-G^T lam acts there too): tau_motor = tau_total + (G^T lam)_p
    tau_p = tau_u - TY @ lo + G.T @ lo
    pos = {r: i for i, r in enumerate(eq)}
    for i, r in enumerate(other):
        lam[pos[r]] = lo[i]
    return qdd, lam, tau_p


def _prescribed_torques(full, prog, rows, react, lam, tau_p, q, qd, js, t, forces, tau, pj):
    """Required torques of prescribed joints: the hybrid-dynamics torque (recursive), or ``lam`` with the joint's
    own reduced forces and input removed (they act through its row only)."""
    if not pj:
        return
    fr = None
    if tau_p is None:
        kin = kinematics(full, q, qd, js)
        fr = applied_terms(full, kin, t, forces).fr
    for c in pj:
        k = prog.constraints.index(c)
        o = prog.react_off[k]
        for j, dof in enumerate(c.dofs):
            if tau_p is not None:
                react[o + j] = tau_p[dof]
            else:
                react[o + j] += fr[dof] + tau[dof]


def simulate_ode_constrained(model, state, h, duration, integrator, method, rtol, atol, forces, progress, inputs,
                             baumgarte_acc, *, on_instability="warn") -> Result:
    """:func:`redmax.integrators.ode.simulate_ode` for models with constraints or couplings."""
    from redmax.forces.builtin import model_forces, split_legacy
    from redmax.integrators.instability import StepGuard, rate_bounds

    _, gains = check_gains(5.0, baumgarte_acc)
    key = integrator.lower()
    full = model.coordinate_model
    d = model.dofs
    prog = program_for(full)
    forces = model_forces(full) if forces is None else split_legacy(forces)[0]
    if not isinstance(state, State):
        raise SimulationError(f"{model.name}: state must be a redmax.State, got {type(state).__name__}")
    n, t_samples = time_grid(state.t, h, duration)
    nd = model.ndof
    q0, qd0 = model.check_state(state.q, state.qd)
    qj, qdj = np.array(d.expand(q0), dtype=float), np.array(d.expand_rate(qd0), dtype=float)
    js = np.array(charts_for(full, state.jstate, q=qj), dtype=np.int64)
    reparameterize(full, qj, qdj, js)
    q, qd = np.array(d.restrict(qj)), np.array(d.restrict(qdj))
    qs = np.empty((n + 1, nd))
    qds = np.empty((n + 1, nd))
    jss = np.empty((n + 1, model.nb), dtype=np.int64)
    qs[0], qds[0], jss[0] = q, qd, js
    filled, t, t_end = 1, float(t_samples[0]), float(t_samples[-1])
    nfev = nrestart = 0
    bounds = None if d.coupled else rate_bounds(full, _state_kinematics(full, qj, qdj, js))
    guard = StepGuard(model.name, key, _METHODS[key], t_end, model.dof_names, bounds)
    while filled <= n:
        cur_js = js.copy()

        def rhs(tt, y, cur_js=cur_js):
            if progress is not None:
                progress(tt, t_end)
            guard(tt, y[nd:])
            try:
                qdd = constrained_accelerations(model, y[:nd], y[nd:], tt, cur_js, forces, method, inputs, gains)
            except (ModelError, np.linalg.LinAlgError) as e:
                raise SimulationError(f"{model.name}: at t = {tt:.6g}: {e}") from None
            return np.concatenate([y[nd:], qdd])

        events = None
        if full.reparam_joints.size:
            def ev(tt, y, cur_js=cur_js):
                return float(np.min(full.events(d.expand(y[:nd]), cur_js)))

            ev.terminal = True
            ev.direction = -1
            events = ev
        sol = solve_ivp(rhs, (t, t_end), np.concatenate([q, qd]), method=_METHODS[key], t_eval=t_samples[filled:],
                        events=events, rtol=rtol, atol=atol)
        nfev += sol.nfev
        if sol.status == -1:
            raise SimulationError(f"{model.name}: ODE integration failed at t = {t:.6g}: {sol.message}")
        k = sol.t.size
        if k:
            qs[filled:filled + k] = sol.y[:nd].T
            qds[filled:filled + k] = sol.y[nd:].T
            jss[filled:filled + k] = js
            filled += k
        if sol.status == 1 and filled <= n:
            y = sol.y_events[0][0]
            t = float(sol.t_events[0][0])
            qj, qdj = np.array(d.expand(y[:nd]), dtype=float), np.array(d.expand_rate(y[nd:]), dtype=float)
            if not reparameterize(full, qj, qdj, js, margin=_EVENT_MARGIN):
                raise SimulationError(f"{model.name}: re-parameterisation event at t = {t:.6g} changed nothing")
            q, qd = np.array(d.restrict(qj)), np.array(d.restrict(qdj))
            nrestart += 1
        elif filled <= n:
            raise SimulationError(f"{model.name}: ODE integration stopped early at t = {t:.6g}: {sol.message}")
    QJ = np.array([d.expand(x) for x in qs])
    QDJ = np.array([d.expand_rate(x) for x in qds])
    energy = record_energies(full, forces, QJ, QDJ, jss)
    watch_samples(full, on_instability, t_samples, energy, QDJ, inputs, model.name)
    V = np.zeros((n + 1, prog.nviol))
    RE = np.zeros((n + 1, prog.nreact))
    dist = np.full(n + 1, np.inf) if _has_collision(prog) else None
    for k in range(n + 1):
        W = _state_workspace(full, QJ[k], QDJ[k], jss[k])
        V[k] = evaluate_rows(full, prog, W, QJ[k], QDJ[k], t_samples[k], 2).violation(prog)
        if dist is not None:
            dist[k] = min_distances(full, prog, W)
        if k > 0:
            _, RE[k] = constrained_accelerations(model, qs[k], qds[k], t_samples[k], jss[k], forces, method, inputs,
                                                 gains, want_reactions=True)
    meta = {"integrator": key, "dt": h, "steps": n, "method": method, "rtol": rtol, "atol": atol, "nfev": nfev,
            "reparameterizations": nrestart, "baumgarte_acc": tuple(gains)}
    if dist is not None:
        meta["min_distance"] = dist
    viol = {c.name: V[:, prog.viol_off[k]:prog.viol_off[k + 1]].copy() for k, c in enumerate(prog.constraints)}
    reac = {c.name: RE[:, prog.react_off[k]:prog.react_off[k + 1]].copy() for k, c in enumerate(prog.constraints)}
    return Result(t_samples, qs, qds, jss, energy, meta, viol, reac)



def _state_kinematics(full, q, qd, js):
    """The joint Jacobians S (6, ncoord) of the coordinate model at a state."""
    return kinematics(full, q, qd, js).S
