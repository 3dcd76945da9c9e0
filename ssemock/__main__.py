"""``python -m ssemock`` runs the ``ssemock`` command."""

import sys

from .cli import main

sys.exit(main())
