"""Every numerical tolerance the tests use, in one place (ARCHITECTURE pattern 5)."""

FD_STEP = 1e-6  # central finite-difference step
FD_REL = 1e-6  # finite differences vs analytic derivatives (relative)
CS_STEP = 1e-30  # complex-step increment
CS_REL = 1e-12  # complex step vs analytic derivatives (relative)
DERIV_REL = 1e-7  # issue 13: analytic derivatives (joint jets, dJ/dq, K, D) vs complex step / central differences
ADJOINT_REL = 1e-6  # issue 13: adjoint gradients vs central differences of the whole simulation
IDENTITY_REL = 1e-10  # algorithm identities (RedMax = ABA, ABA o RNEA = id, CRBA = J^T Mm J)
ROUNDOFF = 1e-12  # quantities that must agree to rounding (re-parameterisation, Ad identities)
ENERGY_DOP853_REL = 1e-6  # conservative scenes with DOP853 at rtol = atol = 1e-10
SO_RMS_REL = 1e-12  # second-order derivatives vs complex step of the first order: RMS relative error (Singh Eq. 43)
PIN_REL = 1e-9  # derivatives vs Pinocchio's (relative to the largest entry)
CROSS_REL = 1e-9  # rnea, aba, crba, minv against Pinocchio's and MuJoCo's (relative to the largest entry)
SO_MAX_REL = 1e-11  # second-order tensors vs complex step of the first order: largest error per largest entry
SO_COND_REL = 1e-14  # ... of forward dynamics, per unit condition number of M (robot files: up to 1.7e-15)
COND_REL = 1e-15  # forward-dynamics derivatives vs complex step, per unit condition number of M (both solve with M)
STEP_REL = 1e-12  # the compiled step against the dense RedMax equations and the stage-by-stage path
REFERENCE_H_REL = 1e-12  # final energies against the values pinned from the wave-one implementation (issue 10 item 8)
REFERENCE_ROUNDOFF_FACTOR = 10.0  # ... or this many times the change a 1-ulp initial perturbation makes, if larger
BDF_H_ABS, BDF_H_REL = 1e-6, 1e-9  # diff/00-14 final energies (bdf1, sdirk2, bdf2) against reference/bdf_pinned.json


def rel(a, b, floor: float = 1e-300) -> float:
    """max |a - b| / max |b| (the one relative-error helper of the suite)."""
    import numpy as np

    a = np.asarray(a)
    b = np.asarray(b)
    return float(np.max(np.abs(a - b), initial=0.0) / max(float(np.max(np.abs(b), initial=0.0)), floor))
CONSTRAINT_VIOLATION_REL = 1e-3  # loop and equality violation of a constraint scene relative to the model size
QP_KKT = 1e-9  # KKT conditions of the QP of a constrained step (relative)
COUPLING_REL = 1e-10  # hyper-reduced coordinates against the same model with ratio rows / the mapped full model
