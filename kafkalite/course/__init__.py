"""The course's server side: what runs beside JupyterHub, not in a student's lab.

``hub_admin`` is the instructor's command on the hub (``kafkalite-course``). It imports
nothing but the standard library, so the hub image runs it without the Kafka-Lite package.
"""
