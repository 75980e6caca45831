import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "test_assets"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import os  # noqa: E402

import pytest  # noqa: E402


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """In CI nothing may be skipped: a skip is reported as a failure."""
    outcome = yield
    rep = outcome.get_result()
    if rep.skipped and os.environ.get("CI"):
        rep.outcome = "failed"
        rep.longrepr = f"skipped in CI, which is not allowed: {rep.longrepr}"
