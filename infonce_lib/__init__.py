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
from .nce import (
    GaussianNCESimulation,
    NCEFit,
    fit_gaussian_ml,
    fit_gaussian_nce,
    fit_nce,
    gaussian_log_model,
    gaussian_log_partition,
    gaussian_ml_precision_mse,
    gaussian_params,
    gaussian_theta,
    mse_ratio,
    nce_objective,
    nce_objective_and_grad,
    reproduce_nce_efficiency,
    simulate_gaussian_nce,
)

__all__ += [
    "GaussianNCESimulation",
    "NCEFit",
    "fit_gaussian_ml",
    "fit_gaussian_nce",
    "fit_nce",
    "gaussian_log_model",
    "gaussian_log_partition",
    "gaussian_ml_precision_mse",
    "gaussian_params",
    "gaussian_theta",
    "mse_ratio",
    "nce_objective",
    "nce_objective_and_grad",
    "reproduce_nce_efficiency",
    "simulate_gaussian_nce",
]

# ---- chapter 2: InfoNCE and its relatives (losses.py, exercises.py) ----
from .core import DEFAULT_CHUNK_SIZE, contrastive_log_probs_streaming
from .exercises import check_info_nce, typical_mistakes
from .losses import (
    MoCoQueue,
    binary_nce_loss,
    clip_loss,
    info_nce_loss,
    info_nce_loss_and_grad,
    moco_loss,
    nt_xent_loss,
)

__all__ += [
    "DEFAULT_CHUNK_SIZE",
    "MoCoQueue",
    "binary_nce_loss",
    "check_info_nce",
    "clip_loss",
    "contrastive_log_probs_streaming",
    "info_nce_loss",
    "info_nce_loss_and_grad",
    "moco_loss",
    "nt_xent_loss",
    "typical_mistakes",
]

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
# (and hypersphere.py: Wang & Isola's alignment and uniformity)
from .hypersphere import (
    ContrastiveLimit,
    alignment,
    contrastive_loss_limit,
    sample_sphere_pairs,
    sampled_contrastive_losses,
    sphere_log_partition,
    uniformity,
    unwarp_sphere,
    warp_sphere,
)
from .limits import (
    DoEEstimate,
    binary_channel_information,
    correlated_gaussian_critic,
    correlated_gaussian_infonce,
    correlated_gaussian_information,
    correlated_gaussian_rho,
    doe_estimate,
    sample_binary_channel,
    sample_correlated_gaussian,
)

__all__ += [
    "ContrastiveLimit",
    "DoEEstimate",
    "alignment",
    "binary_channel_information",
    "contrastive_loss_limit",
    "correlated_gaussian_critic",
    "correlated_gaussian_infonce",
    "correlated_gaussian_information",
    "correlated_gaussian_rho",
    "doe_estimate",
    "sample_binary_channel",
    "sample_correlated_gaussian",
    "sample_sphere_pairs",
    "sampled_contrastive_losses",
    "sphere_log_partition",
    "uniformity",
    "unwarp_sphere",
    "warp_sphere",
]

# ---- chapter 5: temperature (temperature.py) ----
# (and the cosine cell of the Gaussian patches, patches.py)
from .patches import (
    CosineTemperature,
    patch_level_pairs,
    reproduce_cosine_temperature,
    run_cosine_temperature,
)
from .temperature import (
    BestTemperature,
    BetaDerivatives,
    best_temperature,
    cosine_cap,
    cosine_scores,
    hadsell_contrastive_loss,
    hardest_negative_triplet_loss,
    infonce_at_beta,
    infonce_beta_derivatives,
    positive_margins,
    softmax_weights,
    tau_scaled_loss,
)

__all__ += [
    "BestTemperature",
    "BetaDerivatives",
    "CosineTemperature",
    "best_temperature",
    "cosine_cap",
    "cosine_scores",
    "hadsell_contrastive_loss",
    "hardest_negative_triplet_loss",
    "infonce_at_beta",
    "infonce_beta_derivatives",
    "patch_level_pairs",
    "positive_margins",
    "reproduce_cosine_temperature",
    "run_cosine_temperature",
    "softmax_weights",
    "tau_scaled_loss",
]

# ---- chapter 4: the family of bounds with trained critics ----
# (bound_family.py, critics.py, optim.py, exercises/bound_family.py)
from .bound_family import *  # noqa: F403
from .bound_family import __all__ as _bound_family_all
from .critics import *  # noqa: F403
from .critics import __all__ as _critics_all
from .exercises.bound_family import *  # noqa: F403
from .exercises.bound_family import __all__ as _exercises_bounds_all
from .optim import *  # noqa: F403
from .optim import __all__ as _optim_all

__all__ += [*_bound_family_all, *_critics_all, *_exercises_bounds_all, *_optim_all]
