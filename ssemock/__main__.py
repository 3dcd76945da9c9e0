"""``python -m ssemock`` runs the ``ssemock`` command."""

from .cli import console

console()
