"""Use lists: which operations read a value, one entry per operand slot.

A value read by tens of thousands of ops (a constant, a function's memref argument) loses
users one at a time when a rewrite erases them; searching a Python list for each removal
made that quadratic.  `UseList` is a multiset kept as an insertion-ordered dict from user
to the number of its operand slots that read the value, plus the total, so adding and
removing one use are O(1) while the class still reads like the list it replaced:
iteration yields each user as many times as it uses the value (grouped, in first-use
order), `len` counts uses, and `[0]` is the first user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator

if TYPE_CHECKING:
    from egraft.ir.core.operation import Operation


class UseList:
    """The users of one value, each counted once per operand slot reading it."""

    __slots__ = ("_counts", "_total")

    def __init__(self, users: Iterable["Operation"] = ()) -> None:
        self._counts: dict[Operation, int] = {}
        self._total = 0
        self.extend(users)

    def append(self, op: "Operation") -> None:
        """One more use by `op`."""
        counts = self._counts
        counts[op] = counts.get(op, 0) + 1
        self._total += 1

    def extend(self, ops: Iterable["Operation"]) -> None:
        for op in ops:
            self.append(op)

    def remove(self, op: "Operation") -> None:
        """One use by `op` fewer (ValueError if `op` does not use the value)."""
        counts = self._counts
        n = counts.get(op)
        if n is None:
            raise ValueError(f"'{op.name}' is not a user")
        if n == 1:
            del counts[op]
        else:
            counts[op] = n - 1
        self._total -= 1

    def clear(self) -> None:
        self._counts.clear()
        self._total = 0

    def users(self) -> list["Operation"]:
        """Distinct users in first-use order."""
        return list(self._counts)

    def count(self, op: "Operation") -> int:
        """How many operand slots of `op` read the value."""
        return self._counts.get(op, 0)

    def __contains__(self, op: object) -> bool:
        return op in self._counts

    def __len__(self) -> int:
        return self._total

    def __bool__(self) -> bool:
        return self._total > 0

    def __iter__(self) -> Iterator["Operation"]:
        for op, n in list(self._counts.items()):
            for _ in range(n):
                yield op

    def __getitem__(self, index: int) -> "Operation":
        if index == 0 and self._counts:
            return next(iter(self._counts))
        if index == -1 and self._counts:
            return next(reversed(self._counts))
        return list(self)[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, UseList):
            return self._counts == other._counts and list(self._counts) == list(other._counts)
        if isinstance(other, (list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like the list it replaces

    def __repr__(self) -> str:
        return f"UseList({[op.name for op in self]})"
