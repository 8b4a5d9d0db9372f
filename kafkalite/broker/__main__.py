"""``python -m kafkalite.broker --id N --data-dir D ...`` runs one broker process."""

import sys

# kio registers a hypothesis strategy for each of its protocol types whenever hypothesis
# can be imported (it can in the project's virtual environment: the tests use it). A
# broker has no use for them, and loading them cost 10 MiB and 0.2 s per broker process;
# a None entry makes ``import hypothesis`` fail, which kio takes as "not installed".
sys.modules.setdefault("hypothesis", None)  # type: ignore[arg-type]  # None: not importable

from kafkalite.broker.main import parser, run_broker  # noqa: E402  (after the line above)

sys.exit(run_broker(parser().parse_args()))
