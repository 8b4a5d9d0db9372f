"""docs/design.md's table of settings says what the code does: each row's Kafka-Lite and
Kafka defaults are those of its ``ConfigDef``, and every setting whose lab default differs
from Kafka's has a row (students are told where the lab is not Kafka)."""

from __future__ import annotations

import re

import pytest

from kafkalite.metadata.config_def import ConfigDef
from kafkalite.metadata.config_defs import APPLIED_BROKER_CONFIGS, APPLIED_TOPIC_CONFIGS
from tests.docs.markdown import ROOT

pytestmark = pytest.mark.unit

DEFS: dict[str, ConfigDef] = {**APPLIED_BROKER_CONFIGS, **APPLIED_TOPIC_CONFIGS}
_UNITS_MS = {"ms": 1, "s": 1000, "min": 60_000}
_UNITS_BYTES = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def _rows() -> list[tuple[list[str], str, str]]:
    """``(names, Kafka-Lite's value, Kafka's value)`` of each row of the settings table."""
    text = (ROOT / "docs" / "design.md").read_text()
    section = text.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`"):
            rows.append((re.findall(r"`([\w.]+)`", cells[0]), cells[1], cells[2]))
    return rows


def _value(name: str, shown: str) -> str:
    """A shown value (``5 s``, ``1 MiB``, ``false``) as the setting's own string."""
    number = re.fullmatch(r"(\d+) (\w+)", shown)
    if not number:
        return shown
    amount, unit = int(number.group(1)), number.group(2)
    if name.endswith(".seconds"):
        assert unit == "s", f"{name} is in seconds: {shown}"
        return str(amount)
    if unit in _UNITS_BYTES:
        return str(amount * _UNITS_BYTES[unit])
    return str(amount * _UNITS_MS[unit])


def test_the_table_has_rows() -> None:
    assert len(_rows()) >= 20


@pytest.mark.parametrize(("names", "ours", "kafkas"), _rows(), ids=str)
def test_each_row_shows_the_defaults_the_code_has(names: list[str], ours: str, kafkas: str) -> None:
    for name in names:
        definition = DEFS[name]
        shown = _value(name, ours)
        assert shown == definition.default, f"{name}: the code says {definition.default}"
        if kafkas != "—":  # a setting of Kafka-Lite's own
            assert _value(name, kafkas) == definition.kafka_default, (
                f"{name}: Kafka's default is {definition.kafka_default}"
            )


def test_every_setting_whose_default_differs_from_kafkas_has_a_row() -> None:
    shown = {name for names, _, _ in _rows() for name in names}
    missing = [
        name
        for name, definition in DEFS.items()
        if definition.default != definition.kafka_default
        and name not in shown
        and definition.broker_synonym not in shown  # shown with its broker-wide default
    ]
    assert not missing, f"not in docs/design.md's settings: {sorted(missing)}"
