"""The README and docs/ show only what exists: every ``kafkalite`` verb and option, every
``make`` target and variable, every ``python -m`` module and every file they name, and
every link (to a file, or to a heading's anchor) resolves.

A page that names a command which was renamed, or links a section that moved, fails here
rather than in front of a student.
"""

from __future__ import annotations

import functools
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.markdown import (
    PAGES,
    ROOT,
    Command,
    anchors,
    arguments,
    commands,
    links,
    program,
    prose,
)

KAFKALITE = Path(sys.executable).with_name("kafkalite")
TOP = "bench|docker|docs|examples|grader|kafkalite|labs|scripts|tests"
REPO_PATH = re.compile(rf"^(?:{TOP})/[\w./-]*$")
PACKAGE_PATH = re.compile(
    r"^(\w+)/[\w/.-]+\.(?:py|js)$"
)  # broker/control_plane/control_loop.py: in kafkalite/
ALL = [c for page in PAGES for c in commands(page)]


def _of(name: str) -> list[Command]:
    """The commands of one program that say what to run (not a bare ``.venv/bin/python``)."""
    return [c for c in ALL if program(c) == name and arguments(c)]


def _id(command: Command) -> str:
    return str(command)


@functools.cache
def _help(*words: str) -> str:
    done = subprocess.run(
        [*words, "--help"], capture_output=True, text=True, timeout=60, cwd=ROOT, check=True
    )
    return done.stdout


def _choices(help_text: str) -> set[str]:
    """The sub-commands an argparse ``--help`` lists as ``{a,b,c}``."""
    found = re.search(r"\{([\w,-]+)\}", help_text)
    assert found, help_text
    return set(found.group(1).split(","))


def test_the_readme_shows_the_commands_a_user_needs() -> None:
    shown = {" ".join(c.words[:2]) for c in ALL if c.page == "README.md"}
    assert {"make up", "make test", "make down"} <= shown
    assert {"kafkalite status", "kafkalite kill"} <= {
        f"kafkalite {arguments(c)[0]}" for c in _of("kafkalite") if c.page == "README.md"
    }


@pytest.mark.parametrize("command", _of("kafkalite"), ids=_id)
def test_kafkalite_verbs_and_options_exist(command: Command) -> None:
    verb, *rest = arguments(command)
    assert verb in _choices(_help(str(KAFKALITE))), f"`kafkalite --help` lists no {verb}"
    verb_help = _help(str(KAFKALITE), verb)
    for option in (w.split("=", 1)[0] for w in rest if w.startswith("--")):
        assert option in verb_help, f"`kafkalite {verb} --help` lists no {option}"


def _makefile() -> str:
    return (ROOT / "Makefile").read_text()


@pytest.mark.parametrize("command", _of("make"), ids=_id)
def test_make_targets_and_variables_exist(command: Command) -> None:
    makefile = _makefile()
    targets = set(re.findall(r"^([A-Za-z][\w-]*):", makefile, re.MULTILINE))
    for word in arguments(command):
        if "=" in word:
            variable = word.split("=", 1)[0]
            assert f"$({variable})" in makefile, f"the Makefile does not use {variable}"
        elif not word.startswith("-"):
            assert word in targets, f"the Makefile has no target {word}"


def _python_run(command: Command) -> tuple[str, ...]:
    """What a ``python`` command runs (``-m module ...`` or ``script ...``), past the
    interpreter's own options (``-X importtime``); empty for ``-c`` code."""
    args = list(arguments(command))
    while args and args[0].startswith("-") and args[0] != "-m":
        option = args.pop(0)
        if option in ("-X", "-W") and args:
            args.pop(0)  # its value
        if option == "-c":
            return ()
    return tuple(args)


@pytest.mark.parametrize("command", [c for c in _of("python") if _python_run(c)], ids=_id)
def test_python_modules_import_and_scripts_exist(command: Command) -> None:
    args = _python_run(command)
    if args[0] == "-m":
        module = args[1]
        importlib.import_module(module)
        if module == "grader" and len(args) > 2 and re.fullmatch(r"[a-z]+", args[2]):
            assert args[2] in _choices(_help(sys.executable, "-m", "grader"))
        if module.startswith("bench."):  # its --help says what it measures, and runs nothing
            assert "usage:" in _help(sys.executable, "-m", module)
    else:
        assert (ROOT / args[0]).is_file(), f"no script {args[0]}"


def _named_paths() -> list[tuple[str, str]]:
    """Every repository path a page names in code: ``kafkalite/spark/session.py``,
    ``docker/jupyterhub/``, ``-f docker/docker-socket.yml``."""
    named = []
    for page in PAGES:
        text = page.read_text()
        words = re.findall(r"`([^`\n]+)`", prose(text))
        words += [w for c in commands(page) for w in c.words]
        for word in words:
            for part in word.split():
                in_package = PACKAGE_PATH.match(part)
                if in_package and (ROOT / "kafkalite" / in_package.group(1)).is_dir():
                    part = f"kafkalite/{part}"  # noqa: PLW2901
                if REPO_PATH.match(part):
                    named.append((page.relative_to(ROOT).as_posix(), part))
    return sorted(set(named))


@pytest.mark.parametrize(("page", "path"), _named_paths())
def test_named_files_exist(page: str, path: str) -> None:
    assert (ROOT / path.rstrip(".")).exists(), f"{page} names {path}, which does not exist"


def _links() -> list[tuple[Path, str]]:
    return [(page, target) for page in PAGES for target in links(page)]


@pytest.mark.parametrize(("page", "target"), _links(), ids=[f"{p.name}->{t}" for p, t in _links()])
def test_links_resolve(page: Path, target: str) -> None:
    if re.match(r"https?://", target):
        return  # the web is not reachable from CI; these are checked by reading
    path, _, anchor = target.partition("#")
    linked = (page.parent / path).resolve() if path else page
    assert linked.exists(), f"{page.name} links {target}: no such file"
    if anchor:
        assert anchor in anchors(linked), f"{page.name} links {target}: no such heading"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    readme = {t.partition("#")[0] for t in links(ROOT / "README.md")}
    for page in PAGES[1:]:
        assert f"docs/{page.name}" in readme, f"the README does not link docs/{page.name}"


def test_the_readme_stays_short() -> None:
    """The README is what a student reads to the end; details belong in docs/."""
    assert len((ROOT / "README.md").read_text().splitlines()) < 250
