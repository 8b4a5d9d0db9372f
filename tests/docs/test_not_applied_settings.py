"""What the README and docs/ say Kafka-Lite does not apply is what the code does not apply.

The README's known limits once said there was no log cleaner and that
``delete.retention.ms`` and ``min.compaction.lag.ms`` were not applied, long after both
were. The settings accepted but not acted on are defined in one place, ``kafkalite.metadata``
(``accepted_configs`` and ``group_configs``: the ones not among the applied definitions),
and DescribeConfigs documents each of them as "accepted, not applied here"
(``tests/integration/test_configs.py`` checks that on the wire). Here the pages are held to
the same list: a setting a page names is called not applied (in a list item that says the
settings in it are not acted on, or not applied) exactly when it is one of them.
"""

from __future__ import annotations

import fnmatch
import re

import pytest

from kafkalite.metadata.accepted_configs import ACCEPTED_BROKER_CONFIGS, ACCEPTED_TOPIC_CONFIGS
from kafkalite.metadata.broker_configs import APPLIED_BROKER_CONFIGS
from kafkalite.metadata.config_defs import BROKER_CONFIGS, TOPIC_CONFIGS
from kafkalite.metadata.group_configs import APPLIED_GROUP_CONFIGS, GROUP_CONFIGS
from kafkalite.metadata.topic_configs import APPLIED_TOPIC_CONFIGS
from tests.docs.markdown import PAGES

pytestmark = pytest.mark.unit

NOT_APPLIED = (
    (ACCEPTED_TOPIC_CONFIGS.keys() - APPLIED_TOPIC_CONFIGS.keys())
    | (ACCEPTED_BROKER_CONFIGS.keys() - APPLIED_BROKER_CONFIGS.keys())
    | (GROUP_CONFIGS.keys() - APPLIED_GROUP_CONFIGS.keys())
)
"""Accepted, stored and listed, not acted on: read from the definitions, never written here."""
SETTINGS = TOPIC_CONFIGS.keys() | BROKER_CONFIGS.keys() | GROUP_CONFIGS.keys()
SAYS_NOT_APPLIED = re.compile(r"not act(ed)? on|not applied")
_SPAN = re.compile(r"`([^`\n]+)`")
_ITEM = re.compile(r"^(?:[-*] |\d+\. )", re.MULTILINE)


def list_items(text: str) -> list[str]:
    """The page's paragraphs, a list item each on its own (with its continuation lines)."""
    blocks = re.split(r"\n\s*\n", text)
    return [item for block in blocks for item in _ITEM.split(block) if item.strip()]


def settings_named(item: str) -> set[str]:
    """The settings a paragraph names in code spans (``flush.ms``, ``flush.ms=1000``), a
    pattern (``compression.*.level``) standing for every setting it matches."""
    named: set[str] = set()
    for span in _SPAN.findall(item):
        name = span.split("=", 1)[0]
        named |= set(fnmatch.filter(SETTINGS, name)) if "*" in name else {name} & SETTINGS
    return named


def claims() -> list[tuple[str, str, bool]]:
    """``(page, setting, called not applied)`` for every setting every page names."""
    found = []
    for page in PAGES:
        for item in list_items(page.read_text()):
            says = bool(SAYS_NOT_APPLIED.search(item))
            found += [(page.name, name, says) for name in sorted(settings_named(item))]
    return found


def test_the_definitions_say_not_applied_of_exactly_the_accepted_settings() -> None:
    """What DescribeConfigs returns as each setting's documentation."""
    defs = {**TOPIC_CONFIGS, **BROKER_CONFIGS, **GROUP_CONFIGS}
    said = {name for name, d in defs.items() if "accepted, not applied here" in d.doc}
    assert said == NOT_APPLIED
    assert {"delete.retention.ms", "min.compaction.lag.ms", "cleanup.policy"} <= (
        APPLIED_TOPIC_CONFIGS.keys() - NOT_APPLIED
    )


def test_the_pages_call_a_setting_not_applied_exactly_when_it_is_not() -> None:
    wrong = [
        f"{page}: {name} is {'called not applied' if says else 'named as applied'}, "
        f"but it is {'not applied' if name in NOT_APPLIED else 'applied'}"
        for page, name, says in claims()
        if says != (name in NOT_APPLIED)
    ]
    assert not wrong, "\n".join(wrong)


def test_the_pages_do_list_settings_that_are_not_applied() -> None:
    """Not vacuous: the known limits and the design page name some, from the list."""
    pages = {page for page, _, says in claims() if says}
    assert {"README.md", "design.md"} <= pages
