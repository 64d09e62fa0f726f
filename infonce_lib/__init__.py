"""infonce_lib: the tested NumPy library behind the book *InfoNCE, executable*.

One small module per concept; every public name is in the module's ``__all__``, exported
here as ``infonce_lib.<name>`` and documented in the book's API reference. The experiments
of the book are in :mod:`infonce_lib.experiments` (not imported here); run
``python -m infonce_lib reproduce --list`` to see them.

Importing the package loads NumPy and ``scipy.special`` only; the heavier SciPy modules
(``optimize``, ``stats``, ``integrate``, ``linalg``, ``spatial``) are imported inside the
functions that use them, on first use, so that a notebook that never needs them does not
wait for them (``tests/test_layout.py`` keeps it so).
"""

from . import (
    bound_family,
    bound_family_exact,
    bounds,
    caps,
    confidence,
    convergence,
    core,
    critics,
    doe,
    dv_variants,
    exercises,
    gaussian,
    gaussian_nce,
    hypersphere,
    limits,
    losses,
    margin_losses,
    moco,
    nce,
    nce_population,
    optim,
    patches,
    published,
    readouts,
    report,
    seeding,
    temperature,
    training,
    warped_patches,
)
from .bound_family import *  # noqa: F403
from .bound_family_exact import *  # noqa: F403
from .bounds import *  # noqa: F403
from .caps import *  # noqa: F403
from .confidence import *  # noqa: F403
from .convergence import *  # noqa: F403
from .core import *  # noqa: F403
from .critics import *  # noqa: F403
from .doe import *  # noqa: F403
from .dv_variants import *  # noqa: F403
from .exercises import *  # noqa: F403
from .exercises import bound_family as _exercises_bound_family
from .exercises import bounds as _exercises_bounds
from .exercises import limits as _exercises_limits
from .exercises import misconceptions as _exercises_misconceptions
from .exercises import nce as _exercises_nce
from .exercises import temperature as _exercises_temperature
from .exercises import training as _exercises_training
from .exercises.bound_family import *  # noqa: F403
from .exercises.bounds import *  # noqa: F403
from .exercises.limits import *  # noqa: F403
from .exercises.misconceptions import *  # noqa: F403
from .exercises.nce import *  # noqa: F403
from .exercises.temperature import *  # noqa: F403
from .exercises.training import *  # noqa: F403
from .gaussian import *  # noqa: F403
from .gaussian_nce import *  # noqa: F403
from .hypersphere import *  # noqa: F403
from .limits import *  # noqa: F403
from .losses import *  # noqa: F403
from .margin_losses import *  # noqa: F403
from .moco import *  # noqa: F403
from .nce import *  # noqa: F403
from .nce_population import *  # noqa: F403
from .optim import *  # noqa: F403
from .patches import *  # noqa: F403
from .published import *  # noqa: F403
from .readouts import *  # noqa: F403
from .report import *  # noqa: F403
from .seeding import *  # noqa: F403
from .temperature import *  # noqa: F403
from .training import *  # noqa: F403
from .warped_patches import *  # noqa: F403

__version__ = "0.1.0"

#: The block edge :func:`~infonce_lib.contrastive_log_probs_streaming` uses when no
#: ``chunk_size`` is given: blocks of 1024 x 1024 float64 logits, 8 MiB of working memory
#: whatever the batch size; also a good ``chunk_size`` for the losses that stream on request
#: (:func:`~infonce_lib.info_nce_loss`, :func:`~infonce_lib.nt_xent_loss`). ``make bench``
#: compares its speed with the dense path. Defined in ``infonce_lib.core``; this comment is
#: what the API page shows (a plain int has no docstring of its own).
DEFAULT_CHUNK_SIZE = core.DEFAULT_CHUNK_SIZE

#: The environment variable that :func:`~infonce_lib.book_seed` reads, ``"INFONCE_SEED"``:
#: set it to a non-negative integer to run a chapter with other random draws (``make seeds``
#: runs every chapter with 1 to 10); unset, or 0, gives the stored outputs. Defined in
#: ``infonce_lib.seeding``; this comment is what the API page shows.
SEED_VARIABLE = seeding.SEED_VARIABLE

#: The modules whose public names make up the package namespace, in the order of the book.
_MODULES = (
    core, nce, _exercises_nce, gaussian_nce, nce_population, losses, moco, exercises, bounds,
    _exercises_bounds, gaussian, patches, bound_family, bound_family_exact,
    critics, optim, dv_variants, _exercises_bound_family,
    doe, limits, confidence, _exercises_limits, hypersphere, convergence, caps, temperature,
    margin_losses, _exercises_temperature, warped_patches, readouts, _exercises_misconceptions,
    *training.MODULES, _exercises_training, published, report, seeding,
)  # fmt: skip

__all__: list[str] = [name for module in _MODULES for name in module.__all__]
if len(set(__all__)) != len(__all__):  # pragma: no cover - a name exported by two modules
    raise ImportError("a public name of infonce_lib is exported by two modules")
