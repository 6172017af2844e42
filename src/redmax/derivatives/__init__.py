"""Analytic derivatives of the dynamics (Singh, Russell & Wensing, "On Second-Order Derivatives of Rigid-Body
Dynamics: Theory & Implementation"; user guide: docs/derivatives.md).

- :mod:`.core_tree`: every joint expanded into core joints with constant motion subspaces, and the world-frame
  forward pass the algorithms share (Alg. 1 lines 1-11).
- First order: :mod:`.first_order` (the public ``rnea_derivatives``, ``aba_derivatives``), :mod:`.rnea_first_order`
  (IDSVA, Eqs. 12-13, and its chain rule), :mod:`.aba_first_order` (FDSVA, Eq. 45), :mod:`._first_order_c_entry`
  (their C entry points).
- Second order of inverse dynamics: :mod:`.rnea_second_order` (the public call, its tensors and threads),
  :mod:`.second_order_walk` (IDSVA-SO, Alg. 1), :mod:`.second_order_blocks` (its 6x6 blocks and u vectors),
  :mod:`.second_order_chain` and :mod:`.second_order_chain_in_place` (the chain rule to the model's coordinates).
- :mod:`.aba_second_order`: second order of forward dynamics (FDSVA-SO, Eqs. 46-49).
- :mod:`.balafoutis_patel` (Balafoutis-Patel inverse dynamics with its partials), :mod:`.eom` and
  :mod:`.jacobian` (derivatives of the RedMax equations and of the Jacobian).
"""
