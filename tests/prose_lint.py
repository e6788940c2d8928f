"""Find numbers typed into prose by hand.

A decimal number (``0.79``), a percentage (``4 %``, ``87%``) or a count typed as
words or tied to a unit (``100-step``, ``four billion``, ``hundreds of epochs``,
``8 or more``) in the prose of a chapter must come from a ``{glue:text}`` role. This module strips what is not
prose (front matter, code cells and fences, directive option lines, display
and inline math, inline code, roles such as ``{cite}`` and ``{glue:text}``,
link targets and HTML comments) and reports what is left.
"""

from __future__ import annotations

import re
from pathlib import Path

TYPED_NUMBER = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*\.\d+|\d+(?:\.\d+)?\s*(?:%|percent\b))")
# Counts typed as words or attached to a unit, which the decimal rule above misses:
# "a 100-step attack", "about four billion images", "hundreds of epochs", "8 or more".
TYPED_COUNT = re.compile(
    r"\b\d+-(?:step|epoch|layer|block|head|shot|fold)s?\b"
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|fifty)\s+(?:hundred|thousand|million|billion)\b"
    r"|\b(?:hundreds|thousands) of (?:epochs|steps)\b"
    r"|\b\d+ or (?:more|fewer)\b", re.I)
ROLE = re.compile(r"\{[\w:.-]+\}`[^`]*`")
INLINE_CODE = re.compile(r"`[^`]*`")
INLINE_MATH = re.compile(r"(?<!\\)\$[^$]+\$")
LINK_TARGET = re.compile(r"\]\([^)]*\)")
LABEL = re.compile(r"^\([\w:.-]+\)=\s*$")
OPTION = re.compile(r"^:[\w-]+:")
# Fences whose body is prose, linted like the rest of the page.
PROSE_DIRECTIVES = {"{note}", "{tip}", "{warning}", "{important}", "{admonition}", "{figure}",
              "{epigraph}", "{sidebar}", "{margin}", "{seealso}", "{caution}", "{hint}",
              "{attention}", "{dropdown}", "{tab-item}", "{tab-set}", "{card}", "{grid}",
              "{grid-item}", "{grid-item-card}", "{list-table}", "{table}", "{topic}"}
COMMENT = re.compile(r"<!--.*?-->", re.S)


def prose_lines(text: str):
    """Yield ``(line_number, prose)`` for the prose lines of a MyST page."""
    text = COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    lines = text.split("\n")
    i = 0
    if lines and lines[0].strip() == "---":  # front matter
        i = 1
        while i < len(lines) and lines[i].strip() != "---":
            i += 1
        i += 1
    fence = None
    open_directives = []  # markers of the prose directives we are inside
    in_math = False
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        number = i + 1
        i += 1
        if fence is not None:  # inside code or math: not prose
            if stripped == fence or (stripped.startswith(fence) and stripped.strip(fence[0]) == ""):
                fence = None
            continue
        match = re.match(r"^(`{3,}|~{3,}|:{3,})\s*(\{[^}]*\}|[\w+-]*)", stripped)
        if match:
            marker, kind = match.groups()
            if not kind and open_directives and open_directives[-1] == marker:
                open_directives.pop()  # the end of a prose directive
            elif kind in PROSE_DIRECTIVES:
                open_directives.append(marker)  # its body is prose, linted below
            else:
                fence = marker  # code, math and the like: skip to the closing fence
            continue
        if stripped.startswith("$$"):
            if not (len(stripped) > 2 and stripped.endswith("$$") and stripped != "$$"):
                in_math = not in_math
            continue
        if in_math or LABEL.match(stripped) or OPTION.match(stripped):
            continue
        prose = ROLE.sub(" ", line)
        prose = INLINE_CODE.sub(" ", prose)
        prose = INLINE_MATH.sub(" ", prose)
        prose = LINK_TARGET.sub("]", prose)
        yield number, prose


def typed_numbers(text: str):
    """``(line_number, number, line)`` for every hand-typed decimal, percentage or count (:data:`TYPED_COUNT`)."""
    return [(number, match.group(0), prose.strip())
            for number, prose in prose_lines(text)
            for pattern in (TYPED_NUMBER, TYPED_COUNT)
            for match in pattern.finditer(prose)]


def lint(path: Path):
    return [f"{path}:{number}: typed number {found!r} in prose (glue it): {line}"
            for number, found, line in typed_numbers(path.read_text(encoding="utf-8"))]
