"""The docs name what the code does."""

from pathlib import Path

from drk.train.logs import METRICS

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_training_metric_is_documented():
    text = (DOCS / "metrics.md").read_text()
    assert [name for name in METRICS if f"`{name}`" not in text] == []


def test_reproduction_map_names_existing_tests():
    import re

    text = (DOCS / "reproduction.md").read_text()
    root = DOCS.parent
    for path in set(re.findall(r"`(tests/[\w/]+\.py)", text)):
        assert (root / path).is_file(), path
