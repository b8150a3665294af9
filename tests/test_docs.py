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


def _cited(text: str) -> set[str]:
    """Repository paths a doc cites in backticks: ``dir/file.ext`` forms, and bare ``NAME.md`` files in its prose
    (fenced command examples such as ``drk eval PROBLEM.py REPLY.md`` name placeholders, not files)."""
    import re

    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    paths = set(re.findall(r"`((?:[\w.-]+/)+[\w.-]+\.(?:py|md|sh|csv|json|jsonl|yaml|ipynb|toml))(?:::\w+)?`", text))
    return paths | set(re.findall(r"(?<![/\w])([A-Z][A-Z_]+\.md)\b", prose))


def test_docs_cite_only_files_in_the_repository():
    """Every file a doc names exists (``PLATFORM.md`` once did not); placeholders with ``<...>`` are skipped."""
    root = DOCS.parent
    missing = {}
    for doc in [*sorted(DOCS.glob("*.md")), root / "README.md", root / "figures" / "README.md"]:
        for cited in _cited(doc.read_text()):
            here = [root / cited, doc.parent / cited, root / "figures" / cited, root / "drk" / cited]
            if not any(path.exists() for path in here):
                missing.setdefault(doc.name, []).append(cited)
    assert missing == {}


def test_docs_name_modules_that_exist():
    """``drk.x.y`` names in docs/ resolve to a module or an attribute (``drk.gym.timing`` once did not)."""
    import importlib
    import re

    unresolved = []
    for doc in sorted(DOCS.glob("*.md")):
        for name in set(re.findall(r"`(drk(?:\.\w+)+)", doc.read_text())):
            parts, obj = name.split("."), None
            for cut in range(len(parts), 0, -1):  # the longest importable prefix, then attributes
                try:
                    obj = importlib.import_module(".".join(parts[:cut]))
                except ImportError:
                    continue
                for attr in parts[cut:]:
                    obj = getattr(obj, attr, None)
                break
            if obj is None:
                unresolved.append(f"{doc.name}: {name}")
    assert unresolved == []
