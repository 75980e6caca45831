"""The README's generated tables stay in step with the code they describe."""
from __future__ import annotations

import re

import pytest

from addon.codec.cli import formats_text
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(name: str) -> str:
    m = re.search(rf"<!-- {name}:[^\n]*-->\n(.*?)\n<!-- /{name} -->", README, re.S)
    assert m, f"README has no generated {name} section"
    return m.group(1)


@pytest.mark.parametrize("name,make", [("options", formats_text.options_markdown),
                                       ("losses", formats_text.losses_markdown)])
def test_generated_section_is_current(name, make):
    assert section(name) == make(), (f"README's {name} table is out of date: replace it with "
                                      f"addon.codec.cli.formats_text.{make.__name__}()")


def test_options_reference_lists_every_option_of_every_format():
    from dataclasses import fields
    from addon.codec import registered_formats
    table = section("options")
    for name, spec in registered_formats().items():
        for cls in (spec.import_options, spec.export_options):
            for f in fields(cls):
                assert f"| {name} | " in table and f"`{f.name}`" in table, (name, f.name)


def batch_example() -> str:
    m = re.search(r"<!-- batch.py:[^\n]*-->\n```python\n(.*?)```", README, re.S)
    assert m, "README has no batch.py example"
    return m.group(1)


def test_batch_example_is_run_the_documented_way():
    assert "blender -b --python-exit-code 1 --python batch.py -- models/ out/" in README
    code = batch_example()
    assert ".lower().endswith" in code and "except RuntimeError" in code and "sys.exit(1 if failed" in code
