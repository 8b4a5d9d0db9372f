"""The live dashboard of a Kafka-Lite cluster for JupyterLab (``lab.dashboard()``).

``model`` (state from a snapshot plus events), ``strips`` (offset cells), ``feed`` (event
feed) and ``render`` (HTML and text) are pure and unit-tested; the rest is the widget
around them: ``poller`` (background refresh), ``actions`` (fault verbs off the kernel's
thread), ``cards``, ``view`` (anywidget), ``producer_panel``, ``topic_panel``.
"""

from kafkalite.lab.dashboard.dashboard import Dashboard
from kafkalite.lab.dashboard.model import DashboardModel, DashboardState

__all__ = ["Dashboard", "DashboardModel", "DashboardState"]
