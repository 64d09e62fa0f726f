r"""Training an encoder with InfoNCE: minibatches of view pairs, exact gradients, Adam.

Each step of :func:`train_encoder` takes ``batch_size`` distinct images, draws two independent
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

**Precision.** With ``compute_dtype="float32"`` each step (the encoder's forward and backward
passes, the loss and its gradients, and the random numbers of the views) runs in float32 on a
float32 copy of the weights, which is quicker; the weights and Adam's moments stay in
float64, and so does everything the book reports (:func:`~infonce_lib.encode` and the
evaluations compute in float64).

All the randomness (the initial weights of each run, then at each step the shuffles when an
epoch begins and the views) comes from the one generator ``seed``, so the runs are a
function of their configuration and seed.

**Several runs at once.** :func:`train_encoders` trains several encoders (of one
configuration, or of several that differ only in their views and temperature) in lock-step:
their weights are stacked along a leading axis, so that each matrix product, each call that
draws views and each Adam update serves all of them (NumPy's ``@`` broadcasts over that
axis). Each run has its own initial weights, its own shuffles of the
images and its own views, all drawn from the one generator; the runs are independent draws,
and together they take less time than one after the other.

**Batches.** Each run goes through the training images in epochs: a fresh shuffle, cut into
batches of ``batch_size`` distinct images (the last, incomplete batch of an epoch is skipped).
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
from .objective import _nt_xent, _symmetric
from .views import ViewRecipe, _check_recipe, _images, _views

__all__ = ["TrainingConfig", "TrainingRun", "train_encoder", "train_encoders"]

_CLIP = CLIP_TEMPERATURE.values
_LOSSES = ("nt_xent", "symmetric")
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
        Where a learned temperature starts (CLIP's, quoted); within the clip, from
        ``1 / max_logit_scale`` to 1.
    max_logit_scale : float, default 100
        The clip of a learned scale :math:`1/\tau`, ``>= 1`` (CLIP's, quoted).
    learning_rate : float, default 2e-3
        Adam's step size for the weights.
    log_scale_learning_rate : float or None, default None
        Adam's step size for a learned log scale; ``None`` is ``learning_rate`` (CLIP uses
        one for all its parameters). Adam moves a parameter by about its step size per step,
        so from :math:`\tau = 0.07` the clip :math:`\tau = 0.01` is
        :math:`\log(100 \times 0.07) \approx 1.95` away: about 1,000 steps at 2e-3.
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
    log_scale_learning_rate: float | None = None
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
        if not (isinstance(self.temperature, str) and self.temperature == "learned"):
            if isinstance(self.temperature, str):
                raise ValueError(
                    f"temperature must be a number or 'learned'; got {self.temperature!r}"
                )
            put("temperature", as_positive_scalar(self.temperature, "temperature"))
        put(
            "initial_temperature",
            as_positive_scalar(self.initial_temperature, "initial_temperature"),
        )
        scale = as_positive_scalar(self.max_logit_scale, "max_logit_scale")
        if scale < 1.0:
            raise ValueError(f"max_logit_scale must be >= 1; got {scale}")
        put("max_logit_scale", scale)
        if not 1.0 / scale <= self.initial_temperature <= 1.0:
            raise ValueError(
                f"initial_temperature must lie within the clip, from 1/max_logit_scale = "
                f"{1.0 / scale:g} to 1 (a scale 1/tau from 1 to {scale:g}); got "
                f"{self.initial_temperature:g}"
            )
        put("learning_rate", as_positive_scalar(self.learning_rate, "learning_rate"))
        if self.log_scale_learning_rate is not None:
            put(
                "log_scale_learning_rate",
                as_positive_scalar(self.log_scale_learning_rate, "log_scale_learning_rate"),
            )
        for name, options in (("loss", _LOSSES), ("compute_dtype", _DTYPES)):
            if not isinstance(getattr(self, name), str) or getattr(self, name) not in options:
                raise ValueError(
                    f"{name} must be one of {sorted(options)}; got {getattr(self, name)!r}"
                )
        steps = tuple(
            as_int(s, "checkpoints", minimum=1)
            for s in as_sequence(self.checkpoints, "checkpoints")
        )
        if any(s > self.steps for s in steps):
            raise ValueError(
                f"checkpoints must be steps from 1 to steps = {self.steps}; got {steps}"
            )
        put("checkpoints", tuple(sorted(set(steps))))

    @property
    def learned(self) -> bool:
        """Whether the temperature is learned."""
        return isinstance(self.temperature, str)


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
    return train_encoders(images, config, runs=1, seed=seed)[0]


def train_encoders(images, config=None, *, runs: int, seed) -> tuple:
    r"""Train ``runs`` encoders per configuration, all at once (module docstring).

    Several configurations train together if they share everything but their views, their
    temperature and their checkpoints (the network, the batch size, the steps, the
    learning rates, the loss and the precision): each run then has its own views and its own
    fixed or learned temperature.

    Parameters
    ----------
    images : array_like, shape (n, sizes[0])
        As :func:`train_encoder`.
    config : TrainingConfig or sequence of TrainingConfig, optional
        One configuration (``None`` is ``TrainingConfig()``) or several compatible ones.
    runs : int
        Encoders per configuration, ``>= 1``.
    seed : int or numpy.random.Generator
        The generator of every draw of every run.

    Returns
    -------
    tuple of TrainingRun
        ``runs`` runs of the first configuration, then ``runs`` of the second, and so on;
        each with its own initial weights, batches and views.

    Raises
    ------
    TypeError, ValueError
        As :func:`train_encoder`; if ``runs`` is not an integer ``>= 1``, or the
        configurations differ in more than their views, temperature and checkpoints.

    Examples
    --------
    >>> from infonce_lib import ViewRecipe, load_digits
    >>> x = load_digits().x_train
    >>> cfg = TrainingConfig(sizes=(64, 16, 8), steps=20, batch_size=16)
    >>> first, second = train_encoders(x, cfg, runs=2, seed=0)
    >>> bool(np.array_equal(first.losses, second.losses))  # independent draws
    False
    >>> other = TrainingConfig(sizes=(64, 16, 8), steps=20, batch_size=16,
    ...                        views=ViewRecipe(noise=0.1), temperature="learned")
    >>> [r.config.temperature for r in train_encoders(x, [cfg, other], runs=2, seed=0)]
    [0.1, 0.1, 'learned', 'learned']
    """
    configs = _configs(config)
    base = configs[0]
    X = _check_training_images(images, base)
    side = _images(X)[1]
    for i, c in enumerate(configs):
        _check_recipe(c.views, side, f"config[{i}].views" if len(configs) > 1 else "config.views")
    R = as_int(runs, "runs", minimum=1)
    rng = as_generator(seed)
    per_run = [c for c in configs for _ in range(R)]
    S = len(per_run)
    encoders = [init_encoder(base.sizes, seed=rng) for _ in range(S)]
    theta, weights = _flat(
        [np.stack(ws) for ws in zip(*(e.weights for e in encoders), strict=True)]
    )
    learned = np.array([c.learned for c in per_run])
    tau0 = [c.initial_temperature if c.learned else c.temperature for c in per_run]
    log_scale = np.log(1.0 / np.array(tau0))
    adam = Adam([theta], lr=base.learning_rate)
    adam_t = Adam([log_scale], lr=base.log_scale_learning_rate or base.learning_rate)
    groups = _view_groups(per_run)
    losses, taus = np.empty((base.steps, S)), np.empty((base.steps, S))
    snapshots: list[dict] = [{} for _ in range(S)]
    batches = _Batches(X.shape[0], base.batch_size, S, rng)
    for step in range(base.steps):
        taus[step] = np.exp(-log_scale)
        losses[step], grad, grad_t = _step(weights, theta, X[batches.next()], side, base, groups,
                                           rng, log_scale)  # fmt: skip
        adam.step([grad])
        if learned.any():  # CLIP's clip, applied to the parameter after the step
            adam_t.step([np.where(learned, grad_t, 0.0)])
            np.clip(log_scale, 0.0, math.log(base.max_logit_scale), out=log_scale, where=learned)
        for i, c in enumerate(per_run):
            if step + 1 in c.checkpoints:
                snapshots[i][step + 1] = Encoder(tuple(w[i].copy() for w in weights))
    return tuple(
        TrainingRun(
            Encoder(tuple(w[i].copy() for w in weights)),
            _frozen(losses[:, i].copy()),
            _frozen(taus[:, i].copy() if c.learned else np.full(base.steps, c.temperature)),
            math.exp(-log_scale[i]) if c.learned else c.temperature,
            snapshots[i],
            c,
        )
        for i, c in enumerate(per_run)
    )


#: What configurations trained together must share.
_SHARED = ("sizes", "steps", "batch_size", "learning_rate", "log_scale_learning_rate", "loss",
           "compute_dtype", "max_logit_scale")  # fmt: skip


def _configs(config) -> list[TrainingConfig]:
    if config is None:
        return [TrainingConfig()]
    if isinstance(config, TrainingConfig):
        return [config]
    if not isinstance(config, list | tuple) or not config:
        raise TypeError(
            f"config must be a TrainingConfig, a non-empty list of them, or None; got "
            f"{type(config).__name__}"
        )
    for i, c in enumerate(config):
        if not isinstance(c, TrainingConfig):
            raise TypeError(f"config[{i}] must be a TrainingConfig; got {type(c).__name__}")
        differ = [f for f in _SHARED if getattr(c, f) != getattr(config[0], f)]
        if differ:
            raise ValueError(
                f"config[{i}] differs from config[0] in {differ}; configurations trained "
                "together may differ only in views, temperature and checkpoints"
            )
    return list(config)


def _view_groups(per_run: list[TrainingConfig]) -> list[tuple[ViewRecipe, np.ndarray]]:
    """The runs of each distinct view recipe (their indices), so views are drawn per recipe."""
    recipes: dict[ViewRecipe, list[int]] = {}
    for i, c in enumerate(per_run):
        recipes.setdefault(c.views, []).append(i)
    return [(r, np.array(idx)) for r, idx in recipes.items()]


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _flat(arrays: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """One float64 vector holding ``arrays``, and views of it with their shapes (so that one
    Adam update moves every weight of every run)."""
    theta = np.concatenate([a.ravel() for a in arrays])
    return theta, _views_of(theta, arrays)


class _Batches:
    """Minibatches in epochs: each run goes through its own shuffle of the images,
    ``batch_size`` at a time (a batch never holds an image twice), and reshuffles when fewer
    than ``batch_size`` images are left."""

    def __init__(self, n: int, batch_size: int, runs: int, rng) -> None:
        self.n, self.B, self.runs, self.rng = n, batch_size, runs, rng
        self.order, self.at = None, n

    def next(self) -> np.ndarray:
        if self.at + self.B > self.n:
            self.order = np.argsort(self.rng.random((self.runs, self.n)), axis=1)
            self.at = 0
        out = self.order[:, self.at : self.at + self.B]
        self.at += self.B
        return out


def _step(weights, theta, batch, side: int, config: TrainingConfig, groups, rng, log_scale):
    """One minibatch per run (``batch`` of shape (runs, B, pixels)): the losses, the gradient
    of the flat weights ``theta`` (whose views are ``weights``) and of the log scales."""
    B = config.batch_size
    dtype = _DTYPES[config.compute_dtype]
    pairs = np.concatenate([batch, batch], axis=1).astype(dtype)
    V = np.empty(pairs.shape, dtype=dtype)
    for recipe, runs in groups:  # the views of each recipe in one call
        V[runs] = _views(pairs[runs], side, recipe, rng, dtype)
    w = weights if dtype is np.float64 else _views_of(theta.astype(dtype), weights)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        U, cache = _forward(w, V)
        core = _symmetric if config.loss == "symmetric" else _nt_xent
        loss, grad_a, grad_b, grad_t = core(U[:, :B], U[:, B:], np.exp(log_scale))
    if not (np.isfinite(loss).all() and np.isfinite(grad_t).all()):
        raise ValueError(
            "the loss is not finite: the images or the weights overflowed float64 "
            "(rescale the images, or lower learning_rate if the training diverged)"
        )
    grads = _backward(w, cache, U, np.concatenate([grad_a, grad_b], axis=1))
    return loss, np.concatenate([g.ravel() for g in grads]), grad_t


def _views_of(flat: np.ndarray, like: list[np.ndarray]) -> list[np.ndarray]:
    """Views of ``flat`` with the shapes of ``like``, in order."""
    out, start = [], 0
    for a in like:
        out.append(flat[start : start + a.size].reshape(a.shape))
        start += a.size
    return out
