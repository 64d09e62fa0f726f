"""Training an encoder with InfoNCE on real images, and judging what it learned (chapter 8).

The rest of the library computes losses and bounds on scores it is given; this subpackage
makes the scores, from images, with a trained encoder. One module per concept:

* :mod:`.data`: the handwritten digits that ship with the library, and their fixed split;
* :mod:`.views`: random views of small images (shifts, erasing, dropped pixels, noise);
* :mod:`.encoder`: a multilayer perceptron with unit-norm output, and its gradient;
* :mod:`.objective`: the symmetric InfoNCE of CLIP and SimCLR's NT-Xent, with the gradient
  in the log of the inverse temperature;
* :mod:`.trainer`: minibatches, Adam, a fixed or a learned (and clipped) temperature;
* :mod:`.probe`: linear probes with all labels or a few per class;
* :mod:`.evaluation`: the nearest-neighbour classifier and the held-out InfoNCE bound.

Every public name is exported as ``infonce_lib.<name>``.
"""

from __future__ import annotations

from . import data, encoder, evaluation, objective, probe, trainer, views
from .data import *  # noqa: F403
from .encoder import *  # noqa: F403
from .evaluation import *  # noqa: F403
from .objective import *  # noqa: F403
from .probe import *  # noqa: F403
from .trainer import *  # noqa: F403
from .views import *  # noqa: F403

#: The modules, in the order of the chapter.
MODULES = (data, views, encoder, objective, trainer, probe, evaluation)

__all__: list[str] = [name for module in MODULES for name in module.__all__]
