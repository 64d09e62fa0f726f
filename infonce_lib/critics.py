r"""Trainable critics :math:`f(x, y)` for the score matrix, with hand-written gradients.

Two architectures of Poole et al. (2019; as their Colab builds them), both small ReLU
multilayer perceptrons (MLPs) in NumPy:

- :class:`SeparableCritic`: :math:`f(x, y) = g(x)^\top h(y)`, two MLPs and one inner
  product, so a batch of :math:`K` pairs costs :math:`2K` network evaluations and one
  :math:`K \times K` matrix product (the critic of contrastive learning);
- :class:`JointCritic`: :math:`f(x, y) = u([x, y])`, one MLP on the concatenation, which
  can represent any function of the pair but costs :math:`K^2` evaluations.

Both return scores in the book's convention, ``F[i, j] = f(x_j, y_i)`` (rows the
:math:`y_i`, columns the candidates :math:`x_j`), and a ``backward`` that turns the
gradient of any objective with respect to ``F`` into gradients for every parameter, in the
order of ``params``. An optimiser such as :class:`~infonce_lib.Adam` updates
``params`` in place.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ._validation import (
    as_generator,
    as_int,
    as_positive_scalar,
    as_real_array,
    finite_or_raise,
)

__all__ = [
    "JointCritic",
    "SeparableCritic",
    "flatten_grads",
    "mlp_backward",
    "mlp_forward",
    "mlp_init",
]


def _check_sizes(sizes) -> tuple[int, ...]:
    if not isinstance(sizes, list | tuple) or len(sizes) < 2:
        raise TypeError(f"sizes must be a list of at least 2 layer widths; got {sizes!r}")
    return tuple(as_int(s, "sizes[...]", minimum=1) for s in sizes)


def mlp_init(sizes, seed, *, out_scale: float = 1.0) -> list[np.ndarray]:
    r"""Parameters of a ReLU MLP with layer widths ``sizes``, He-initialised.

    Layer :math:`l` maps width :math:`n_l` to :math:`n_{l+1}` with weights drawn from
    :math:`\mathcal{N}(0, 2 / n_l)` (He et al., 2015) and zero biases; the output layer's
    weights are then multiplied by ``out_scale``.

    Parameters
    ----------
    sizes : sequence of int
        ``(n_in, hidden..., n_out)``, at least two entries, each ``>= 1``.
    seed : int or numpy.random.Generator
        Explicit source of randomness.
    out_scale : float, default 1.0
        Factor on the initial output weights (``> 0``); small values start the network
        near the zero function.

    Returns
    -------
    list of numpy.ndarray
        ``[W_1, b_1, W_2, b_2, ...]``, ``W_l`` of shape ``(n_l, n_{l+1})``.

    Raises
    ------
    TypeError, ValueError
        If ``sizes`` is not a list of positive ints or ``seed`` is missing.

    Examples
    --------
    >>> [p.shape for p in mlp_init([3, 8, 2], seed=0)]
    [(3, 8), (8,), (8, 2), (2,)]
    """
    sz = _check_sizes(sizes)
    rng = as_generator(seed)
    scale = as_positive_scalar(out_scale, "out_scale")
    params = []
    for n_in, n_out in itertools.pairwise(sz):
        params.append(rng.normal(scale=math.sqrt(2.0 / n_in), size=(n_in, n_out)))
        params.append(np.zeros(n_out))
    params[-2] *= scale
    return params


def _matmul(h: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``h @ W``, as one 2-D product when ``W`` is one matrix and ``h`` has several leading
    axes of samples (NumPy would otherwise loop over the leading axis, a third slower), and
    as a broadcast product when the inner dimension is 1 (an outer product)."""
    if W.shape[-2] == 1:
        return h * W[..., 0, :] if W.ndim == 2 else h * W
    if W.ndim == 2 and h.ndim > 2:
        return (h.reshape(-1, h.shape[-1]) @ W).reshape(*h.shape[:-1], W.shape[-1])
    return h @ W


def _forward(params, X):
    """Unchecked forward pass; returns the output and the inputs of each layer."""
    n_layers = len(params) // 2
    h, inputs = X, []
    with np.errstate(over="ignore", invalid="ignore"):  # the callers check the result
        for layer in range(n_layers):
            W, b = params[2 * layer], params[2 * layer + 1]
            inputs.append(h)
            h = _matmul(h, W)
            h = np.add(h, b, out=h) if h.ndim >= b.ndim else h + b  # in place if it can
            if layer < n_layers - 1:
                np.maximum(h, 0.0, out=h)
    return h, inputs


_HINT = "rescale the inputs or the weights"


def _backward(params, inputs, d_out, *, need_input: bool = True):
    """Unchecked backward pass; returns the parameter gradients and d(input) (``None``
    without ``need_input``, which saves the last product)."""
    n_layers = len(params) // 2
    grads = [None] * len(params)
    d = d_out
    for layer in reversed(range(n_layers)):
        W = params[2 * layer]
        h_in = inputs[layer]
        if W.ndim == 3:  # a stack of independent copies: (C, n_in, n_out), biases (C, 1, n_out)
            grads[2 * layer] = np.swapaxes(h_in, -1, -2) @ d
            grads[2 * layer + 1] = d.sum(axis=-2, keepdims=True)
        else:  # one network; any leading axes of h_in are samples
            grads[2 * layer] = h_in.reshape(-1, h_in.shape[-1]).T @ d.reshape(-1, d.shape[-1])
            grads[2 * layer + 1] = d.reshape(-1, d.shape[-1]).sum(axis=0)
        if layer == 0 and not need_input:
            return grads, None
        d = _matmul(d, np.swapaxes(W, -1, -2))
        if layer > 0:
            d *= h_in > 0.0  # h_in is the ReLU output of the layer below
    return grads, d


def _check_d_scores(d_scores, ndim: int, dtype) -> np.ndarray:
    """``d_scores`` as a finite float64 array that fits ``dtype``, or an error naming it."""
    dF = as_real_array(d_scores, "d_scores", ndim=ndim)
    big = float(np.finfo(dtype).max)
    if np.abs(dF).max() > big:
        raise ValueError(
            f"d_scores must fit the critic's dtype {np.dtype(dtype).name} (|entries| <= "
            f"{big:.4g}); got entries up to {np.abs(dF).max():.4g}"
        )
    return dF


_DTYPES = {"float64": np.float64, "float32": np.float32}


def _check_dtype(dtype) -> type:
    """``np.float64`` or ``np.float32`` from their names (or the NumPy types)."""
    for name, t in _DTYPES.items():
        if dtype is t or dtype == name:
            return t
    raise ValueError(f"dtype must be 'float64' or 'float32'; got {dtype!r}")


def _flat_views(params: list[np.ndarray], dtype) -> tuple[np.ndarray, list[np.ndarray]]:
    """One contiguous buffer of ``dtype`` and the parameters as views into it (same order)."""
    flat = np.concatenate([p.ravel() for p in params]).astype(dtype, copy=False)
    views, start = [], 0
    for p in params:
        views.append(flat[start : start + p.size].reshape(p.shape))
        start += p.size
    return flat, views


def _views_of(flat: np.ndarray, shapes) -> list[np.ndarray]:
    views, start = [], 0
    for shape in shapes:
        n = math.prod(shape)
        views.append(flat[start : start + n].reshape(shape))
        start += n
    return views


class _PicklesViews:
    """Pickling keeps ``params`` views into ``flat`` (pickle alone would copy them)."""

    def __getstate__(self):
        state = self.__dict__.copy()
        state["params"] = [p.shape for p in self.params]
        return state

    def __setstate__(self, state):
        shapes = state.pop("params")
        self.__dict__.update(state)
        self.params = _views_of(self.flat, shapes)


def flatten_grads(grads) -> np.ndarray:
    """The gradients of :meth:`SeparableCritic.backward` (or a joint critic's) as one float64
    vector (an optimiser casts it back to a float32 critic's dtype exactly).

    In the order of the critic's ``flat`` buffer, so that one optimiser step on ``flat``
    updates every parameter.

    Raises
    ------
    TypeError, ValueError
        If ``grads`` is not a non-empty list (or tuple) of finite real arrays, naming the
        entry at fault.

    Examples
    --------
    >>> flatten_grads([np.ones((2, 2)), np.zeros(2)])
    array([1., 1., 1., 1., 0., 0.])
    """
    if not isinstance(grads, list | tuple):
        raise TypeError(
            f"grads must be a list of gradient arrays (as backward returns); got "
            f"{type(grads).__name__}"
        )
    if not grads:
        raise ValueError(
            "grads must hold at least one gradient array (as backward returns); got []"
        )
    parts = [as_real_array(g, f"grads[{i}]").ravel() for i, g in enumerate(grads)]
    return np.concatenate(parts)


def _check_params(params) -> list[np.ndarray]:
    if not isinstance(params, list | tuple) or len(params) < 2 or len(params) % 2:
        raise TypeError("params must be the list [W_1, b_1, ...] returned by mlp_init")
    return [as_real_array(p, f"params[{i}]", ndim=(1, 2)) for i, p in enumerate(params)]


def mlp_forward(params, X) -> tuple[np.ndarray, list[np.ndarray]]:
    r"""The MLP's output :math:`W_L^\top \phi(\dots \phi(W_1^\top x + b_1) \dots) + b_L`.

    :math:`\phi = \max(0, \cdot)` on every hidden layer, none on the output.

    Parameters
    ----------
    params : list of numpy.ndarray
        As returned by :func:`mlp_init`.
    X : array_like, shape (..., n_in)

    Returns
    -------
    out : numpy.ndarray, shape (..., n_out)
    cache : list of numpy.ndarray
        The input of each layer, for :func:`mlp_backward`.

    Raises
    ------
    TypeError, ValueError
        On malformed parameters or input.

    Examples
    --------
    >>> params = [np.eye(2), np.zeros(2), np.ones((2, 1)), np.zeros(1)]
    >>> mlp_forward(params, [[1.0, -2.0]])[0]  # relu(1, -2) = (1, 0), summed
    array([[1.]])
    """
    P = _check_params(params)
    A = as_real_array(X, "X")
    if A.shape[-1] != P[0].shape[0]:
        raise ValueError(f"X must have {P[0].shape[0]} features (last axis); got {A.shape}")
    out, cache = _forward(P, A)
    return finite_or_raise(out, "the MLP's output from params and X", _HINT), cache


def _check_cache(cache, P: list[np.ndarray]) -> list[np.ndarray]:
    """The cache of :func:`mlp_forward` for the parameters ``P``: one input per layer, each
    ``(..., n_l)`` with the same leading axes; else a ``TypeError``/``ValueError`` naming it."""
    n_layers = len(P) // 2
    what = f"cache must be the list of {n_layers} layer inputs that mlp_forward returns"
    if not isinstance(cache, list | tuple) or len(cache) != n_layers:
        got = f"{len(cache)} entries" if isinstance(cache, list | tuple) else type(cache).__name__
        raise TypeError(f"{what} with these params; got {got}")
    inputs = [as_real_array(h, f"cache[{i}]", ndim=None) for i, h in enumerate(cache)]
    lead = inputs[0].shape[:-1]
    for i, h in enumerate(inputs):
        if h.ndim < 1 or h.shape != (*lead, P[2 * i].shape[0]):
            raise ValueError(
                f"{what}: cache[{i}] must have shape {(*lead, P[2 * i].shape[0])} (the input "
                f"of layer {i + 1}); got {h.shape}"
            )
    return inputs


def mlp_backward(params, cache, d_out) -> tuple[list[np.ndarray], np.ndarray]:
    r"""Gradients of a scalar objective through the MLP, by the chain rule.

    Given :math:`\partial J / \partial \text{out}`, returns :math:`\partial J / \partial W_l`,
    :math:`\partial J / \partial b_l` (in the order of ``params``) and
    :math:`\partial J / \partial X`. The ReLU's derivative at 0 is taken as 0.

    Parameters
    ----------
    params : list of numpy.ndarray
    cache : list of numpy.ndarray
        From :func:`mlp_forward` on the same parameters.
    d_out : array_like, shape (..., n_out)

    Returns
    -------
    grads : list of numpy.ndarray
    d_X : numpy.ndarray, shape (..., n_in)

    Raises
    ------
    TypeError, ValueError
        On malformed parameters, a ``cache`` that is not :func:`mlp_forward`'s for these
        parameters (one input per layer, of the layer's width), or a ``d_out`` whose shape
        is not the output's; ``ValueError`` if a gradient overflows float64.

    Examples
    --------
    >>> params = [np.eye(2), np.zeros(2), np.ones((2, 1)), np.zeros(1)]
    >>> out, cache = mlp_forward(params, [[1.0, -2.0]])
    >>> grads, dX = mlp_backward(params, cache, np.ones_like(out))
    >>> dX  # only the active unit passes the gradient
    array([[1., 0.]])
    """
    P = _check_params(params)
    inputs = _check_cache(cache, P)
    d = as_real_array(d_out, "d_out")
    want = (*inputs[0].shape[:-1], P[-2].shape[1])
    if d.shape != want:
        raise ValueError(
            f"d_out must have the shape of the MLP's output for this cache, {want} (the "
            f"gradient of the objective with respect to out); got {d.shape}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        grads, dX = _backward(P, inputs, d)
    finite_or_raise(dX, "the gradient with respect to X (from d_out)", _HINT)
    return [finite_or_raise(g, "a parameter gradient", _HINT) for g in grads], dX


class SeparableCritic(_PicklesViews):
    r"""The separable critic :math:`f(x, y) = g(x)^\top h(y)` with two ReLU MLPs.

    Parameters
    ----------
    x_dim, y_dim : int
        Input dimensions.
    hidden : int, default 64
        Width of each hidden layer.
    embed : int, default 32
        Dimension of :math:`g(x)` and :math:`h(y)`.
    layers : int, default 1
        Hidden layers per MLP.
    out_scale : float, default 0.3
        Factor on the initial output weights of both MLPs (see :func:`mlp_init`): the
        initial scores are small, a critic that cannot yet tell the pairs apart.
    copies : int, optional
        If given, ``C = copies`` independent critics (each with its own initial weights)
        are held as one stack and evaluated on the same batch in one pass: scores of shape
        ``(C, K, K)``, weights of shape ``(C, n_in, n_out)``, biases ``(C, 1, n_out)``.
        Used to train several estimators side by side at the cost of one.
    dtype : {"float64", "float32"}, default "float64"
        The precision of the parameters (``flat``), of the forward and backward passes and
        of the gradients :meth:`backward` returns, as in a float32 network of a deep
        learning library: about twice as fast, and half the optimiser's memory traffic.
        The scores are returned in float64 either way, so an estimate computed from them
        is float64 arithmetic on scores that carry float32 round-off (relative 1e-7).
    seed : int or numpy.random.Generator
        Explicit source of randomness for the initial weights.

    Attributes
    ----------
    params : list of numpy.ndarray
        The weights of :math:`g`, then of :math:`h`: views into ``flat``.
    flat : numpy.ndarray
        All parameters in one vector of ``dtype``; an optimiser updates it in place (with
        :func:`flatten_grads` of :meth:`backward`'s gradients).

    Examples
    --------
    >>> critic = SeparableCritic(3, 3, hidden=8, embed=4, seed=0)
    >>> X = Y = np.ones((5, 3))
    >>> F, cache = critic.forward(X, Y)
    >>> F.shape, len(critic.backward(cache, np.ones_like(F))) == len(critic.params)
    ((5, 5), True)
    >>> SeparableCritic(3, 3, hidden=8, embed=4, copies=2, seed=0).forward(X, Y)[0].shape
    (2, 5, 5)
    """

    def __init__(
        self,
        x_dim,
        y_dim,
        *,
        hidden=64,
        embed=32,
        layers=1,
        out_scale=0.3,
        copies=None,
        dtype="float64",
        seed,
    ):
        self.dtype = _check_dtype(dtype)
        self.x_dim = as_int(x_dim, "x_dim", minimum=1)
        self.y_dim = as_int(y_dim, "y_dim", minimum=1)
        hid = as_int(hidden, "hidden", minimum=1)
        emb = as_int(embed, "embed", minimum=1)
        n = as_int(layers, "layers", minimum=0)
        self.copies = None if copies is None else as_int(copies, "copies", minimum=1)
        rng = as_generator(seed)

        def one():
            g = mlp_init([self.x_dim, *[hid] * n, emb], rng, out_scale=out_scale)
            h = mlp_init([self.y_dim, *[hid] * n, emb], rng, out_scale=out_scale)
            return g + h

        if self.copies is None:
            params = one()
        else:
            stacks = [one() for _ in range(self.copies)]
            params = [np.stack(ps) for ps in zip(*stacks, strict=True)]
            params = [p if i % 2 == 0 else p[:, None, :] for i, p in enumerate(params)]
        self._n_g = len(params) // 2
        self.flat, self.params = _flat_views(params, self.dtype)

    def _check_xy(self, X, Y):
        A = as_real_array(X, "X", ndim=2)
        B = as_real_array(Y, "Y", ndim=2)
        if A.shape[1] != self.x_dim or B.shape[1] != self.y_dim or len(A) != len(B):
            raise ValueError(
                f"X and Y must have shapes (K, {self.x_dim}) and (K, {self.y_dim}); "
                f"got {A.shape} and {B.shape}"
            )
        if self.dtype is not np.float64:
            A, B = A.astype(self.dtype), B.astype(self.dtype)
        return A, B

    def forward(self, X, Y) -> tuple[np.ndarray, tuple]:
        r"""Scores ``F[i, j] = g(x_j) . h(y_i)`` for a batch, and a cache for :meth:`backward`.

        Parameters
        ----------
        X, Y : array_like, shape (K, x_dim) and (K, y_dim)

        Returns
        -------
        F : numpy.ndarray, shape (K, K), or (C, K, K) with ``copies``
        cache : tuple
        """
        A, B = self._check_xy(X, Y)
        P = self.params
        G, cg = _forward(P[: self._n_g], A)
        H, ch = _forward(P[self._n_g :], B)
        with np.errstate(over="ignore", invalid="ignore"):
            F = finite_or_raise(H @ np.swapaxes(G, -1, -2), "the critic's scores of X and Y", _HINT)
        return F.astype(np.float64, copy=False), (G, H, cg, ch, P)

    def backward(self, cache, d_scores) -> list[np.ndarray]:
        r"""Parameter gradients from :math:`\partial J / \partial F` (the shape of ``F``).

        With ``copies``, ``d_scores[c]`` is the gradient of copy ``c``'s own objective.

        Returns
        -------
        list of numpy.ndarray
            One gradient per entry of ``params``, in the critic's ``dtype``.
        """
        G = cache[0]
        want = 2 if self.copies is None else 3
        dF = _check_d_scores(d_scores, want, self.dtype)
        if dF.shape[:-2] != G.shape[:-2] or dF.shape[-1] != G.shape[-2]:
            raise ValueError(f"d_scores must have the shape of the scores; got {dF.shape}")
        grads = self._unchecked_backward(cache, dF)
        return [finite_or_raise(g, "a parameter gradient (from d_scores)", _HINT) for g in grads]

    def _unchecked_backward(self, cache, dF) -> list[np.ndarray]:
        """:meth:`backward` without its checks (a trainer checks each copy's gradients)."""
        G, H, cg, ch, P = cache
        with np.errstate(over="ignore", invalid="ignore"):
            dF = dF.astype(self.dtype, copy=False)
            dG, dH = np.swapaxes(dF, -1, -2) @ H, dF @ G
            gg, _ = _backward(P[: self._n_g], cg, dG, need_input=False)
            gh, _ = _backward(P[self._n_g :], ch, dH, need_input=False)
        return gg + gh


class JointCritic(_PicklesViews):
    r"""The joint (concatenated) critic :math:`f(x, y) = u([x, y])` with one ReLU MLP.

    All :math:`K^2` pairs of a batch are scored. The first layer is split as
    :math:`[x, y] W_1 = x W_x + y W_y`, so it costs two :math:`K`-row products instead of
    one with :math:`K^2` rows.

    Parameters
    ----------
    x_dim, y_dim : int
        Input dimensions.
    hidden : int, default 64
        Width of each hidden layer.
    layers : int, default 2
        Hidden layers (``>= 1``).
    out_scale : float, default 0.3
        Factor on the initial output weights (see :func:`mlp_init`).
    copies : int, optional
        If given, ``C = copies`` independent critics held as one stack, as for
        :class:`SeparableCritic`: scores ``(C, K, K)``, weights ``(C, n_in, n_out)``,
        biases ``(C, 1, n_out)``.
    dtype : {"float64", "float32"}, default "float64"
        The precision of the parameters, the passes and the gradients (see
        :class:`SeparableCritic`); the scores are returned in float64.
    seed : int or numpy.random.Generator
        Explicit source of randomness.

    Attributes
    ----------
    params : list of numpy.ndarray
        ``[W_1, b_1, ..., W_L, b_L]``, ``W_1`` of shape ``(x_dim + y_dim, hidden)`` (with a
        leading copy axis with ``copies``): views into ``flat``.
    flat : numpy.ndarray
        All parameters in one vector of ``dtype``.

    Examples
    --------
    >>> critic = JointCritic(2, 3, hidden=8, seed=0)
    >>> F, cache = critic.forward(np.ones((4, 2)), np.zeros((4, 3)))
    >>> F.shape
    (4, 4)
    >>> JointCritic(2, 3, hidden=8, copies=3, seed=0).forward(np.ones((4, 2)),
    ...                                                      np.zeros((4, 3)))[0].shape
    (3, 4, 4)
    """

    def __init__(
        self, x_dim, y_dim, *, hidden=64, layers=2, out_scale=0.3, copies=None,
        dtype="float64", seed,
    ):  # fmt: skip
        self.dtype = _check_dtype(dtype)
        self.x_dim = as_int(x_dim, "x_dim", minimum=1)
        self.y_dim = as_int(y_dim, "y_dim", minimum=1)
        hid = as_int(hidden, "hidden", minimum=1)
        n = as_int(layers, "layers", minimum=1)
        self.copies = None if copies is None else as_int(copies, "copies", minimum=1)
        sizes = [self.x_dim + self.y_dim, *[hid] * n, 1]
        if self.copies is None:
            params = mlp_init(sizes, seed, out_scale=out_scale)
        else:
            rng = as_generator(seed)
            stacks = [mlp_init(sizes, rng, out_scale=out_scale) for _ in range(self.copies)]
            params = [np.stack(ps) for ps in zip(*stacks, strict=True)]
            params = [p if i % 2 == 0 else p[:, None, :] for i, p in enumerate(params)]
        self.flat, self.params = _flat_views(params, self.dtype)

    def _check_xy(self, X, Y):
        return SeparableCritic._check_xy(self, X, Y)

    def forward(self, X, Y) -> tuple[np.ndarray, tuple]:
        r"""Scores ``F[i, j] = u([x_j, y_i])`` for a batch, and a cache for :meth:`backward`.

        Returns
        -------
        F : numpy.ndarray, shape (K, K), or (C, K, K) with ``copies``
        cache : tuple
        """
        A, B = self._check_xy(X, Y)
        P = self.params
        if self.copies is None:
            F, cache = _joint_forward(P, A, B, self.x_dim)
        else:  # copy by copy: each copy's K^2 activations stay in the processor's cache
            # All copies' activations share one buffer: one large allocation per step
            # rather than one per copy (the operating system backs it with large pages,
            # and a training loop spends less time mapping fresh memory).
            K, hidden = len(A), P[0].shape[-1]
            H1 = np.empty((self.copies, K, K, hidden), dtype=self.dtype)
            parts = [
                _joint_forward([p[c] for p in P], A, B, self.x_dim, out=H1[c])
                for c in range(self.copies)
            ]
            F = np.stack([f for f, _ in parts])
            cache = [c for _, c in parts]
        F = finite_or_raise(F, "the critic's scores of X and Y", _HINT)
        return F.astype(np.float64, copy=False), (A, B, cache, P)

    def backward(self, cache, d_scores) -> list[np.ndarray]:
        r"""Parameter gradients from :math:`\partial J / \partial F` (the shape of ``F``).

        Returns
        -------
        list of numpy.ndarray
            One gradient per entry of ``params``, in the critic's ``dtype``.
        """
        A = cache[0]
        K = len(A)
        want = (K, K) if self.copies is None else (self.copies, K, K)
        dF = _check_d_scores(d_scores, len(want), self.dtype)
        if dF.shape != want:
            raise ValueError(f"d_scores must have the shape of the scores; got {dF.shape}")
        grads = self._unchecked_backward(cache, dF)
        return [finite_or_raise(g, "a parameter gradient (from d_scores)", _HINT) for g in grads]

    def _unchecked_backward(self, cache, dF) -> list[np.ndarray]:
        """:meth:`backward` without its checks (a trainer checks each copy's gradients)."""
        A, B, inner, P = cache
        with np.errstate(over="ignore", invalid="ignore"):
            dF = dF.astype(self.dtype, copy=False)
        if self.copies is None:
            grads = _joint_backward(P, A, B, inner, dF, self.x_dim)
        else:
            per = [
                _joint_backward([p[c] for p in P], A, B, inner[c], dF[c], self.x_dim)
                for c in range(self.copies)
            ]
            grads = [
                np.stack(g).reshape(p.shape) for g, p in zip(zip(*per, strict=True), P, strict=True)
            ]
        return grads


def _joint_forward(P, A, B, dx, out=None):
    """Unchecked scores of one joint critic (parameters ``P``) and its cache; ``out``, if
    given, receives the (K, K, hidden) first-layer activations."""
    W1, b1 = P[0], P[1]
    with np.errstate(over="ignore", invalid="ignore"):
        # The first layer of [x_j, y_i] is W1_y^T y_i + (W1_x^T x_j + b1): two (K, hidden)
        # products broadcast to (K, K, hidden); the bias joins the smaller term.
        Z = np.add((B @ W1[dx:])[:, None, :], (A @ W1[:dx] + b1)[None, :, :], out=out)
        H1 = np.maximum(Z, 0.0, out=Z)
    out, cache = _forward(P[2:], H1)
    return out[..., 0], (H1, cache)


def _joint_backward(P, A, B, inner, dF, dx):
    """Unchecked parameter gradients of one joint critic, in the order of ``P``."""
    H1, rest = inner
    with np.errstate(over="ignore", invalid="ignore"):
        if len(P) == 4:
            # One hidden layer, F = relu(Z) w + b2: dJ/dZ[i, j, h] = dF[i, j] w[h] [Z > 0].
            # The first layer needs only its sums over i and over j, so w multiplies those
            # (K, hidden) sums rather than a (K, K, hidden) array.
            on = np.sign(H1)  # H1 >= 0 (a ReLU's output): 1 where a unit is on, else 0
            w = P[2][:, 0]
            by_x = np.einsum("ij,ijh->jh", dF, on) * w  # sum over the views y_i
            by_y = np.einsum("ij,ijh->ih", dF, on) * w  # sum over the candidates x_j
            grads = [H1.reshape(-1, H1.shape[-1]).T @ dF.reshape(-1, 1), dF.sum().reshape(1)]
        else:
            grads, dZ = _backward(P[2:], rest, dF[..., None])
            dZ *= H1 > 0.0
            by_x, by_y = dZ.sum(axis=0), dZ.sum(axis=1)
        dW1 = np.concatenate([A.T @ by_x, B.T @ by_y])  # columns are the x_j, rows the y_i
        return [dW1, by_x.sum(axis=0), *grads]
