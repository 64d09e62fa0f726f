"""Tests for infonce_lib.bound_family and the bound-family experiment."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from infonce_lib import (
    barber_agakov_bound,
    bound_and_score_grad,
    correlated_gaussian_critic,
    correlated_gaussian_log_ratio,
    correlated_gaussian_rho,
    dv_bound,
    infonce_bound,
    interpolated_bound,
    js_bound,
    js_objective,
    nwj_bound,
    optimal_critic_estimates,
    sample_correlated_gaussian,
    tuba_bound,
)
from infonce_lib.experiments import bound_family as experiment
from tests.reference import logsumexp_list

# ---------------------------------------------------------------- references (plain loops)


def _batches(F):
    return np.asarray(F, dtype=float).tolist()


def dv_reference(F):
    out = []
    for f in _batches(F):
        K = len(f)
        off = [f[i][j] for i in range(K) for j in range(K) if i != j]
        joint = math.fsum(f[i][i] for i in range(K)) / K
        out.append(joint - (logsumexp_list(off) - math.log(K * (K - 1))))
    return np.array(out)


def tuba_reference(F, b):
    out = []
    for f, bb in zip(_batches(F), np.asarray(b, dtype=float).tolist(), strict=True):
        K = len(f)
        joint = math.fsum(f[i][i] - bb[i] for i in range(K)) / K
        marg = math.fsum(
            math.exp(f[i][j] - bb[i]) for i in range(K) for j in range(K) if i != j
        ) / (K * (K - 1))
        out.append(1.0 + joint - marg)
    return np.array(out)


def _softplus(t):
    return max(t, 0.0) + math.log1p(math.exp(-abs(t)))


def js_reference(F):
    out = []
    for f in _batches(F):
        K = len(f)
        pos = math.fsum(-_softplus(-f[i][i]) for i in range(K)) / K
        neg = math.fsum(_softplus(f[i][j]) for i in range(K) for j in range(K) if i != j)
        out.append(pos - neg / (K * (K - 1)))
    return np.array(out)


def alpha_reference(F, b, alpha):
    """Poole et al.'s I_alpha from a batch, every held-out pair j in turn."""
    out = []
    for f, bb in zip(_batches(F), np.asarray(b, dtype=float).tolist(), strict=True):
        K = len(f)

        def log_a(i, j, f=f, K=K, bb=bb):  # log(alpha mean_{k != j} e^f_ik + (1-alpha) e^b_i)
            m = logsumexp_list([f[i][k] for k in range(K) if k != j]) - math.log(K - 1)
            parts = []
            if alpha > 0:
                parts.append(math.log(alpha) + m)
            if alpha < 1:
                parts.append(math.log1p(-alpha) + bb[i])
            return logsumexp_list(parts)

        joint = math.fsum(f[i][i] - log_a(i, j) for i in range(K) for j in range(K) if i != j)
        marg = math.fsum(
            math.exp(f[i][j] - log_a(i, i)) for i in range(K) for j in range(K) if i != j
        )
        out.append(1.0 + (joint - marg) / (K * (K - 1)))
    return np.array(out)


def finite_difference(fun, F, h=1e-6):
    G = np.zeros_like(F)
    for idx in np.ndindex(F.shape):
        Fp, Fm = F.copy(), F.copy()
        Fp[idx] += h
        Fm[idx] -= h
        G[idx] = (fun(Fp)[idx[0]] - fun(Fm)[idx[0]]) / (2 * h)
    return G


scores_strategy = st.integers(3, 6).flatmap(
    lambda K: arrays(
        np.float64,
        st.tuples(st.integers(1, 3), st.just(K), st.just(K)),
        elements=st.floats(-20, 20, allow_nan=False),
    )
)


# ---------------------------------------------------------------- against the references


@given(scores_strategy)
def test_dv_tuba_js_match_loops(F):
    b = np.linspace(-1.0, 1.0, F.shape[0] * F.shape[1]).reshape(F.shape[:2])
    np.testing.assert_allclose(dv_bound(F), dv_reference(F), rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(tuba_bound(F, b), tuba_reference(F, b), rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(js_objective(F), js_reference(F), rtol=1e-10, atol=1e-9)


@given(scores_strategy, st.sampled_from([0.0, 0.01, 0.5, 1.0]))
def test_interpolated_matches_loops(F, alpha):
    b = np.linspace(-2.0, 2.0, F.shape[0] * F.shape[1]).reshape(F.shape[:2])
    np.testing.assert_allclose(
        interpolated_bound(F, b, alpha), alpha_reference(F, b, alpha), rtol=1e-9, atol=1e-8
    )


def test_special_cases_of_the_family(rng):
    F = rng.normal(scale=2.0, size=(4, 6, 6))
    # TUBA with log a = 1 and I_alpha at alpha = 0 with log a = 1 are NWJ
    np.testing.assert_allclose(tuba_bound(F, 1.0), nwj_bound(F), rtol=1e-12)
    np.testing.assert_allclose(interpolated_bound(F, 1.0, 0.0), nwj_bound(F), rtol=1e-12)
    # JS is NWJ of the critic shifted by 1
    np.testing.assert_allclose(js_bound(F), nwj_bound(F + 1.0), rtol=1e-12)
    # I_1: InfoNCE with K - 1 candidates, averaged over the held-out column; the baseline
    # plays no role
    K = F.shape[-1]
    held = []
    for j in range(K):
        keep = [k for k in range(K) if k != j]
        sub = F[:, keep][:, :, keep]
        held.append(infonce_bound(sub) * (K - 1))
    expected = np.sum(held, axis=0) / (K * (K - 1))
    np.testing.assert_allclose(interpolated_bound(F, 123.0, 1.0), expected, rtol=1e-10)


def test_dv_and_infonce_ignore_constants_nwj_does_not(rng):
    F = rng.normal(size=(3, 5, 5))
    np.testing.assert_allclose(dv_bound(F + 4.0), dv_bound(F), atol=1e-12)
    assert np.all(nwj_bound(F + 4.0) < nwj_bound(F))


def test_barber_agakov_exact_with_true_density():
    # h(Y) of N(0, I_d) and q = p(y | x): BA equals E[log p(y|x)] + h(Y) = I on average
    d, info = 4, 1.5
    rho = correlated_gaussian_rho(info, d)
    X, Y = sample_correlated_gaussian(64 * 400, rho, d, seed=3)
    F = correlated_gaussian_critic(X.reshape(400, 64, d), Y.reshape(400, 64, d), rho)
    h = 0.5 * d * math.log(2 * math.pi * math.e)
    v = barber_agakov_bound(F, h)
    assert abs(v.mean() - info) < 4 * v.std(ddof=1) / math.sqrt(len(v))


def test_barber_agakov_matches_diagonal(rng):
    F = rng.normal(size=(2, 3, 3))
    np.testing.assert_allclose(barber_agakov_bound(F, 2.5), 2.5 + np.diagonal(F, 0, 1, 2).mean(1))


def test_interpolated_cap(rng):
    F = rng.normal(scale=30.0, size=(50, 8, 8)) + 60.0 * np.eye(8)
    for alpha in (0.01, 0.3, 1.0):
        assert np.all(interpolated_bound(F, 0.0, alpha) <= 1 + math.log(7 / alpha) + 1e-9)


def test_log_ratio_critic_against_scipy():
    from scipy.stats import multivariate_normal

    d, rho = 3, 0.6
    X, Y = sample_correlated_gaussian(4, rho, d, seed=1)
    R = correlated_gaussian_log_ratio(X, Y, rho)
    for i in range(4):
        for j in range(4):
            cond = multivariate_normal(rho * X[j], (1 - rho**2) * np.eye(d)).logpdf(Y[i])
            marg = multivariate_normal(np.zeros(d), np.eye(d)).logpdf(Y[i])
            assert math.isclose(R[i, j], cond - marg, rel_tol=1e-12, abs_tol=1e-12)


# ---------------------------------------------------------------- on the Gaussian, truth known


@pytest.mark.parametrize("info", [1.0, 3.0])
def test_optimal_critic_on_gaussian(info):
    est = optimal_critic_estimates(info, dim=10, batch_size=32, n_batches=400, seed=5)
    se = {k: v.std(ddof=1) / math.sqrt(len(v)) for k, v in est.items()}
    # NWJ, JS (NWJ of 1 + log r) and I_alpha are lower bounds, tight at this critic
    for k in ("nwj", "js"):
        assert abs(est[k].mean() - info) < 4 * se[k], k
    assert est["alpha"].mean() < info + 4 * se["alpha"]
    # InfoNCE is below the information and every batch below log K
    assert est["infonce"].mean() < info - 4 * se["infonce"] or info < 1.5
    assert np.all(est["infonce"] <= math.log(32) + 1e-12)
    # DV with a batch log-mean-exp is biased upwards
    assert est["dv"].mean() > est["nwj"].mean()


def test_optimal_critic_estimates_validation():
    with pytest.raises(ValueError, match="information"):
        optimal_critic_estimates(-1.0, seed=0)
    with pytest.raises(TypeError, match="seed"):
        optimal_critic_estimates(1.0, seed=None)
    with pytest.raises(ValueError, match="alpha"):
        optimal_critic_estimates(1.0, alpha=2.0, seed=0)
    for bad, err in (("nwj", TypeError), ((), ValueError), (["nwj", "mine"], ValueError)):
        with pytest.raises(err, match="estimators"):
            optimal_critic_estimates(1.0, seed=0, estimators=bad)


@pytest.mark.parametrize(
    "subset", [("nwj",), ("alpha",), ("infonce",), ("js", "dv"), ("alpha", "infonce")]
)
def test_optimal_critic_estimates_subset_is_the_full_calls(subset):
    kw = dict(dim=5, batch_size=16, n_batches=20, alpha=0.3, seed=9)
    full = optimal_critic_estimates(4.0, **kw)
    part = optimal_critic_estimates(4.0, **kw, estimators=list(subset))
    assert list(part) == [k for k in full if k in subset]  # in the order of ESTIMATORS
    for k in subset:
        np.testing.assert_array_equal(part[k], full[k])


# ---------------------------------------------------------------- gradients


GRAD_CASES = [
    ("infonce", {}, infonce_bound),
    ("nwj", {}, nwj_bound),
    ("dv", {}, dv_bound),
    ("js", {}, js_objective),
    ("tuba", {"log_baseline": "b"}, lambda F, b: tuba_bound(F, b)),
    ("alpha", {"log_baseline": "b", "alpha": 0.0}, lambda F, b: interpolated_bound(F, b, 0.0)),
    ("alpha", {"log_baseline": "b", "alpha": 0.01}, lambda F, b: interpolated_bound(F, b, 0.01)),
    ("alpha", {"log_baseline": "b", "alpha": 0.6}, lambda F, b: interpolated_bound(F, b, 0.6)),
    ("alpha", {"log_baseline": "b", "alpha": 1.0}, lambda F, b: interpolated_bound(F, b, 1.0)),
]


@pytest.mark.parametrize(("name", "kw", "fun"), GRAD_CASES)
@pytest.mark.parametrize("dominant", [False, True])
def test_score_gradients_match_finite_differences(name, kw, fun, dominant, rng):
    F = rng.normal(scale=1.5, size=(2, 5, 5))
    if dominant:  # positives far above the rest, and one off-diagonal row maximum
        if name in ("nwj", "tuba") or kw.get("alpha") == 0.0:
            pytest.skip("unnormalised: values near e^40 leave no digits for differences")
        F[:, np.arange(5), np.arange(5)] += 25.0
        F[0, 2, 4] += 40.0
    b = rng.normal(size=(2, 5))
    kwargs = {k: (b if v == "b" else v) for k, v in kw.items()}
    f = (lambda G: fun(G, b)) if "log_baseline" in kw else fun
    values, grad = bound_and_score_grad(F, name, **kwargs)
    np.testing.assert_allclose(values, f(F), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, finite_difference(f, F), rtol=1e-6, atol=2e-8)


def test_gradient_validation(rng):
    F = rng.normal(size=(1, 4, 4))
    with pytest.raises(ValueError, match="estimator"):
        bound_and_score_grad(F, "mine")
    with pytest.raises(ValueError, match="log_baseline"):
        bound_and_score_grad(F, "tuba")
    with pytest.raises(ValueError, match="alpha"):
        bound_and_score_grad(F, "alpha", log_baseline=0.0)


# ---------------------------------------------------------------- validation and extremes


@pytest.mark.parametrize(
    "call",
    [
        lambda F: dv_bound(F),
        lambda F: tuba_bound(F, 0.0),
        lambda F: js_objective(F),
        lambda F: js_bound(F),
        lambda F: interpolated_bound(F, 0.0, 0.5),
        lambda F: barber_agakov_bound(F, 1.0),
    ],
)
def test_bad_scores_rejected(call):
    with pytest.raises(ValueError, match="scores"):
        call(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="square"):
        call(np.zeros((1, 3, 4)))
    with pytest.raises(ValueError, match="finite"):
        call(np.full((1, 3, 3), np.nan))
    with pytest.raises(TypeError, match="scores"):
        call([[["a"] * 3] * 3])


def test_argument_validation(rng):
    F = rng.normal(size=(2, 4, 4))
    with pytest.raises(ValueError, match="alpha"):
        interpolated_bound(F, 0.0, 1.5)
    with pytest.raises(TypeError, match="alpha"):
        interpolated_bound(F, 0.0, "half")
    with pytest.raises(ValueError, match="log_baseline"):
        tuba_bound(F, np.zeros(3))
    with pytest.raises(ValueError, match="K >= 3"):
        interpolated_bound(np.zeros((1, 2, 2)), 0.0, 0.5)
    with pytest.raises(ValueError, match="entropy"):
        barber_agakov_bound(F, math.inf)


def test_extreme_scores_finite_or_minus_inf_without_warnings():
    F = np.zeros((1, 4, 4))
    F[0, 0, 1] = 800.0  # e^800 overflows float64
    assert np.isfinite(dv_bound(F)).all()
    assert np.isfinite(js_objective(F)).all()
    assert tuba_bound(F, 0.0)[0] == -math.inf
    assert interpolated_bound(F, 0.0, 0.5)[0] > -math.inf
    assert interpolated_bound(F, 0.0, 0.0)[0] == -math.inf
    big = np.zeros((1, 4, 4)) + 700.0 * np.eye(4)
    assert np.isfinite(interpolated_bound(big, 0.0, 0.01)).all()


def test_inputs_not_modified(rng):
    F = rng.normal(size=(2, 4, 4))
    keep = F.copy()
    for call in (dv_bound, js_objective, js_bound, lambda G: interpolated_bound(G, 0.0, 0.3)):
        call(F)
    bound_and_score_grad(F, "alpha", log_baseline=0.0, alpha=0.3)
    np.testing.assert_array_equal(F, keep)


# ---------------------------------------------------------------- the experiment

SMALL = experiment.Protocol(protocol="chapter", seeds=2, steps_per_level=8, optimal_batches=4)


def test_experiment_is_reproducible():
    a, b = experiment.run(SMALL), experiment.run(SMALL)
    for kind in SMALL.kinds:
        np.testing.assert_array_equal(a.traces[kind], b.traces[kind])
    for c in a.columns:
        np.testing.assert_array_equal(a.optimal[c], b.optimal[c])
    other = experiment.run(dataclasses.replace(SMALL, seed=1))
    assert not np.array_equal(a.traces["joint"], other.traces["joint"])


def test_experiment_seed_estimates_are_the_tails_of_the_traces():
    r = experiment.run(SMALL)
    assert r.traces["separable"].shape == (2, len(r.columns), 40)
    # every batch value of InfoNCE is at most log K, whatever the critic
    k = r.columns.index("infonce")
    assert np.all(r.traces["joint"][:, k] <= math.log(64) + 1e-12)
    tails = r.traces["joint"][:, :, :].reshape(2, len(r.columns), 5, 8)[..., -2:]
    for n, c in enumerate(r.columns):
        np.testing.assert_allclose(r.estimates["joint"][c], tails[:, n].mean(axis=-1))
        np.testing.assert_allclose(r.within_sd["joint"][c], tails[:, n].std(axis=-1, ddof=1))


def test_experiment_checks_can_fail():
    p = experiment.Protocol(seeds=2, steps_per_level=4, optimal_batches=4)
    r = experiment.run(p)
    joint = r.estimates["joint"]
    assert all(isinstance(c.passed, bool) for c in experiment.checks(r))
    above = {**joint, "infonce": joint["infonce"] + 10.0}  # InfoNCE above log K everywhere
    bad = dataclasses.replace(r, estimates={**r.estimates, "joint": above})
    failed = [c.description for c in experiment.checks(bad) if not c.passed]
    assert any("at most log K" in d for d in failed)
    assert any("converged" in d for d in failed)
    low = {c: v - 100.0 for c, v in joint.items()}  # nothing passes log K + 0.5
    bad = dataclasses.replace(r, estimates={**r.estimates, "joint": low})
    failed = [c.description for c in experiment.checks(bad) if not c.passed]
    assert any("passes log K + 0.5" in d for d in failed)


@pytest.mark.parametrize(
    ("kw", "err"),
    [
        ({"protocol": "colab"}, ValueError),
        ({"critic": "concat"}, ValueError),
        ({"seeds": 0}, ValueError),
        ({"steps_per_level": 1}, ValueError),
        ({"tail": 0.0}, ValueError),
        ({"tail": 1.5}, ValueError),
        ({"optimal_batches": 1}, ValueError),
        ({"seed": -1}, ValueError),
        ({"jobs": 0}, ValueError),
    ],
)
def test_config_validation(kw, err):
    with pytest.raises(err):
        experiment.Config(**kw)


# ---------------------------------------------------------------- the exercise's checker


def test_checker_accepts_the_library_and_reports_stub(capsys):
    from infonce_lib import check_nwj_bound

    assert check_nwj_bound(lambda F: float(nwj_bound(np.asarray(F)[None])[0]), verbose=False)

    def stub(F):
        raise NotImplementedError

    assert check_nwj_bound(stub) is None
    assert "not attempted" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("mistake", "hint"),
    [
        ("diagonal in the marginal term", "off-diagonal"),
        ("forgets the 1/e", "e^(-1)"),
        ("DV instead of NWJ", "Donsker"),
        ("divides by K^2", "K(K-1)"),
        ("overwrites the input", "in place"),
    ],
)
def test_checker_names_each_mistake(mistake, hint, capsys):
    from infonce_lib import check_nwj_bound, nwj_mistakes

    assert check_nwj_bound(nwj_mistakes()[mistake]) is False
    assert hint in capsys.readouterr().out.replace("\n      ", " ")


def test_checker_reports_errors_without_raising(capsys):
    from infonce_lib import check_nwj_bound

    assert check_nwj_bound(lambda F: 1 / 0) is False
    assert "ZeroDivisionError" in capsys.readouterr().out
    with pytest.raises(TypeError, match="fn"):
        check_nwj_bound(3)


@pytest.mark.parametrize("where", ["off", "diag", "two_off"])
def test_far_extremes_give_a_value_or_a_clear_error(where, rng):
    # entries of +-1.7e308: a finite value, -inf for an overflowing exponential term, or
    # ValueError; never NaN, +inf or a RuntimeWarning (pytest turns those into errors)
    F = rng.normal(size=(2, 4, 4))
    if where == "off":
        F[0, 1, 2], F[0, 2, 1] = 1.7e308, -1.7e308
    elif where == "diag":
        F[0, 1, 1], F[0, 1, 2] = 1.7e308, -1.7e308
    else:
        F[0, 1, 2], F[0, 2, 3] = 1.7e308, 1.7e308
    calls = [
        dv_bound,
        js_objective,
        js_bound,
        lambda G: tuba_bound(G, 0.0),
        lambda G: interpolated_bound(G, 0.0, 0.5),
        lambda G: interpolated_bound(G, 0.0, 0.0),
        lambda G: bound_and_score_grad(G, "infonce")[0],
        lambda G: bound_and_score_grad(G, "dv")[0],
        lambda G: bound_and_score_grad(G, "js")[0],
        lambda G: bound_and_score_grad(G, "alpha", log_baseline=0.0, alpha=0.5)[0],
    ]
    for call in calls:
        try:
            v = call(F)
        except ValueError as exc:
            assert "rescale" in str(exc)
            continue
        assert not np.isnan(v).any() and not np.isposinf(v).any()


def test_tuba_tight_with_the_marginal_as_baseline():
    # critic log p(y|x) with baseline a(y) = p(y): e^f / a = r, so TUBA = 1 + I - 1 = I
    d, info, K, B = 6, 2.0, 32, 400
    rho = correlated_gaussian_rho(info, d)
    X, Y = sample_correlated_gaussian(K * B, rho, d, seed=11)
    X, Y = X.reshape(B, K, d), Y.reshape(B, K, d)
    F = correlated_gaussian_critic(X, Y, rho)
    log_py = -0.5 * d * math.log(2 * math.pi) - 0.5 * np.einsum("bid,bid->bi", Y, Y)
    v = tuba_bound(F, log_py)
    assert abs(v.mean() - info) < 4 * v.std(ddof=1) / math.sqrt(B)
    # the same critic shifted by the baseline is the log ratio: TUBA(a = 1) agrees
    np.testing.assert_allclose(tuba_bound(F - log_py[..., None], 0.0), v, rtol=1e-10)


def test_leave_one_out_log_means_against_a_direct_sum():
    # L[i, j] = log mean_{k != j} e^{F_ik}: every column, including each row's maximum,
    # against logsumexp over the kept entries; rows whose other entries underflow next to
    # the maximum (e^-800) take the re-shifted path and stay finite and exact.
    from scipy.special import logsumexp

    from infonce_lib.bound_family import _loo_log_means

    rng = np.random.default_rng(3)
    F = rng.normal(scale=5.0, size=(4, 6, 6))
    F[0, 0] = [0.0, -800.0, -801.0, -900.0, -850.0, -805.0]  # dominant maximum
    F[1, 2, 3] = 50.0
    L = _loo_log_means(F)[0]
    K = F.shape[-1]
    for b, i, j in np.ndindex(F.shape):
        kept = np.delete(F[b, i], j)
        assert L[b, i, j] == pytest.approx(logsumexp(kept) - math.log(K - 1), rel=1e-13, abs=1e-13)


def test_optimal_critic_estimates_equal_the_public_bounds():
    # DV, JS and NWJ share one log-mean inside optimal_critic_estimates, InfoNCE and I_alpha
    # the row sums of e^R; each must still equal its public function on the same scores.
    n, K, d, info = 5, 8, 4, 3.0
    est = optimal_critic_estimates(info, dim=d, batch_size=K, n_batches=n, seed=4)
    rho = correlated_gaussian_rho(info, d)
    X, Y = sample_correlated_gaussian(n * K, rho, d, np.random.default_rng(4))
    R = correlated_gaussian_log_ratio(X.reshape(n, K, d), Y.reshape(n, K, d), rho)
    np.testing.assert_array_equal(est["dv"], dv_bound(R))
    np.testing.assert_array_equal(est["js"], js_bound(R))
    np.testing.assert_array_equal(est["alpha"], interpolated_bound(R, 0.0, 0.01))
    # InfoNCE from the shared row sums, NWJ at 1 + log r as JS's value: equal to round-off.
    np.testing.assert_allclose(est["infonce"], infonce_bound(R), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(est["nwj"], nwj_bound(R + 1.0), rtol=1e-13, atol=1e-13)


def test_interpolated_bound_and_gradient_ignore_the_memory_layout():
    # Transposed (non-contiguous) scores give the same values and gradient as a C copy.
    F = np.random.default_rng(5).normal(scale=4.0, size=(3, 6, 6))
    T = np.swapaxes(F, -1, -2)
    C = np.ascontiguousarray(T)
    np.testing.assert_array_equal(interpolated_bound(T, 0.5, 0.1), interpolated_bound(C, 0.5, 0.1))
    for scores in (T, C):
        v, g = bound_and_score_grad(scores, "alpha", log_baseline=0.5, alpha=0.1)
        np.testing.assert_array_equal(v, interpolated_bound(C, 0.5, 0.1))
        np.testing.assert_array_equal(
            g, bound_and_score_grad(C, "alpha", log_baseline=0.5, alpha=0.1)[1]
        )


# ------------------------------------------- means of terms near 1.8e308 (finite, representable)


def _exact_mean(values):
    """The mean of float64 values, rounded once (exact rational arithmetic)."""
    from fractions import Fraction

    values = [float(v) for v in np.ravel(values)]
    return float(sum(map(Fraction, values)) / len(values))


def _huge_diagonal(sign, K=20, seed=7):
    """Batch 0: positives of size 1.6e308 to 1.7e308 (their sum overflows, their mean does
    not); batch 1: ordinary scores. Off-diagonal scores are ordinary in both."""
    rng = np.random.default_rng(seed)
    F = rng.normal(size=(2, K, K))
    idx = np.arange(K)
    F[0, idx, idx] = sign * rng.uniform(1.6e308, 1.7e308, size=K)
    return F


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_barber_agakov_and_dv_average_huge_positives(sign):
    F = _huge_diagonal(sign)
    idx = np.arange(20)
    want = _exact_mean(F[0, idx, idx])
    np.testing.assert_allclose(barber_agakov_bound(F, 1.0)[0], want, rtol=1e-15)
    np.testing.assert_allclose(dv_bound(F)[0], want, rtol=1e-15)
    # the ordinary batch is the plain formula, bit for bit, whatever batch 0 holds
    np.testing.assert_array_equal(barber_agakov_bound(F, 1.0)[1], barber_agakov_bound(F[1:], 1.0))
    np.testing.assert_array_equal(dv_bound(F)[1], dv_bound(F[1:]))


def test_the_family_averages_huge_negative_positives():
    # Each term is finite and every batch value is about the mean positive score, -1.65e308.
    F = _huge_diagonal(-1.0)
    idx = np.arange(20)
    want = _exact_mean(F[0, idx, idx])
    values = {
        "tuba": tuba_bound(F, 0.0),
        "js_objective": js_objective(F),
        "js_bound": js_bound(F),
        "interpolated": interpolated_bound(F, 0.0, 0.5),
    }
    kw = {"log_baseline": 0.0, "alpha": 0.5}
    for est in ("infonce", "nwj", "dv", "tuba", "js", "alpha"):
        v, g = bound_and_score_grad(F, est, **kw)
        assert np.isfinite(g).all(), est
        values[f"grad {est}"] = v
    for name, v in values.items():
        np.testing.assert_allclose(v[0], want, rtol=1e-15, err_msg=name)
        assert np.isfinite(v[1]), name


def test_exponential_and_softplus_terms_whose_sum_overflows_are_averaged():
    # Off-diagonal scores of 709: e^(F - 1) ~ 3e307 each, 380 of them overflow in sum.
    F = np.zeros((1, 20, 20)) + 709.0 * (1.0 - np.eye(20))
    want = 1.0 + 0.0 - 1.0 - math.exp(708.0)  # 1 + mean(F_ii - 1) - mean e^(F_ij - 1)
    np.testing.assert_allclose(bound_and_score_grad(F, "nwj")[0], want, rtol=1e-13)
    np.testing.assert_allclose(
        bound_and_score_grad(F, "tuba", log_baseline=1.0)[0], want, rtol=1e-13
    )
    # softplus(F_ij) ~ F_ij for off-diagonal scores near 1.7e308
    G = np.zeros((1, 20, 20)) + 1.7e308 * (1.0 - np.eye(20))
    want = -math.log(2.0) - 1.7e308  # -softplus(0) - mean softplus(1.7e308)
    np.testing.assert_allclose(js_objective(G), [want], rtol=1e-15)
    np.testing.assert_allclose(bound_and_score_grad(G, "js")[0], [want], rtol=1e-15)


def test_values_beyond_float64_raise_saying_what_overflowed():
    F = _huge_diagonal(1.0)
    with pytest.raises(ValueError, match="entropy plus the mean of the positive scores"):
        barber_agakov_bound(F, 1e308)
    G = F.copy()
    G[0] -= 1.7e308 * (1.0 - np.eye(20))  # positives +1.65e308, the others -1.7e308
    with pytest.raises(ValueError, match="the DV estimate"):
        dv_bound(G)
    with pytest.raises(ValueError, match="dv objective of a batch is not representable"):
        bound_and_score_grad(G, "dv")
    H = -G  # positives -1.65e308, the others +1.7e308: -sp(-F_ii) - sp(F_ij) < -1.8e308
    with pytest.raises(ValueError, match="the JS objective overflowed"):
        js_objective(H)
    with pytest.raises(ValueError, match="the scores minus log_baseline"):
        tuba_bound(F, -1e308)
