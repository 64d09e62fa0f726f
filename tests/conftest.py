import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# `make test` (profile "ci") gives the same verdict on every run and every machine: Hypothesis
# draws from a fixed seed (derandomize) and keeps no example database between runs.
# Exploration, with many more examples and fresh draws, is `make fuzz` (profile "explore",
# HYPOTHESIS_PROFILE=explore); a failure it finds becomes an explicit test case.
# The Makefile pins one BLAS thread (OPENBLAS_NUM_THREADS=1) for every test run.
settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "explore",
    max_examples=2000,
    deadline=None,
    derandomize=False,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def scaled_examples(n: int, profile: settings | None = None) -> int:
    """``n`` examples under the "ci" profile, scaled as the active profile scales the default.

    A test that sets its own ``max_examples`` (a fuzz specification, a slow property) would
    override the profile, so that ``make fuzz`` ran it with no more examples than ``make
    test``; it asks for ``scaled_examples(n)`` instead, which is ``n`` under "ci" and ``n``
    times 2000 / 60 under "explore" (``profile`` overrides the active one, for the tests).
    """
    active = settings.default if profile is None else profile
    return max(1, round(n * active.max_examples / settings.get_profile("ci").max_examples))


@pytest.fixture
def rng():
    return np.random.default_rng(20261129)


@pytest.fixture
def dgemm_calls(monkeypatch):
    """Counts SciPy's ``dgemm`` calls: a list with one entry per call, holding whether both
    matrix operands reached it column-major (so that it copied neither)."""
    import scipy.linalg.blas

    calls, real = [], scipy.linalg.blas.dgemm

    def counted(alpha, a, b, **kwargs):
        calls.append(a.flags.f_contiguous and b.flags.f_contiguous)
        return real(alpha, a, b, **kwargs)

    monkeypatch.setattr(scipy.linalg.blas, "dgemm", counted)
    return calls


@pytest.fixture
def browser_route(monkeypatch, dgemm_calls):
    """infonce_lib._blas's route where NumPy has no BLAS (the browser's), taken on purpose
    here; yields ``dgemm_calls``."""
    from infonce_lib import _blas

    monkeypatch.setattr(_blas, "NUMPY_WITHOUT_BLAS", True)
    return dgemm_calls
