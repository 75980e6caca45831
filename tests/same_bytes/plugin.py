"""pytest plugin (-p tests.same_bytes.plugin): after each test, copy the files it wrote under its
tmp_path to $LGF_SAME_BYTES/<test id>/, for tests/same_bytes/compare.py."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

_KINDS = (".u3d", ".mesh", ".anim", ".3d", ".3ds", ".uc")


@pytest.fixture(autouse=True)
def _keep_exports(request):
    yield
    tmp = getattr(request.node, "funcargs", {}).get("tmp_path")
    if tmp is None or not Path(tmp).exists():
        return
    dest = Path(os.environ["LGF_SAME_BYTES"]) / re.sub(r"[^\w.-]+", "_", request.node.nodeid)
    for p in Path(tmp).rglob("*"):
        if p.is_file() and p.suffix.lower() in _KINDS:
            (dest / p.relative_to(tmp)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(p, dest / p.relative_to(tmp))
