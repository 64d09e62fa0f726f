r"""Training an encoder with InfoNCE: minibatches of view pairs, exact gradients, Adam.

Each step of :func:`train_encoder` draws ``batch_size`` distinct images, two independent
views of each (:func:`~infonce_lib.make_views`), embeds all of them
(:func:`~infonce_lib.encode`), computes the loss and its gradients
(:func:`~infonce_lib.symmetric_infonce_grad` or :func:`~infonce_lib.nt_xent_grad`),
backpropagates them to the weights (:func:`~infonce_lib.encoder_gradients`' computation)
and takes one step of Adam (:class:`~infonce_lib.Adam`; Kingma & Ba, 2015).

**The temperature.** Either fixed, or learned as CLIP learns it (Radford et al., 2021,
section 2.5): the parameter is the log scale :math:`t = \log(1/\tau)`, started at
CLIP's :math:`\tau = 0.07`, updated by Adam with the weights, and after every step clipped
to :math:`[0, \log 100]`, so that the logits are never scaled by more than 100 (CLIP's cap,
quoted from ``infonce_lib.published``; clipping the parameter after the step is how the
open_clip implementation applies it) nor by less than 1.

**Precision.** With ``compute_dtype="float32"`` the forward and backward passes of the
encoder run in float32 on a float32 copy of the weights (about half the time); the loss,
its gradients, the weights and Adam's moments stay in float64, and so does everything the
book reports (:func:`~infonce_lib.encode` computes in float64).

All the randomness of a run (the initial weights, the batches, the views) comes from the one
generator ``seed``, in that order, so a run is a function of its configuration and seed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._validation import (
    as_generator,
    as_int,
    as_positive_scalar,
    as_real_array,
    as_sequence,
)
from ..optim import Adam
from ..published import CLIP_TEMPERATURE
from .encoder import Encoder, _backward, _forward, init_encoder
from .objective import nt_xent_grad, symmetric_infonce_grad
from .views import ViewRecipe, make_views

__all__ = ["TrainingConfig", "TrainingRun", "train_encoder"]

_CLIP = CLIP_TEMPERATURE.values
_LOSSES = {"symmetric": symmetric_infonce_grad, "nt_xent": nt_xent_grad}
_DTYPES = {"float64": np.float64, "float32": np.float32}


@dataclass(frozen=True)
class TrainingConfig:
    r"""What :func:`train_encoder` does; validated on creation (errors name the field).

    Attributes
    ----------
    sizes : tuple of int, default (64, 128, 32)
        The encoder's layer widths (:func:`~infonce_lib.init_encoder`).
    views : ViewRecipe, default ViewRecipe(shift=1, dropout=0.2, noise=0.1)
        How each view is drawn.
    steps : int, default 900
        Adam steps, ``>= 1``.
    batch_size : int, default 64
        Images per step, ``>= 2``: each step scores ``batch_size`` positive pairs against
        one another (no more than the training images).
    temperature : float or "learned", default 0.1
        A fixed :math:`\tau > 0`, or ``"learned"``: the log scale is learned (module
        docstring), from ``initial_temperature``.
    initial_temperature : float, default 0.07
        Where a learned temperature starts (CLIP's, quoted).
    max_logit_scale : float, default 100
        The clip of a learned scale :math:`1/\tau`, ``>= 1`` (CLIP's, quoted).
    learning_rate : float, default 2e-3
        Adam's step size, for the weights and the log scale alike.
    loss : {"symmetric", "nt_xent"}, default "symmetric"
        :func:`~infonce_lib.symmetric_infonce_grad` or :func:`~infonce_lib.nt_xent_grad`.
    checkpoints : tuple of int, default ()
        Steps (``1`` to ``steps``) after which a copy of the encoder is kept.
    compute_dtype : {"float64", "float32"}, default "float64"
        The precision of the encoder's forward and backward passes (module docstring).

    Examples
    --------
    >>> TrainingConfig(temperature="learned").initial_temperature
    0.07
    >>> TrainingConfig(temperature=0.0)
    Traceback (most recent call last):
    ...
    ValueError: temperature must be > 0; got 0.0
    """

    sizes: tuple = (64, 128, 32)
    views: ViewRecipe = field(default_factory=lambda: ViewRecipe(shift=1, dropout=0.2, noise=0.1))
    steps: int = 900
    batch_size: int = 64
    temperature: float | str = 0.1
    initial_temperature: float = _CLIP["initial_temperature"]
    max_logit_scale: float = float(_CLIP["max_logit_scale"])
    learning_rate: float = 2e-3
    loss: str = "symmetric"
    checkpoints: tuple = ()
    compute_dtype: str = "float64"

    def __post_init__(self) -> None:
        def put(name, value):
            object.__setattr__(self, name, value)

        sizes = as_sequence(self.sizes, "sizes")
        if len(sizes) < 2:
            raise ValueError(f"sizes must give at least two widths; got {sizes}")
        put("sizes", tuple(as_int(n, "sizes", minimum=1) for n in sizes))
        if not isinstance(self.views, ViewRecipe):
            raise TypeError(f"views must be a ViewRecipe; got {type(self.views).__name__}")
        put("steps", as_int(self.steps, "steps", minimum=1))
        put("batch_size", as_int(self.batch_size, "batch_size", minimum=2))
        if self.temperature != "learned":
            if isinstance(self.temperature, str):
                raise ValueError(f"temperature must be a number or 'learned'; got {self.temperature!r}")
            put("temperature", as_positive_scalar(self.temperature, "temperature"))
        put("initial_temperature", as_positive_scalar(self.initial_temperature, "initial_temperature"))
        scale = as_positive_scalar(self.max_logit_scale, "max_logit_scale")
        if scale < 1.0:
            raise ValueError(f"max_logit_scale must be >= 1; got {scale}")
        put("max_logit_scale", scale)
        put("learning_rate", as_positive_scalar(self.learning_rate, "learning_rate"))
        for name, options in (("loss", _LOSSES), ("compute_dtype", _DTYPES)):
            if not isinstance(getattr(self, name), str) or getattr(self, name) not in options:
                raise ValueError(f"{name} must be one of {sorted(options)}; got {getattr(self, name)!r}")
        steps = tuple(as_int(s, "checkpoints", minimum=1) for s in as_sequence(self.checkpoints, "checkpoints"))
        if any(s > self.steps for s in steps):
            raise ValueError(f"checkpoints must be steps from 1 to steps = {self.steps}; got {steps}")
        put("checkpoints", tuple(sorted(set(steps))))

    @property
    def learned(self) -> bool:
        """Whether the temperature is learned."""
        return self.temperature == "learned"


@dataclass(frozen=True)
class TrainingRun:
    """What :func:`train_encoder` returns.

    Attributes
    ----------
    encoder : Encoder
        The trained weights.
    losses : numpy.ndarray, shape (steps,)
        The training loss at each step (on that step's batch, before its update).
    temperatures : numpy.ndarray, shape (steps,)
        The temperature :math:`\\tau` each step used (constant unless learned).
    final_temperature : float
        The temperature after the last step (a learned one after its last update).
    checkpoints : dict of int to Encoder
        A copy of the encoder after each step of ``config.checkpoints``.
    config : TrainingConfig
        The configuration of the run.

    Examples
    --------
    >>> from infonce_lib import load_digits
    >>> cfg = TrainingConfig(sizes=(64, 16, 8), steps=5, batch_size=8, checkpoints=(2,))
    >>> run = train_encoder(load_digits().x_train, cfg, seed=0)
    >>> run.losses.shape, sorted(run.checkpoints), run.final_temperature
    ((5,), [2], 0.1)
    """

    encoder: Encoder
    losses: np.ndarray
    temperatures: np.ndarray
    final_temperature: float
    checkpoints: dict
    config: TrainingConfig


def _check_training_images(images, config: TrainingConfig) -> np.ndarray:
    X = as_real_array(images, "images", ndim=2)
    if X.shape[1] != config.sizes[0]:
        raise ValueError(
            f"images must have {config.sizes[0]} columns (config.sizes[0]); got {X.shape[1]}"
        )
    if X.shape[0] < config.batch_size:
        raise ValueError(
            f"images must hold at least batch_size = {config.batch_size} rows; got {X.shape[0]}"
        )
    return X


def train_encoder(images, config: TrainingConfig | None = None, *, seed) -> TrainingRun:
    r"""Train an encoder on ``images`` with InfoNCE and Adam (module docstring).

    Parameters
    ----------
    images : array_like, shape (n, sizes[0])
        The training images, unlabelled; ``n >= batch_size``. Not modified.
    config : TrainingConfig, optional
        ``None`` is ``TrainingConfig()``.
    seed : int or numpy.random.Generator
        The generator of every draw of the run.

    Returns
    -------
    TrainingRun
        The encoder, the loss and temperature of every step, and the checkpoints.

    Raises
    ------
    TypeError, ValueError
        If ``images`` is not a finite 2-D real array with ``sizes[0]`` columns and at least
        ``batch_size`` rows, ``config`` is not a :class:`TrainingConfig`, or ``seed`` is not
        an int ``>= 0`` or a Generator; ``ValueError`` if the training diverges (a loss or a
        gradient overflows).

    Examples
    --------
    >>> from infonce_lib import load_digits
    >>> cfg = TrainingConfig(sizes=(64, 16, 8), steps=30, batch_size=16, temperature="learned")
    >>> run = train_encoder(load_digits().x_train, cfg, seed=0)
    >>> bool(run.losses[-10:].mean() < run.losses[:10].mean()), run.temperatures[0]
    (True, np.float64(0.07))
    """
    config = TrainingConfig() if config is None else config
    if not isinstance(config, TrainingConfig):
        raise TypeError(f"config must be a TrainingConfig or None; got {type(config).__name__}")
    X = _check_training_images(images, config)
    rng = as_generator(seed)
    encoder = init_encoder(config.sizes, seed=rng)
    tau0 = config.initial_temperature if config.learned else config.temperature
    log_scale = np.array([math.log(1.0 / tau0)])
    params = list(encoder.weights) + ([log_scale] if config.learned else [])
    adam = Adam(params, lr=config.learning_rate)
    losses, taus, snapshots = np.empty(config.steps), np.empty(config.steps), {}
    for step in range(config.steps):
        taus[step] = math.exp(-log_scale[0]) if config.learned else config.temperature
        losses[step], grads = _step(encoder, X, config, rng, float(log_scale[0]))
        adam.step(grads if config.learned else grads[:-1])
        if config.learned:  # CLIP's clip, applied to the parameter after the step
            np.clip(log_scale, 0.0, math.log(config.max_logit_scale), out=log_scale)
        if step + 1 in config.checkpoints:
            snapshots[step + 1] = encoder.copy()
    final = math.exp(-log_scale[0]) if config.learned else config.temperature
    return TrainingRun(encoder, _frozen(losses), _frozen(taus), final, snapshots, config)


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _step(encoder: Encoder, X: np.ndarray, config: TrainingConfig, rng, log_scale: float):
    """One minibatch: its loss, and the gradients of the weights and the log scale."""
    B = config.batch_size
    batch = X[rng.choice(X.shape[0], size=B, replace=False)]
    views = make_views(np.concatenate([batch, batch]), config.views, seed=rng)
    dtype = _DTYPES[config.compute_dtype]
    weights = [w.astype(dtype) for w in encoder.weights] if dtype is not np.float64 else encoder.weights
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        U, cache = _forward(weights, views.astype(dtype))
    if not np.isfinite(U).all():
        raise ValueError("the training diverged: an embedding is not finite; lower learning_rate")
    out = _LOSSES[config.loss](U[:B], U[B:], log_scale)
    G = np.concatenate([out.grad_a, out.grad_b]).astype(dtype)
    grads = _backward(weights, cache, U, G)
    return out.loss, [*grads, np.array([out.grad_log_scale])]
