"""``python -m kafkalite.broker --id N --data-dir D ...`` runs one broker process."""

import sys

from kafkalite.broker.main import parser, run_broker

sys.exit(run_broker(parser().parse_args()))
