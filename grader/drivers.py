"""A driver: grader-written code that runs in the sandbox, beside the student's.

Some questions cannot be asked by calling one student function with data: the function
takes a live consumer, or must be killed in the middle of its loop. A test then defines
a *driver* inside its test function (otter-grader keeps only the test function of a test
cell, so that is where it lives) and hands it to ``student.run`` or
``student.crash_search``. The driver is sent to the sandbox as source text and run there
in a namespace of its own: it sees only its parameters (resolved by name: the student's
definitions, ``lab``, ``bootstrap_servers``, ``workdir``, ``sink``, and the JSON
arguments the test passed) and what it imports itself. A driver that uses a name of the
test's own scope would silently mean something else in the sandbox; that is refused here,
where the lab's author sees it.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable
from typing import Any


class DriverError(Exception):
    """A driver written in a way the sandbox cannot run: a message for the lab's author."""


def source_of(driver: Callable[..., Any]) -> tuple[str, str]:
    """``(name, source)`` of a driver, checked to be self-contained."""
    name = getattr(driver, "__name__", "")
    code = getattr(driver, "__code__", None)
    if code is None or not name.isidentifier() or name == "<lambda>":
        raise DriverError(f"a driver must be a function defined with def, not {driver!r}")
    if name.startswith("test_"):
        raise DriverError(f"driver {name}: a driver's name must not start with test_")
    if code.co_freevars:
        used = ", ".join(code.co_freevars)
        raise DriverError(
            f"driver {name} uses {used} from the test's scope: in the sandbox it would not "
            "exist; pass it as an argument (JSON), or import it inside the driver"
        )
    try:
        source = textwrap.dedent(inspect.getsource(driver))
    except (OSError, TypeError) as exc:
        raise DriverError(f"driver {name}: its source cannot be read ({exc})") from exc
    return name, source
