"""``python -m infonce_lib reproduce ...``: see :mod:`infonce_lib.reproduce`."""

import sys

from .reproduce import main

sys.exit(main())
