import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# The Makefile pins one BLAS thread (OPENBLAS_NUM_THREADS=1) for every test run.
settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci")


@pytest.fixture
def rng():
    return np.random.default_rng(20261129)
