"""A tiny calculator: the four basic operations and a running total."""

from __future__ import annotations


def add(a: float, b: float) -> float:
    """Return a + b."""
    return a + b


def subtract(a: float, b: float) -> float:
    """Return a - b."""
    return a - b


def multiply(a: float, b: float) -> float:
    """Return a * b."""
    return a * b


def divide(a: float, b: float) -> float:
    """Return a / b."""
    # TODO: give a friendlier error than ZeroDivisionError when b is 0
    return a / b


class RunningTotal:
    """Keeps a total that operations are applied to, like a desk calculator."""

    def __init__(self, start: float = 0.0) -> None:
        self.value = start
        self.history: list[float] = [start]

    def apply(self, op: str, operand: float) -> float:
        # TODO: support "**" (power)
        ops = {"+": add, "-": subtract, "*": multiply, "/": divide}
        self.value = ops[op](self.value, operand)
        self.history.append(self.value)
        return self.value
