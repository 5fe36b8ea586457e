"""The recon tool's packet layout, read in place by that tool's own rules.

:mod:`~assay.packet.recon.contract` checks each document as the recon tool
does; :mod:`~assay.packet.recon.run` reads every reference once and holds
what the cross-file rules share; :mod:`~assay.packet.recon.sources`,
:mod:`~assay.packet.recon.routing` and :mod:`~assay.packet.recon.reviews`
are those rules, one module per concern; :mod:`~assay.packet.recon.check`
runs them all in the recon tool's order and builds the validated run. Plain
functions over the packet kernel (:mod:`assay.packet.kernel`); nothing here
imports assay's own layout (:mod:`assay.packet.assay`).
"""
