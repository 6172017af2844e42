"""solver="sparse" (the step in maximal and joint variables, SuperLU) against the dense solve, its non-zeros linear in
the DOFs on a chain (whose reduced matrix is dense), and solver="auto" (the default) choosing by size and symmetry."""

import numpy as np
import pytest

import redmax as rm
from redmax import scenes
from redmax.integrators.euler import linearized_step
from redmax.solvers.auto import PCG_FROM, RECURSIVE_FROM, RECURSIVE_ROWS, AutoSolver
from redmax.solvers.sparse import SparseSolver, maximal_system
from redmax.testing.benchmark_models import benchmark_chain

from tolerances import rel


@pytest.mark.parametrize("name,params,coriolis", [
    ("paper/chain_pcg", {"n": 12}, "explicit"), ("paper/chain_pcg", {"n": 12}, "implicit"),
    ("paper/tree", {"levels": 3}, "explicit"), ("paper/umbrella", {"n": 3}, "explicit"),
    ("reference/03", {}, "explicit"), ("reference/21", {}, "implicit"), ("reference/24", {}, "explicit"),
])
def test_sparse_gives_the_dense_step(name, params, coriolis):
    s = scenes.load(name, **params)
    m = s.model
    rng = np.random.default_rng(4)
    state = rm.State(m.q0 + 0.1 * rng.normal(size=m.ndof), rng.normal(size=m.ndof), 0.0, m.jstate0)
    step = linearized_step(m, state, 1e-2, coriolis=coriolis)
    x = np.linalg.solve(step.dense(), step.b)
    assert rel(SparseSolver().solve(step), x) < 1e-10 * max(1.0, np.linalg.cond(step.dense()) * 1e-4)
    a = s.simulate(duration=0.05, solver="dense", coriolis=coriolis)
    b = s.simulate(duration=0.05, solver="sparse", coriolis=coriolis)
    assert b.meta["solver"] == "sparse" and rel(b.qdot, a.qdot, 1e-300) < 1e-9


def test_the_sparse_system_has_nonzeros_linear_in_the_dofs_on_a_chain():
    nnz = []
    for n in (50, 100, 200):
        m = scenes.load("paper/chain_pcg", n=n).model
        K, _ = maximal_system(linearized_step(m, m.initial_state(), 1e-2))
        nnz.append(K.nnz)
    assert nnz[1] / nnz[0] < 2.05 and nnz[2] / nnz[1] < 2.05  # (the reduced matrix: n^2 = 4x per doubling)


def test_auto_chooses_by_size_and_symmetry():
    small, big = PCG_FROM - 1, PCG_FROM
    assert AutoSolver.choose(small, True).name == "dense"
    assert AutoSolver.choose(big, True).name == "pcg"
    assert AutoSolver.choose(big, True, "implicit").name == "dense"  # (h dc/dqd: a dense n x n block)
    assert AutoSolver.choose(big, False).name == "sparse"
    assert AutoSolver.choose(big, True, inequalities=True).name == "dense"
    assert AutoSolver.choose(big, True, coupled=True).name == "pcg"  # (couplings as rows)
    assert AutoSolver.choose(big, False, coupled=True).name == "dense"  # (no reduced sparse system)
    # no force joins two moving bodies: the exact O(n) recursion from RECURSIVE_FROM DOFs, if the step is symmetric
    assert AutoSolver.choose(RECURSIVE_FROM, True, exact=True).name == "recursive"
    assert AutoSolver.choose(RECURSIVE_FROM - 1, True, exact=True).name == "dense"
    assert AutoSolver.choose(big, True, coupled=True, exact=True).name == "recursive"
    assert AutoSolver.choose(big, False, exact=True).name == "sparse"
    assert AutoSolver.choose(big, True, "implicit", exact=True).name == "dense"
    assert AutoSolver.choose(big, True, inequalities=True, exact=True).name == "dense"
    # ... while the equality rows are few: each costs the recursion one more solve
    n = 4 * RECURSIVE_FROM
    assert AutoSolver.choose(n, True, exact=True, rows=int(RECURSIVE_ROWS * n)).name == "recursive"
    assert AutoSolver.choose(n, True, exact=True, rows=int(RECURSIVE_ROWS * n) + 1).name == "dense"
    assert AutoSolver.choose(big, True, exact=True, rows=big).name == "pcg"


def test_auto_counts_rows_and_coupled_coordinates():
    """paper/hand (21 coordinates, 4 coupled, 16 constraint rows) keeps the dense solve in simulate, Simulator and
    rollout; simple_bridge (20 DOFs, one loop) takes the recursion."""
    hand = scenes.load("paper/hand")
    assert hand.simulate(duration=2 * hand.dt).meta["solver"] == "dense"
    assert rm.Simulator(hand.model, dt=hand.dt).solver.name == "dense"
    bridge = scenes.load("paper/simple_bridge", n_deck=RECURSIVE_FROM)
    assert bridge.simulate(duration=2 * bridge.dt).meta["solver"] == "recursive"
    assert rm.Simulator(bridge.model, dt=bridge.dt).solver.name == "recursive"
    ro = rm.rollout(bridge.model, bridge.model.q0, np.zeros(bridge.model.ndof), dt=bridge.dt, steps=2)
    assert ro.meta["solver"] == "recursive"


def test_auto_is_the_default_and_keeps_the_dense_solve_of_small_scenes():
    for name in ("reference/05", "reference/06", "diff/11"):
        s = scenes.load(name)
        assert s.solver == "auto"
        res = s.simulate(duration=4 * s.dt)
        ref = s.simulate(duration=4 * s.dt, solver="dense")
        assert res.meta["solver"] == "dense" and res.meta["compiled"] == ref.meta["compiled"]
        assert np.array_equal(res.q, ref.q)
    res = rm.simulate(scenes.load("paper/simple_bridge", n_deck=PCG_FROM).model, dt=1e-2, duration=0.02)
    assert res.meta["solver"] == "recursive" and "pcg_iterations" not in res.meta  # (no spring joins its blocks)
    m, st = benchmark_chain(PCG_FROM)  # (springs join links i - 2 and i)
    res = rm.simulate(m, st, dt=1e-3, duration=2e-3)
    assert res.meta["solver"] == "pcg" and res.meta["pcg_iterations"].shape == (2, 1)
    res = rm.simulate(scenes.load("paper/chain_pcg", n=PCG_FROM).model, dt=1e-2, duration=0.02, coriolis="implicit")
    assert res.meta["solver"] == "dense"
    b = rm.ModelBuilder("pushed", (0, 0, -9.81))  # a non-symmetric stiffness (exact, "full") on a large model
    for i in range(PCG_FROM):
        b.add_body(f"b{i}", rm.Cuboid(1, 0.2, 0.2), rm.Revolute((0, 0, 1)), parent=f"b{i - 1}" if i else None,
                   joint_placement=rm.spatial.trans(1, 0, 0) if i else None, body_placement=rm.spatial.trans(0.5, 0, 0))
    b.add_force(rm.forces.WorldPointForce(f"b{PCG_FROM - 1}", (1, 0, 0), (0, 1, 0), stiffness="full"))
    res = rm.simulate(b.build(), dt=1e-3, duration=2e-3)
    assert res.meta["solver"] == "sparse"
