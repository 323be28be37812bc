"""The program to grade: the last fenced code block of the model's response."""

from __future__ import annotations

import re

# An opening fence (``` plus an optional info string such as "python") and the next closing fence,
# both at the start of a line (indentation allowed, as inside list items).
_BLOCK = re.compile(r"^[ \t]*```[^\n`]*\n(.*?)^[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)


def extract_code(response: str | None) -> str | None:
    """The content of the response's last closed fenced code block, or None if there is none.

    Pass the response only (never the prompt, whose starter-code block would otherwise be graded).
    An unclosed final block (a response cut by its token budget) does not count, as in the
    original; an empty block is None.
    """
    if not response or not isinstance(response, str):
        return None
    blocks = _BLOCK.findall(response)
    if not blocks:
        return None
    code = blocks[-1].strip("\n")
    return code if code.strip() else None
