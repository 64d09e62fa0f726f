"""infonce_lib: the tested NumPy library behind the book *InfoNCE, executable*.

One small module per concept; every public name is listed in ``__all__`` and documented in
the book's API reference. Run ``python -m infonce_lib reproduce --list`` for the experiments
of the book that can be reproduced from the command line.
"""

__version__ = "0.1.0"
__all__: list[str] = []

# ---- the general core: log-softmax probabilities of positives (core.py) ----
from .core import contrastive_log_probs, contrastive_loss_from_logits

__all__ += ["contrastive_log_probs", "contrastive_loss_from_logits"]

# ---- chapter 1: noise-contrastive estimation (nce.py) ----

# ---- chapter 2: InfoNCE and its relatives (losses.py, exercises.py) ----
from .losses import info_nce_loss

__all__ += ["info_nce_loss"]

# ---- chapter 3: the bounds and the Gaussian patches (bounds.py, gaussian.py) ----

from .bounds import infonce_bound, leave_one_out_bound, mean_and_se, nwj_bound
from .gaussian import (
    GaussianField,
    field_covariance,
    gaussian_field,
    gaussian_mutual_information,
    log_density_ratio_scores,
    log_p_y,
    log_p_y_given_x,
    optimal_critic_scores,
    patch_information,
    patch_information_logdet,
    sample_patch_pairs,
    sigma_for_information,
)
from .patches import PatchExperiment, reproduce_gaussian_patches, run_gaussian_patches

__all__ += [
    "GaussianField",
    "PatchExperiment",
    "field_covariance",
    "gaussian_field",
    "gaussian_mutual_information",
    "infonce_bound",
    "leave_one_out_bound",
    "log_density_ratio_scores",
    "log_p_y",
    "log_p_y_given_x",
    "mean_and_se",
    "nwj_bound",
    "optimal_critic_scores",
    "patch_information",
    "patch_information_logdet",
    "reproduce_gaussian_patches",
    "run_gaussian_patches",
    "sample_patch_pairs",
    "sigma_for_information",
]

# ---- chapter 4: the limits (limits.py) ----

# ---- chapter 5: temperature (temperature.py) ----

from .temperature import (
    BestTemperature,
    best_temperature,
    cosine_cap,
    cosine_scores,
    infonce_at_beta,
)

__all__ += ["BestTemperature", "best_temperature", "cosine_cap", "cosine_scores", "infonce_at_beta"]
