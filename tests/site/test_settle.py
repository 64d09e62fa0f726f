"""`settle`: the browser tests' way to wait for a page's promise without holding it in Playwright.

Needs only a Chromium (no built site): a blank page runs each case.
"""

from __future__ import annotations

import pytest

from tests.site.browser import settle
from tests.site.conftest import launch


@pytest.fixture(scope="module")
def page(playwright_api, chromium):
    pw, context = launch(playwright_api, chromium, "chromium-settle-profile", ("data:",))
    page = context.new_page()
    page.set_content("<p>settle</p>")
    yield page
    context.close()
    pw.stop()


def test_a_plain_value_and_a_later_one(page):
    assert settle(page, "(x) => x + 1", 41) == 42
    later = "(x) => new Promise((ok) => setTimeout(() => ok({twice: 2 * x}), 300))"
    assert settle(page, later, 21) == {"twice": 42}
    assert settle(page, "() => undefined") is None


def test_a_rejection_is_an_assertion_with_the_page_error(page):
    with pytest.raises(AssertionError, match="rejected in the page: Error: no kernel"):
        settle(page, "async () => { throw new Error('no kernel'); }")


def test_a_promise_that_never_settles_times_out(page):
    with pytest.raises(Exception, match="Timeout 500ms exceeded"):
        settle(page, "() => new Promise(() => {})", timeout_ms=500)


def test_a_reload_before_it_settles_is_reported(page):
    with pytest.raises(AssertionError, match="the page was replaced"):
        settle(page, "() => new Promise(() => { setTimeout(() => location.reload(), 50); })")
