"""solver="pcg" (RedMax paper §3, Eq. 3, Alg. 1): the compiled matrix-free operator against the dense step matrix,
the projected block-Jacobi preconditioner against the dense inverse of the projected system (built here from J
column by column, independently of the recursion), PCG against the dense solve, one iteration when no spring joins
two moving bodies, loops closed, the refusals, and memory linear in the DOFs."""

import dataclasses
import tracemalloc

import numpy as np
import pytest

import redmax as rm
from redmax import scenes
from redmax.constraints.program import program_for
from redmax.integrators._stages import inertia_world
from redmax.integrators.euler import linearized_step
from redmax.solvers._pcg import apply_A, pcg_projected, pcg_rows, precondition_apply, precondition_setup
from redmax.solvers.auto import RECURSIVE_FROM, RECURSIVE_ROWS
from redmax.solvers.pcg import PCGSolver, pack_blocks

from tolerances import rel

CASES = [("paper/tree", {"levels": 2}), ("paper/umbrella", {"n": 3}), ("paper/bridge", {"n_deck": 6, "n_tower": 2,
                                                                                         "load": 2.4e6})]


def _step(name, params, seed=0, blocks=True):
    """A linearised step of the scene at a random state (and, with ``blocks``, reduced blocks added: a symmetric one
    inside one joint and one across two joints), h = 1e-2."""
    s = scenes.load(name, **params)
    m = s.model
    rng = np.random.default_rng(seed)
    q = m.q0 + 0.2 * rng.normal(size=m.ndof)
    qd = rng.normal(size=m.ndof)
    step = linearized_step(m, rm.State(q, qd, 0.0, m.jstate0), 1e-2)
    if blocks:
        multi = [i for i in range(m.nb) if m.idx[i + 1] - m.idx[i] >= 2]
        d = np.arange(m.idx[multi[0]], m.idx[multi[0] + 1]) if multi else np.array([0])
        B = rng.normal(size=(d.size, d.size))
        across = np.array([0, m.ndof - 1])
        C = rng.normal(size=(2, 2))
        step = dataclasses.replace(step, rblocks=[(d, B @ B.T), (across, C + C.T)])
    return m, step


def _apply(m, step, x):
    Ii, _ = m.packed
    out = np.zeros(m.ndof)
    S = np.zeros((3, m.nb, 6))
    apply_A(Ii, step.W, step.bpair, step.bB, step.bpair.shape[0], step.rdiag, *pack_blocks(step.rblocks, m.ndof), x,
            S[0], S[1], S[2], out)
    return out


@pytest.mark.parametrize("name,params", CASES)
def test_the_compiled_operator_is_the_dense_step_matrix(name, params):
    m, step = _step(name, params)
    A = step.dense()
    X = np.random.default_rng(1).normal(size=(3, m.ndof))
    for x in X:
        assert rel(_apply(m, step, x), A @ x) < 1e-12


def _projected_dense(m, step):
    """``J^T blkdiag(I_i + B_ii) J + R`` (R: rdiag and the reduced blocks inside one joint), from J's columns."""
    n, nb = m.ndof, m.nb
    Jc = np.stack([step.J(e) for e in np.eye(n)], axis=-1)  # (nb, 6, n)
    Ii, _ = m.packed
    P = np.diag(step.rdiag).astype(float)
    for i in range(nb):
        Iw = np.zeros((6, 6))
        for c in range(6):
            V = np.zeros((nb, 6))
            V[i, c] = 1.0
            F = np.zeros((nb, 6))
            inertia_world(Ii, step.W, V, F)
            Iw[:, c] = F[i]
        for (a, c), blk in zip(step.bpair, step.bB, strict=True):
            if a == c == i:
                Iw += blk
        P += Jc[i].T @ Iw @ Jc[i]
    joint = np.repeat(np.arange(nb), np.diff(m.idx))
    for dofs, blk in step.rblocks:
        if len(set(joint[dofs])) == 1:
            P[np.ix_(dofs, dofs)] += blk
    return P


@pytest.mark.parametrize("name,params", CASES)
def test_the_preconditioner_is_the_inverse_of_the_projected_system(name, params):
    m, step = _step(name, params, seed=2)
    Ii, _ = m.packed
    n, nb = m.ndof, m.nb
    U, Psi, Mh = np.zeros((n, 6)), np.zeros((n, 6)), np.zeros((nb, 6, 6))
    assert precondition_setup(Ii, step.W, step.bpair, step.bB, step.bpair.shape[0], step.rdiag,
                              *pack_blocks(step.rblocks, n), Mh, U, Psi) == -1
    P = _projected_dense(m, step)
    r = np.random.default_rng(3).normal(size=n)
    z = np.zeros(n)
    precondition_apply(Ii, step.W, U, Psi, r, np.zeros((nb, 6)), np.zeros((nb, 6)), z)
    assert rel(z, np.linalg.solve(P, r)) < 1e-10
    assert np.linalg.norm(P - step.dense()) > 1e-6 * np.linalg.norm(P)  # (springs join moving bodies: P != A)


@pytest.mark.parametrize("rows,solves", [("projected", 1), ("schur", 3)])
def test_the_preconditioner_is_exact_and_pcg_takes_one_iteration_when_no_spring_joins_moving_bodies(rows, solves):
    s = scenes.load("paper/simple_bridge", n_deck=12)
    m, step = _step("paper/simple_bridge", {"n_deck": 12}, blocks=False)
    assert rel(_projected_dense(m, step), step.dense()) < 1e-12
    res = s.simulate(duration=0.05, solver=PCGSolver(rows=rows))
    # (one loop, 2 rows: one projected solve, or 2 row solves + 1 by the Schur complement)
    assert res.meta["pcg_iterations"].shape == (5, solves)
    assert np.all(res.meta["pcg_iterations"] == 1)


@pytest.mark.parametrize("name,params", [*CASES, ("paper/chain_pcg", {"n": 6}), ("paper/simple_bridge", {"n_deck": 8})])
def test_pcg_gives_the_dense_step_to_its_tolerance(name, params):
    s = scenes.load(name, **params)
    a = s.simulate(duration=0.05)
    b = s.simulate(duration=0.05, solver=PCGSolver(tol=1e-11))
    assert b.meta["solver"] == "pcg" and b.meta["compiled"]
    assert rel(b.qdot, a.qdot, 1e-300) < 1e-8 and rel(b.q, a.q, 1e-300) < 1e-10
    for k, v in a.constraint_violation.items():  # loops closed as by the dense solve
        assert np.abs(b.constraint_violation[k] - v).max() < 1e-8


@pytest.mark.parametrize("name,params", CASES)
@pytest.mark.parametrize("kernel", [pcg_projected, pcg_rows])
def test_the_row_kernels_solve_the_kkt_system(name, params, kernel):
    """``A x + G^T lam = b``, ``G x = r`` by the projected solve and by the Schur complement: the dense KKT solve's
    x and lam, with a redundant (repeated) row whose multiplier share is 0; the projected solve meets the rows to
    rounding.  Random rows on a step whose springs join moving bodies (P != A), warm start far from x."""
    m, step = _step(name, params, blocks=False)
    Ii, _ = m.packed
    n, nb = m.ndof, m.nb
    rng = np.random.default_rng(5)
    k = 3
    G = np.zeros((k + 1, n))
    G[:k] = rng.normal(size=(k, n))
    G[k] = G[1]  # (redundant)
    r = np.append(rng.normal(size=k), 0.0)
    r[k] = r[1]
    b = rng.normal(size=n)
    A = step.dense()
    K = np.block([[A, G[:k].T], [G[:k], np.zeros((k, k))]])
    sol = np.linalg.solve(K, np.concatenate([b, r[:k]]))
    rb = pack_blocks(step.rblocks, n)
    U, Psi, Mh = np.zeros((n, 6)), np.zeros((n, 6)), np.zeros((nb, 6, 6))
    assert precondition_setup(Ii, step.W, step.bpair, step.bB, step.bpair.shape[0], step.rdiag, *rb, Mh, U,
                              Psi) == -1
    x, lam, its = np.zeros(n), np.zeros(k + 1), np.zeros(k + 3, np.int64)
    mc = k + 1
    ok, total = kernel(Ii, step.W, step.bpair, step.bB, step.bpair.shape[0], step.rdiag, *rb, U, Psi, b, x,
                       rng.normal(size=n), 1e-12, 500, np.zeros(4 * n + 24 * nb), G, r, mc, lam, np.zeros((mc, n)),
                       np.zeros((2 * mc, mc)), np.zeros(mc), np.zeros(mc, np.int64), np.zeros(mc, np.int64),
                       np.zeros(mc), its)
    assert ok and total >= 2  # (P != A: more than one iteration)
    assert rel(x, sol[:n]) < 1e-9
    lam_rows = lam[:k].copy()
    lam_rows[1] += lam[k]  # (the repeated row's multiplier)
    assert rel(lam_rows, sol[n:]) < 1e-8
    scale = np.abs(A).sum(1).max() * np.abs(x).max() + np.abs(b).max()
    assert np.abs(A @ x + G.T @ lam - b).max() < 1e-10 * scale
    if kernel is pcg_projected:
        assert its[-1] == 1 and its[0] == total
        assert np.abs(G @ x - r).max() < 1e-12 * (1 + np.abs(r).max())


def test_the_projected_solve_stops_at_once_when_the_rows_fix_every_dof():
    """Rows that leave no motion (G = I): the start ``x = r`` is the solution and the multipliers take the whole
    residual; the solve stops without iterating (its rule is relative to the start's residual with no multipliers,
    not to the projected one, which is rounding here), with ``lam = b - A r``."""
    m, step = _step("paper/umbrella", {"n": 2}, blocks=False)
    Ii, _ = m.packed
    n, nb = m.ndof, m.nb
    rng = np.random.default_rng(2)
    G, r, b = np.eye(n), rng.normal(size=n), rng.normal(size=n)
    rb = pack_blocks(step.rblocks, n)
    U, Psi, Mh = np.zeros((n, 6)), np.zeros((n, 6)), np.zeros((nb, 6, 6))
    precondition_setup(Ii, step.W, step.bpair, step.bB, step.bpair.shape[0], step.rdiag, *rb, Mh, U, Psi)
    x, lam, its = np.zeros(n), np.zeros(n), np.zeros(n + 2, np.int64)
    ok, total = pcg_projected(Ii, step.W, step.bpair, step.bB, step.bpair.shape[0], step.rdiag, *rb, U, Psi, b, x,
                              np.zeros(n), 1e-6, 50, np.zeros(4 * n + 24 * nb), G, r, n, lam, np.zeros((n, n)),
                              np.zeros((2 * n, n)), np.zeros(n), np.zeros(n, np.int64), np.zeros(n, np.int64),
                              np.zeros(n), its)
    assert ok and total == 0
    assert rel(x, r) < 1e-12 and rel(lam, b - step.dense() @ r) < 1e-10


def test_pcg_refuses_what_it_cannot_solve_and_names_why():
    s = scenes.load("paper/chain_pcg", n=3)
    with pytest.raises(rm.SimulationError, match=r"coriolis='implicit'"):
        s.simulate(duration=0.02, solver="pcg", coriolis="implicit")
    b = rm.ModelBuilder("pushed", (0, 0, -9.81))
    b.add_body("a", rm.Cuboid(1, 1, 1), rm.Revolute((1, 0, 0)))
    b.add_force(rm.forces.WorldPointForce("a", (0, 0, 1), (1, 0, 0), stiffness="full"))
    with pytest.raises(rm.SimulationError, match=r"stiffness='symmetric'"):
        rm.simulate(b.build(), dt=1e-2, duration=0.02, solver="pcg")
    with pytest.raises(rm.SimulationError, match=r"did not converge in 1 iterations"):
        scenes.load("paper/tree", levels=2).simulate(duration=0.02, solver=PCGSolver(tol=1e-12, max_iter=1))
    for kw, msg in (({"tol": 0.0}, "tol must be in"), ({"tol": float("nan")}, "tol must be in"),
                    ({"max_iter": 0}, "max_iter must be a positive"), ({"max_iter": 2.5}, "max_iter"),
                    ({"rows": "kkt"}, "rows must be one of 'projected', 'schur'")):
        with pytest.raises(rm.SimulationError, match=msg):
            PCGSolver(**kw)


def test_a_solver_instance_counts_the_iterations_of_each_run_afresh():
    slv = PCGSolver()
    s = scenes.load("paper/tree", levels=2)
    a = s.simulate(duration=0.03, solver=slv)
    b = s.simulate(duration=0.02, solver=slv)
    assert a.meta["pcg_iterations"].shape == (3, 1) and b.meta["pcg_iterations"].shape == (2, 1)
    assert np.all(a.meta["pcg_iterations"] >= 1)


def test_the_compiled_pcg_loop_equals_the_python_pcg_loop_and_holds_no_square_matrix():
    """A model without constraints runs PCG inside the compiled Euler loop: the same steps and iteration counts as
    the same solver stepping from Python (the step's kernels are the same), and a workspace of O(n) floats."""
    from redmax.integrators._loop import workspace_sizes

    s = scenes.load("paper/tree", levels=3)
    m = s.model
    a = s.simulate(duration=0.05, solver="pcg")
    slv = PCGSolver()
    b_steps = []
    state = m.initial_state()
    for _ in range(5):
        step = linearized_step(m, state, s.dt)
        qd = slv.solve(step)
        state = rm.State(step.q + s.dt * qd, qd, state.t + s.dt, step.jstate)
        b_steps.append(qd)
    assert a.meta["compiled"] and rel(a.qdot[1:], np.array(b_steps)) < 1e-12
    assert a.meta["pcg_iterations"].ravel().tolist() == slv.iterations
    assert np.all(a.meta["pcg_iterations"] >= 2)  # (sibling springs join moving bodies)
    n = m.ndof
    dense = workspace_sizes(m.nb, n, 64, 64, 64, 64, n)[0]
    free = workspace_sizes(m.nb, n, 64, 64, 64, 64, 0)[0]
    assert dense - free == 2 * n * n + 6 * 63  # A and dc/dqd, and 63 more assembly incidences
    with pytest.raises(rm.SimulationError, match=r"PCG did not converge in 1 iterations"):
        s.simulate(duration=0.02, solver=PCGSolver(tol=1e-12, max_iter=1))


def test_memory_of_a_pcg_run_grows_linearly_with_the_dofs():
    """From 640 to 1280 DOFs a PCG run of simple_bridge adds far less memory than one 1280 x 1280 float64 array
    (13 MB): no step allocates an ndof^2 array."""
    peaks = []
    for n in (640, 1280):
        s = scenes.load("paper/simple_bridge", n_deck=n)
        s.simulate(duration=0.01, solver="pcg")
        tracemalloc.start()
        s.simulate(duration=0.03, solver="pcg")
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] - peaks[0] < 0.25 * 1280 * 1280 * 8


def test_pcg_and_sparse_follow_the_dense_trajectory_on_the_bridges():
    """Issue 51's check: after 2 steps of simple_bridge(1280) the PCG and dense velocities agree to 1e-6 relative
    (max-norm); sparse and dense at n_deck = 80 likewise."""
    s = scenes.load("paper/simple_bridge", n_deck=1280)
    a, b = s.simulate(duration=0.02, solver="dense"), s.simulate(duration=0.02, solver="pcg")
    assert np.abs(b.qdot[-1] - a.qdot[-1]).max() <= 1e-6 * np.abs(a.qdot[-1]).max()
    s = scenes.load("paper/simple_bridge", n_deck=80)
    a, b = s.simulate(duration=0.02, solver="dense"), s.simulate(duration=0.02, solver="sparse")
    assert np.abs(b.qdot[-1] - a.qdot[-1]).max() <= 1e-6 * np.abs(a.qdot[-1]).max()


ROW_SCENES = ["reference/04", "reference/07", "reference/08", "reference/09", "reference/13", "reference/20",
              "reference/32", "reference/34", "paper/hand"]


@pytest.mark.parametrize("rows", PCGSolver.ROWS)
@pytest.mark.parametrize("name", ROW_SCENES)
def test_pcg_solves_loops_prescribed_motion_and_couplings_in_the_compiled_loop(name, rows):
    """Equality rows (loops, ratios, prescribed joints and twists) and hyper-reduced couplings run inside the
    compiled loop with PCG (one projected solve, or the Schur complement with one PCG solve per row; couplings as
    rows): the dense run's velocities and reactions to the solver's tolerance, one iteration count per solve."""
    s = scenes.load(name)
    d = s.simulate(duration=0.1, solver="dense")
    p = s.simulate(duration=0.1, solver=PCGSolver(tol=1e-10, rows=rows))
    assert d.meta["compiled"] and p.meta["compiled"]
    assert rel(p.qdot, d.qdot) < 1e-8 and rel(p.q, d.q) < 1e-8
    for k, v in d.reactions.items():
        assert rel(p.reactions[k], v) < 1e-7, k
    for k, v in d.constraint_violation.items():
        assert np.abs(p.constraint_violation[k] - v).max() < 1e-8, k
    it = p.meta["pcg_iterations"]
    nrows = sum(v.shape[1] for v in d.constraint_violation.values())  # (at least the equality rows)
    assert it.shape[0] == p.meta["steps"] and it[:, 0].sum() >= 1
    assert it.shape[1] == 1 if rows == "projected" else it.shape[1] >= 1 + min(nrows, 1)


def test_pcg_with_limits_solves_the_dual_qp_and_matches_the_dense_qp():
    """Inequality rows with PCG: the QP through its dual on m + 1 PCG solves (no step matrix), the dense QP's
    trajectory and limit torque to the solver's tolerance over a run that hits the limit."""
    s = scenes.load("reference/06")
    d = s.simulate(solver="dense")
    p = s.simulate(solver=PCGSolver(tol=1e-10))
    assert np.abs(d.reactions["limit_J2"]).max() > 1.0  # the limit was active
    assert rel(p.qdot, d.qdot) < 1e-8 and rel(p.reactions["limit_J2"], d.reactions["limit_J2"]) < 1e-7


def test_the_dual_qp_has_the_primal_solution():
    """solve_dual_qp on random strictly convex QPs: x = H^-1 (b - A^T lam) is DAQP's primal solution."""
    from redmax.solvers.qp import solve_dual_qp, solve_qp

    rng = np.random.default_rng(3)
    for _ in range(20):
        n, mg, mc = 8, 2, 5
        L = rng.normal(size=(n, n))
        H = L @ L.T + n * np.eye(n)
        b = rng.normal(size=n)
        G, C = rng.normal(size=(mg, n)), rng.normal(size=(mc, n))
        rG, rC = rng.normal(size=mg), rng.normal(size=mc) - 0.5
        x, lg, lc = solve_qp(H, b, G, rG, C, rC)
        Aall = np.vstack([G, C])
        Y = np.linalg.solve(H, Aall.T)
        xu = np.linalg.solve(H, b)
        lam = solve_dual_qp(Aall @ Y, Aall @ xu - np.concatenate([rG, rC]), mg)
        assert rel(xu - Y @ lam, x) < 1e-9 and rel(lam, np.concatenate([lg, lc]), 1.0) < 1e-8


@pytest.mark.parametrize("name,params", [("paper/simple_bridge", {"n_deck": 40}), ("paper/hand", {})])
def test_the_simulator_steps_with_pcg_as_simulate_does_without_a_square_matrix(name, params):
    s = scenes.load(name, **params)
    m, h = s.model, s.dt
    r = rm.simulate(m, dt=h, duration=5 * h, solver="pcg", baumgarte=s.baumgarte)
    sims = {k: rm.Simulator(m, dt=h, solver=k, baumgarte=s.baumgarte) for k in ("pcg", "dense")}
    for sim in sims.values():
        for _ in range(5):
            sim.step()
    assert sims["pcg"].solver.name == "pcg" and rel(sims["pcg"].qd, r.qdot[-1]) < 1e-12
    assert rel(sims["pcg"].qd, sims["dense"].qd) < 1e-5
    assert sims["pcg"].pcg_iterations[0] >= 1 and sims["dense"].pcg_iterations is None
    n = m.coordinate_model.ndof
    assert sims["dense"]._WF.size - sims["pcg"]._WF.size >= 2 * n * n
    # auto: the exact recursion from RECURSIVE_FROM DOFs (no force joins two moving bodies here) with few rows
    # (the hand: 16 constraint rows and 4 coupled coordinates for 21), else dense
    rows = program_for(m.coordinate_model).nviol + n - m.ndof
    few = n >= RECURSIVE_FROM and rows <= RECURSIVE_ROWS * n
    assert rm.Simulator(m, dt=h).solver.name == ("recursive" if few else "dense")
    with pytest.raises(rm.SimulationError, match="does not run in the compiled step"):
        rm.Simulator(m, dt=h, solver="sparse")


@pytest.mark.parametrize("name,params", [("paper/tree", {"levels": 3}), ("paper/bridge", {"n_deck": 6, "n_tower": 3,
                                                                                          "load": 2.4e6})])
def test_pair_records_as_blocks_give_the_forces_generic_blocks(name, params):
    """The compiled PCG step keeps two-point springs as pair records and turns them into twist blocks in closed
    form (redmax.solvers._pair_blocks): the same operator as the blocks the forces write themselves."""
    from redmax._kernels.workspace import work_offsets
    from redmax.forces._compiled import NE, PAIR_FLOATS
    from redmax.forces.evaluate import NO_PAIRS, NO_RECORDS
    from redmax.forces.registry import eval_forces
    from redmax.integrators._linearize import linearize_forces
    from redmax.integrators.euler_parts import resolve_forces
    from redmax.integrators.step import StepOptions
    from redmax.solvers._pair_blocks import pair_blocks

    m, step = _step(name, params, blocks=False)
    Ii, _ = m.packed
    n, nb, h = m.ndof, m.nb, step.h
    program, _, _ = resolve_forces(m, None, StepOptions())
    o = work_offsets(nb, n)
    W = step.W
    Rw, pw = W[o.wR:o.wR + 9 * nb].reshape(nb, 9), W[o.wp:o.wp + 3 * nb].reshape(nb, 3)
    Vw = W[o.wV:o.wV + 6 * nb].reshape(nb, 6)
    cap, cp = max(program.nblocks, 1), max(program.npairs, 1)
    out = []
    for pairs in (False, True):
        bp, bK, bD, bB = np.zeros((cap, 2), np.int64), *np.zeros((3, cap, 6, 6))
        pp, pr = (np.zeros((cp, 2), np.int64), np.zeros((cp, PAIR_FLOATS))) if pairs else (NO_PAIRS, NO_RECORDS)
        fw, fr, rK, rD, rd = np.zeros((nb, 6)), *np.zeros((4, n))
        nblk, npair = eval_forces(program.hdr, program.fi, program.ff, Rw, pw, Vw, step.q, step.qd, True, fw, bp, bK,
                                  bD, fr, rK, rD, np.zeros(NE), np.zeros(program.nscratch), pp, pr, pairs)
        linearize_forces(-h * h, h, nblk, npair, bp, bK, bD, bB, rK, rD, rd, fw, np.zeros((nb, 6)), fr, np.zeros(n),
                         Vw, step.qd, pp, pr)
        if pairs:
            assert npair > 0
            nblk = pair_blocks(pp, pr, npair, bp, bB, nblk)
        out.append((bp[:nblk], bB[:nblk], rd))
    rb = pack_blocks([], n)
    S = np.zeros((3, nb, 6))
    for x in np.random.default_rng(4).normal(size=(3, n)):
        y = []
        for bp, bB, rd in out:
            yy = np.zeros(n)
            apply_A(Ii, W, bp, bB, bp.shape[0], rd, *rb, x, S[0], S[1], S[2], yy)
            y.append(yy)
        assert rel(y[1], y[0]) < 1e-13
