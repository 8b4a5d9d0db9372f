"""A failed case's feedback speaks the student's terms: their cell and line, kafka-python's
internal messages translated, a time-out said with where the code was waiting, a missing
name said with why the grader left it out."""

from __future__ import annotations

import pytest

from grader import feedback
from grader.extract import from_cells

pytestmark = [pytest.mark.grader, pytest.mark.unit]

CELLS = [
    ("cell 3", "from kafka import TopicPartition\nORDERS = TopicPartition('orders', 0)"),
    ("cell 5", "payments = lab.new_history()\nPAYMENTS = write_payments('p', 30, payments)"),
    ("cell 7", "def bill(producer):\n    producer.begin_transaction()\n    producer.commit()"),
]


def test_an_exception_names_the_cell_and_line_and_translates_kafka_python() -> None:
    extracted = from_cells(CELLS)
    line = extracted.source.splitlines().index("    producer.commit()") + 1
    error = {
        "type": "KafkaError",
        "message": "TransactionalId bank: Invalid transition attempted from state READY to "
        "state COMMITTING_TRANSACTION",
        "frames": [["/x/submission.py", line, "bill", "producer.commit()"]],
    }
    text = feedback.raised("bill(...)", error, extracted)
    first, *rest = text.splitlines()
    assert first.startswith("bill(...) raised KafkaError: TransactionalId bank: Invalid")
    assert "at cell 7, line 3 (`producer.commit()`)" in rest
    assert "call producer.begin_transaction() first" in text


def test_a_name_the_grader_left_out_is_named_with_the_reason() -> None:
    extracted = from_cells(CELLS)
    assert "ORDERS" not in extracted.dropped  # a data constructor with literals: kept
    assert "ORDERS = TopicPartition" in extracted.source
    error = {"type": "NameError", "message": "name 'PAYMENTS' is not defined", "frames": []}
    text = feedback.raised("consume(...)", error, extracted)
    assert text.startswith("consume(...) uses `PAYMENTS`, but the grader left `PAYMENTS = ...`")
    assert "it calls `write_payments(...)`" in text


def test_a_time_out_says_where_the_code_was_waiting() -> None:
    extracted = from_cells(CELLS)
    line = extracted.source.splitlines().index("    producer.begin_transaction()") + 1
    stack = (
        "Thread 0x7f (most recent call first):\n"
        '  File "/venv/kafka/producer.py", line 900 in _wait\n'
        f'  File "/tmp/g/submission.py", line {line} in bill\n'
        '  File "<driver>", line 3 in run\n'
    )
    text = feedback.timed_out("bill(...)", 60, stack, extracted, "no transaction coordinator")
    assert text.splitlines()[0] == (
        "bill(...) did not finish within 60 s: when stopped, it was at cell 7, line 2 "
        "(`producer.begin_transaction()`)"
    )
    assert text.splitlines()[1] == "no transaction coordinator"
