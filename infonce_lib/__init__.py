"""infonce_lib: the tested NumPy library behind the book *InfoNCE, executable*.

One small module per concept; every public name is listed in ``__all__`` and documented in
the book's API reference.

- :mod:`infonce_lib.core`: log-softmax probabilities of positives, the general core.
- :mod:`infonce_lib.losses`: InfoNCE and its named variants.
"""

from .core import contrastive_log_probs, contrastive_loss_from_logits
from .losses import info_nce_loss

__version__ = "0.1.0"

__all__ = [
    "contrastive_log_probs",
    "contrastive_loss_from_logits",
    "info_nce_loss",
]
