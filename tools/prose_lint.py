"""Find numbers typed into prose by hand, code lines wider than the page's column, and a teaching
chapter that does not open with its short answer.

A decimal number (``0.79``), a percentage (``4 %``, ``87%``) or a count typed as
words or tied to a unit (``100-step``, ``four billion``, ``hundreds of epochs``,
``8 or more``) in the prose of a chapter must come from a ``{glue:text}`` role. This module strips what is not
prose (front matter, code cells and fences, directive option lines, display
and inline math, inline code, roles such as ``{cite}`` and ``{glue:text}``,
link targets and HTML comments) and reports what is left.

A line of a visible code cell, or of any other code block on the page, may hold
at most :data:`CODE_LINE_LIMIT` characters, which fit the text column at the
theme's default width (``_static/vitbias.css``). A cell whose input the reader
sees only when they open it (:data:`FOLDED_INPUT` tags, or a place in a folded
solution: between ``{solution-start}`` with ``:class: dropdown`` and
``{solution-end}``, sphinx-exercise's gated solution) sits in a narrower box,
so its lines may hold :data:`FOLDED_LINE_LIMIT`; a cell the page leaves out
(:data:`REMOVED_INPUT` tags) is exempt.

A teaching chapter (:data:`TEACHING_CHAPTERS`) opens, before its first code
cell, with an admonition titled :data:`SHORT_ANSWER`: the interview question,
the answer in a few sentences, one glued number that backs it (a ``{glue:text}``
or ``{glue}`` role) and a ``{ref}`` to where the page shows it
(:func:`short_answer_problems`).

On the built page, a hedge a reader meets in every paragraph stops saying
anything: "the seeds' spread" may be named at most once in the prose of a
section (:func:`repeated_in_sections`); a sentence too close to tell says by
how much instead (``vitbias.book.compared_numbers``).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

# A section number ("section 4.1") names a place in a paper, not a measured value.
TYPED_NUMBER = re.compile(r"(?<![\w.])(?<![Ss]ection )(\d+(?:[.,]\d+)*\.\d+|\d+(?:\.\d+)?\s*(?:%|percent\b))")
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
              "{grid-item}", "{grid-item-card}", "{list-table}", "{table}", "{topic}",
              "{exercise}", "{solution}"}
COMMENT = re.compile(r"<!--.*?-->", re.S)
FENCE = re.compile(r"^(`{3,}|~{3,}|:{3,})\s*(\{[^}]*\}|[\w+-]*)")


def _after_front_matter(lines: list[str]) -> int:
    """The index of the first line after a page's YAML front matter (0 when it has none)."""
    if not lines or lines[0].strip() != "---":
        return 0
    i = 1
    while i < len(lines) and lines[i].strip() != "---":
        i += 1
    return i + 1


def prose_lines(text: str):
    """Yield ``(line_number, prose)`` for the prose lines of a MyST page."""
    text = COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    lines = text.split("\n")
    i = _after_front_matter(lines)
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
        match = FENCE.match(stripped)
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


# Measured at 1280 px in Chromium (12 px monospace, 7.22 px a character): a visible cell's box holds
# 90 characters, the box of a folded cell or solution once opened 87.
CODE_LINE_LIMIT = 88
FOLDED_LINE_LIMIT = 86
# Tags of a code cell whose source the page folds behind a toggle, and of one it leaves out.
FOLDED_INPUT = {"hide-input", "hide-cell"}
REMOVED_INPUT = {"remove-input", "remove_input", "remove-cell", "remove_cell"}
HIDDEN_INPUT = FOLDED_INPUT | REMOVED_INPUT
# Directives whose body is code; any other directive's body is read for the code blocks inside it.
CODE_DIRECTIVES = {"{code-cell}", "{code-block}", "{code}", "{sourcecode}"}
# sphinx-exercise's gated solution: the cells between the two directives are the solution's body,
# folded (behind a toggle) when the start has the class ``dropdown``.
SOLUTION_START, SOLUTION_END = "{solution-start}", "{solution-end}"


def _closes(stripped: str, marker: str) -> bool:
    return stripped.startswith(marker) and stripped.strip(marker[0]) == ""


def _cell_options(lines: list[str], i: int) -> tuple[dict, int]:
    """A code cell's options (``---`` YAML block or ``:key: value`` lines) from line ``i``; and its first code line."""
    if i < len(lines) and lines[i].strip() == "---":
        end = i + 1
        while end < len(lines) and lines[end].strip() != "---":
            end += 1
        return yaml.safe_load("\n".join(lines[i + 1:end])) or {}, end + 1
    options = []
    while i < len(lines) and OPTION.match(lines[i].strip()):
        options.append(lines[i].strip()[1:].replace(":", ": ", 1))
        i += 1
    return yaml.safe_load("\n".join(options)) or {}, i


def code_blocks(text: str):
    """Yield ``(first line number, lines, view)`` for every code cell and code block of a MyST page.

    ``view`` is ``"removed"`` for a code cell tagged with one of :data:`REMOVED_INPUT`,
    ``"folded"`` for one tagged with one of :data:`FOLDED_INPUT` and for any code in a
    folded gated solution (:data:`SOLUTION_START` with ``:class: dropdown``), else ``"shown"``.
    """
    lines = text.split("\n")
    i = _after_front_matter(lines)
    open_directives = []  # the markers of the directives we are inside
    folded = False  # inside a gated solution that the page folds
    while i < len(lines):
        stripped = lines[i].strip()
        i += 1
        match = FENCE.match(stripped)
        if not match:
            continue
        marker, kind = match.groups()
        if not kind and open_directives and open_directives[-1] == marker:
            open_directives.pop()
            continue
        if kind == SOLUTION_START:
            classes = _cell_options(lines, i)[0].get("class") or ""
            folded = "dropdown" in str(classes).split()
        elif kind == SOLUTION_END:
            folded = False
        if kind.startswith("{") and kind not in CODE_DIRECTIVES:
            open_directives.append(marker)
            continue
        if marker.startswith(":"):
            continue
        view = "folded" if folded else "shown"
        if kind == "{code-cell}":
            options, i = _cell_options(lines, i)
            tags = options.get("tags") or []
            tags = set(tags if isinstance(tags, list) else [tags])
            view = "removed" if REMOVED_INPUT & tags else "folded" if FOLDED_INPUT & tags else view
        elif kind in CODE_DIRECTIVES:
            while i < len(lines) and OPTION.match(lines[i].strip()):
                i += 1
        start, body = i + 1, []
        while i < len(lines) and not _closes(lines[i].strip(), marker):
            body.append(lines[i])
            i += 1
        i += 1
        yield start, body, view


def long_code_lines(text: str, limit: int = CODE_LINE_LIMIT, folded_limit: int = FOLDED_LINE_LIMIT):
    """``(line_number, length, line)`` for every line longer than its box holds: ``limit`` in a shown
    code cell or block, ``folded_limit`` in a folded one (the reader opens it); a removed cell is exempt."""
    limits = {"shown": limit, "folded": folded_limit}
    return [(start + k, len(line), line)
            for start, body, view in code_blocks(text) if view in limits
            for k, line in enumerate(body) if len(line) > limits[view]]


TEACHING_CHAPTERS = ("patches", "bias-toy", "symmetry", "crossover-papers", "crossover", "locality",
                     "attention-conv", "priors", "robustness")
SHORT_ANSWER = "The short answer"
GLUE_ROLE = re.compile(r"\{glue(?::\w+)?\}`[^`]+`")
REF_ROLE = re.compile(r"\{ref\}`[^`]+`")


def short_answer_problems(text: str) -> list[str]:
    """What keeps a page from opening with its short answer: an admonition titled :data:`SHORT_ANSWER`
    before the first code cell, holding a glued number and a ``{ref}`` to where the page shows it."""
    lines = text.split("\n")
    i = _after_front_matter(lines)
    while i < len(lines):
        match = FENCE.match(lines[i].strip())
        i += 1
        if not match:
            continue
        marker, kind = match.groups()
        if kind == "{code-cell}":
            break
        if kind == "{admonition}" and lines[i - 1].strip()[len(marker) + len(kind):].strip() == SHORT_ANSWER:
            body = []
            while i < len(lines) and not _closes(lines[i].strip(), marker):
                body.append(lines[i])
                i += 1
            body = "\n".join(body)
            return ([] if GLUE_ROLE.search(body) else ["its short answer glues no number"]) + \
                   ([] if REF_ROLE.search(body) else ["its short answer links ({ref}) to nothing on the page"])
    return [f"no admonition titled {SHORT_ANSWER!r} before the first code cell"]


# A glued verdict is a sentence or a phrase the build chose (glue_verdict, glue_compared, glue_equivalent).
VERDICT_CALL = re.compile(r"\bglue_(?:verdict|compared|equivalent)\(\s*f?[\"']([^\"']+)[\"']")
FIELD = re.compile(r"\{[^{}]*\}")


def verdict_names(text: str) -> re.Pattern | None:
    """A pattern matching the names of the verdicts a page glues (an f-string's fields match any name part)."""
    names = {r"\w+".join(map(re.escape, FIELD.split(name))) for name in VERDICT_CALL.findall(text)}
    return re.compile("|".join(sorted(names))) if names else None


def joined_verdicts(text: str):
    """``(line_number, name)`` for every glued verdict joined to the prose by a colon: after a colon or a
    semicolon (``below it: {verdict}``, ``; {verdict}``), or before a colon (``{verdict}: more``).
    Such fragments read as a generated list; a verdict belongs inside a whole sentence."""
    names = verdict_names(text)
    if names is None:
        return []
    role = r"\{glue(?::text)?\}`(" + names.pattern + r")`"
    found = [(m.start(), m.group(1)) for m in re.finditer(r"[:;]\s*" + role, text)]
    found += [(m.start(), m.group(1)) for m in re.finditer(role + r"\s*:", text)]
    return sorted((text.count("\n", 0, start) + 1, name) for start, name in found)


def lint(path: Path):
    text = path.read_text(encoding="utf-8")
    opening = short_answer_problems(text) if Path(path).stem in TEACHING_CHAPTERS else []
    return ([f"{path}: a teaching chapter opens with its short answer: {problem}" for problem in opening]
            + [f"{path}:{number}: glued verdict {name!r} joined by a colon or semicolon (write a whole "
               f"sentence around it)" for number, name in joined_verdicts(text)]
            + [f"{path}:{number}: typed number {found!r} in prose (glue it): {line}"
             for number, found, line in typed_numbers(text)]
            + [f"{path}:{number}: code line of {length} characters, more than its box holds "
               f"({CODE_LINE_LIMIT} shown, {FOLDED_LINE_LIMIT} folded; wrap it): {line.strip()[:60]}"
               for number, length, line in long_code_lines(text)])


SEEDS_SPREAD = re.compile(r"seeds[’']\s+spread")
NOT_PROSE = ("pre", "script", "style", "code")


def repeated_in_sections(html: str, phrase: re.Pattern = SEEDS_SPREAD, most: int = 1) -> list[tuple[str, int]]:
    """``(section title, count)`` for every section of a built page whose own prose (its
    subsections and code cells with their outputs left out) matches ``phrase`` more than ``most`` times."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup.find_all(NOT_PROSE) + soup.select("div.cell"):
        tag.decompose()
    found = []
    for section in soup.find_all("section"):
        for inner in section.find_all("section"):
            inner.extract()
        heading = section.find(re.compile("^h[1-6]$"))
        title = heading.get_text(" ", strip=True).rstrip("#").strip() if heading else section.get("id", "")
        count = len(phrase.findall(" ".join(section.get_text(" ").split())))
        if count > most:
            found.append((title, count))
    return found
