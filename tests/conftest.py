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


@pytest.fixture
def rng():
    return np.random.default_rng(20261129)
