"""``python -m infonce_lib reproduce ...``: see :mod:`infonce_lib.cli`."""

import sys

from .cli import main

sys.exit(main())
