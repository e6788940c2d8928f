"""Citations resolve: every cited entry of ``book/references.bib`` with a DOI or an
arXiv id links to it from the bibliography page.

Reads the built site in ``_build/html`` (``make test`` builds it first), or the
folder named by ``BOOK_SITE_HTML``. An entry is anchored on the page by its key
(``#cite-<key>``, ``bibtex_cite_id`` in ``_config.yml``); its ``doi`` field
renders as a link to https://doi.org/ and its ``eprint`` field as a link to
https://arxiv.org/abs/.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from pybtex.database import parse_file

from tools import sitecheck

ROOT = Path(__file__).resolve().parent.parent
BIB = ROOT / "book" / "references.bib"
ARXIV_ID = re.compile(r"arXiv:\s*(\d{4}\.\d{4,5})", re.I)
CITE_ROLE = re.compile(r"\{(?:cite|footcite)(?::[a-z]+)?\}`([^`]+)`")
ENTRIES = parse_file(str(BIB)).entries


def identifiers(entry) -> dict[str, str]:
    """The entry's links as the bibliography should show them: {url: what}."""
    fields = {k.lower(): str(v) for k, v in entry.fields.items()}
    links = {}
    if "doi" in fields:
        links[f"https://doi.org/{fields['doi']}"] = "doi"
    if "eprint" in fields:
        links[f"https://arxiv.org/abs/{fields['eprint']}"] = "eprint"
    return links


def cited_keys() -> set[str]:
    keys = set()
    for chapter in (ROOT / "book").glob("*.md"):
        for match in CITE_ROLE.finditer(chapter.read_text(encoding="utf-8")):
            keys.update(k.strip() for k in match.group(1).split(","))
    return keys


WITH_IDS = sorted(key for key, entry in ENTRIES.items() if identifiers(entry))


@pytest.fixture(scope="module")
def bibliography() -> str:
    page = sitecheck.site_dir() / "book" / "bibliography.html"
    if not page.is_file():
        pytest.fail(f"no bibliography page {page}: run `make book` (or `make test`) first, "
                    f"or name a build with {sitecheck.SITE_VARIABLE}")
    return page.read_text(encoding="utf-8")


def entry_html(page: str, key: str) -> str | None:
    match = re.search(rf'<div class="citation" id="cite-{re.escape(key.lower())}"[^>]*>(.*?)</div>', page, re.S)
    return match.group(1) if match else None


def test_an_arxiv_id_named_in_an_entry_is_in_its_eprint_field():
    problems = []
    for key, entry in ENTRIES.items():
        text = " ".join(str(v) for k, v in entry.fields.items() if k.lower() != "eprint")
        for arxiv_id in ARXIV_ID.findall(text):
            if str(entry.fields.get("eprint", "")) != arxiv_id:
                problems.append(f"{key} names arXiv:{arxiv_id} but has no eprint = {{{arxiv_id}}}")
    assert not problems, "\n".join(problems)


def test_every_cited_key_is_in_the_bibfile():
    unknown = cited_keys() - set(ENTRIES)
    assert not unknown, f"cited but not in {BIB.name}: {sorted(unknown)}"


@pytest.mark.parametrize("key", WITH_IDS)
def test_cited_entry_links_to_its_doi_or_arxiv_page(bibliography, key):
    if key not in cited_keys():
        # Not cited, so not on the page (the bibliography lists cited entries):
        # its fields must still be well formed for when a chapter cites it.
        for url in identifiers(ENTRIES[key]):
            assert re.fullmatch(r"https://(doi\.org/10\.\d{4,9}/\S+|arxiv\.org/abs/\d{4}\.\d{4,5})", url), url
        return
    body = entry_html(bibliography, key)
    assert body is not None, f"{key} is cited but has no entry #cite-{key} on the bibliography page"
    hrefs = {html.unescape(h) for h in re.findall(r'href="([^"]+)"', body)}
    missing = [f"{what} ({url})" for url, what in identifiers(ENTRIES[key]).items() if url not in hrefs]
    assert not missing, f"{key}: the bibliography does not link its {', '.join(missing)}; it links {sorted(hrefs)}"


def test_the_bibliography_links_out_for_most_entries(bibliography):
    linked = [k for k in WITH_IDS if k in cited_keys()]
    assert len(linked) >= 20, f"only {len(linked)} cited entries have a DOI or arXiv id"
    assert bibliography.count('href="https://arxiv.org/abs/') + bibliography.count('href="https://doi.org/') >= len(
        linked)
