"""What the tests of the README and docs/ read from a Markdown page: its code, its commands,
its links and its headings' anchors.

The pages are read as GitHub renders them: a heading's anchor is GitHub's slug (lower
case, punctuation dropped, spaces as hyphens), and a link is ``[text](target)`` or
``![alt](target)``, whose text may run over several lines.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^ *```(\w*)\n(.*?)^ *```", re.DOTALL | re.MULTILINE)
_SPAN = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)
_ASSIGNMENT = re.compile(r'^(\w+)="([^"]*)"$')


@dataclass(frozen=True)
class Command:
    """One command a page shows, its shell variables expanded: ``words`` as the shell
    would split them, without comments."""

    page: str
    words: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.page}: {' '.join(self.words)}"


def code_blocks(text: str) -> list[tuple[str, str]]:
    """``(language, body)`` of every fenced block."""
    return [(m.group(1), m.group(2)) for m in _FENCE.finditer(text)]


def prose(text: str) -> str:
    """The page without its fenced blocks."""
    return _FENCE.sub("", text)


def commands(page: Path) -> list[Command]:
    """Every shell command of the page: each line of its ``sh`` blocks, and each inline code
    span that starts with a command the tests know (``make``, ``kafkalite``, a Python)."""
    text = page.read_text()
    name = page.relative_to(ROOT).as_posix()
    found: list[Command] = []
    for language, body in code_blocks(text):
        if language != "sh":
            continue
        variables: dict[str, str] = {}
        for line in _logical_lines(body):
            words = _split(line, variables)
            if words:
                found.append(Command(name, words))
    for span in _SPAN.findall(prose(text)):
        words = _split(span, {})
        if words and _program(words[0]) in {"make", "kafkalite", "python"}:
            found.append(Command(name, words))
    return found


def _logical_lines(body: str) -> list[str]:
    return body.replace("\\\n", " ").splitlines()


def _split(line: str, variables: dict[str, str]) -> tuple[str, ...]:
    """The words of one line; ``NAME="value"`` assignments (``K=...; D=...``) are kept in
    ``variables`` and ``$NAME`` expanded with them."""
    line = line.split(" #", 1)[0].strip()
    if line.startswith("#"):
        return ()
    rest = []
    for part in line.split(";"):
        assignment = _ASSIGNMENT.match(part.strip())
        if assignment:
            variables[assignment.group(1)] = assignment.group(2)
        else:
            rest.append(part)
    line = ";".join(rest)
    for key, value in variables.items():
        line = line.replace(f"${key}", value)
    try:
        return tuple(shlex.split(line))
    except ValueError:  # an unbalanced quote inside prose: not a command
        return ()


def _program(word: str) -> str:
    name = word.rsplit("/", 1)[-1]
    return "python" if re.fullmatch(r"python3?(\.\d+)?", name) else name


def program(command: Command) -> str:
    """``make``, ``kafkalite``, ``python`` (any path to them), or the first word."""
    return _program(_without_environment(command.words)[0]) if command.words else ""


def _without_environment(words: tuple[str, ...]) -> tuple[str, ...]:
    """The words after any leading ``NAME=value`` settings."""
    i = 0
    while i < len(words) and re.fullmatch(r"[A-Z_]+=.*", words[i]):
        i += 1
    return words[i:]


def arguments(command: Command) -> tuple[str, ...]:
    """The words after the program."""
    return _without_environment(command.words)[1:]


def links(page: Path) -> list[str]:
    """Every link target of the page (images included), outside code."""
    return _LINK.findall(prose(page.read_text()))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(h) for h in _HEADING.findall(prose(page.read_text()))}
