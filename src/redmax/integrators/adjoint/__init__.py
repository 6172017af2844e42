"""The adjoint method through BDF1, SDIRK2 and BDF2 (Sueda notes §3.5): exact gradients of an
objective of the states with respect to parameters, by one backward sweep over the forward run's stages."""

from redmax.integrators.adjoint.sweep import AdjointSolution, adjoint_sweep

__all__ = ["AdjointSolution", "adjoint_sweep"]
