"""Assay's own packet layout: its documents' shapes and the rule set that checks them.

The shapes of ``manifest.json`` (:mod:`~assay.packet.assay.manifest`),
``claims.json`` (:mod:`~assay.packet.assay.ledger_file`) and the review and
worker artifacts (:mod:`~assay.packet.assay.reviews`, with the brief
projections), written by the packet commands and checked by the rule set:
:mod:`~assay.packet.assay.rules` (files, envelope, ledger),
:mod:`~assay.packet.assay.review_rules` (briefs, reviews, the reconciliation)
and :mod:`~assay.packet.assay.check` (everything, in order, and the validated
run). Plain functions over the packet kernel (:mod:`assay.packet.kernel`);
nothing here imports the recon tool's layout (:mod:`assay.packet.recon`).
"""
