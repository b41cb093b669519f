"""``python -m langtree``: the ``langtree`` command."""

import sys

from langtree.cli import main

sys.exit(main())
