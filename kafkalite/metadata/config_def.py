"""One setting's definition: its type, defaults, and the checks Kafka applies to a value."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum


class ConfigType(Enum):
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class UpdateMode(Enum):
    """Whether Kafka lets a broker setting change while the broker runs (its documentation's
    "Update Mode"): not at all, for one broker at a time, or also as every broker's default."""

    READ_ONLY = "read-only"
    PER_BROKER = "per-broker"
    CLUSTER_WIDE = "cluster-wide"


class InvalidConfigError(ValueError):
    """A value that Kafka would reject (Kafka: INVALID_CONFIG)."""

    def __init__(self, name: str, value: str | None, reason: str) -> None:
        super().__init__(f"Invalid value {value!r} for configuration {name}: {reason}")
        self.name = name
        self.value = value


@dataclass(frozen=True, slots=True)
class ConfigDef:
    name: str
    type: ConfigType
    default: str  # Kafka-Lite's (lab) default
    kafka_default: str
    doc: str
    minimum: int | None = None
    choices: tuple[str, ...] | None = None
    broker_synonym: str | None = None  # for topic configs: the broker-wide default's name
    read_only: bool = False  # Kafka-Lite reads it at start-up only
    update_mode: UpdateMode = UpdateMode.CLUSTER_WIDE  # Kafka's, for broker settings

    def validate(self, value: str | None) -> None:
        if value is None:
            raise InvalidConfigError(self.name, value, "a value is required")
        check = _CHECKS[self.type]
        if not check(value):
            raise InvalidConfigError(self.name, value, _EXPECTED.get(self.type, "invalid value"))
        if self.minimum is not None and int(value) < self.minimum:
            raise InvalidConfigError(self.name, value, f"must be at least {self.minimum}")
        if self.choices is not None:
            for item in value.split(","):
                if item.strip() not in self.choices:
                    raise InvalidConfigError(
                        self.name, value, f"must be one of {', '.join(self.choices)}"
                    )

    def as_int(self, value: str) -> int:
        """A whole-number setting's value; asking a non-number setting is a bug."""
        if self.type not in (ConfigType.INT, ConfigType.SHORT, ConfigType.LONG):
            raise TypeError(f"{self.name} is a {self.type.name.lower()} setting, not a number")
        return int(value)

    def as_bool(self, value: str) -> bool:
        """A true/false setting's value; asking another setting is a bug."""
        if self.type is not ConfigType.BOOLEAN:
            raise TypeError(f"{self.name} is a {self.type.name.lower()} setting, not a boolean")
        return value.lower() == "true"


def _is_int(value: str) -> bool:
    try:
        int(value)
    except ValueError:
        return False
    return True


def _is_double(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


_EXPECTED = {
    ConfigType.BOOLEAN: "expected true or false",
    ConfigType.INT: "expected a whole number",
    ConfigType.SHORT: "expected a whole number",
    ConfigType.LONG: "expected a whole number",
    ConfigType.DOUBLE: "expected a number",
}

_CHECKS: dict[ConfigType, Callable[[str], bool]] = {
    ConfigType.BOOLEAN: lambda v: v.lower() in ("true", "false"),
    ConfigType.STRING: lambda v: True,
    ConfigType.INT: _is_int,
    ConfigType.SHORT: _is_int,
    ConfigType.LONG: _is_int,
    ConfigType.DOUBLE: _is_double,
    ConfigType.LIST: lambda v: True,
    ConfigType.CLASS: lambda v: True,
    ConfigType.PASSWORD: lambda v: True,
}
