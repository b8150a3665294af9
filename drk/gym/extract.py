"""Finding the candidate module in an LLM reply."""

from __future__ import annotations

import re

_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)


def extract_code(reply: str) -> str | None:
    """Return the candidate module from ``reply``: the last fenced code block, or the reply itself.

    A reply with fences uses its LAST python (or untagged) block — models often show the reference first and
    their answer last. A reply without fences is taken as a bare module. Returns ``None`` for an empty reply.

    >>> extract_code("text\\n```python\\nA = 1\\n```\\nmore\\n```python\\nB = 2\\n```")
    'B = 2\\n'
    """
    if not reply or not reply.strip():
        return None
    blocks = _FENCE.findall(reply)
    if blocks:
        return blocks[-1]
    if "```" in reply:
        # An unterminated fence (truncated generation): take what follows the last opening fence.
        tail = reply.rsplit("```", 1)[1]
        return tail.split("\n", 1)[1] if "\n" in tail else None
    return reply
