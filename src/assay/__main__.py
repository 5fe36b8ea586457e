"""``python -m assay`` runs the CLI."""

from assay.cli import main

main()
