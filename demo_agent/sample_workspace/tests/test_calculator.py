from __future__ import annotations

import pytest
from calculator import RunningTotal, add, divide, multiply, subtract


def test_basic_operations() -> None:
    assert add(2, 3) == 5
    assert subtract(2, 3) == -1
    assert multiply(4, 2.5) == 10
    assert divide(10, 4) == 2.5


def test_running_total() -> None:
    total = RunningTotal(10)
    total.apply("+", 5)
    total.apply("/", 3)
    assert total.value == 5
    assert total.history == [10, 15, 5]


def test_divide_by_zero() -> None:
    # TODO: expect a ValueError once divide() checks for zero
    with pytest.raises(ZeroDivisionError):
        divide(1, 0)
