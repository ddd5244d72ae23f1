"""Where each row of the transcript lies: its height and the running sum above it.

A `QListView` with rows of different heights places every row again whenever one row's
height changes, asking each for its size: a long conversation of code and tables paid that
on nearly every step of a scroll, as rows laid out for the first time turned out taller or
shorter than their estimate. These offsets change row by row instead: a new height marks
the sums below it stale, and they are summed again (in C, by `itertools.accumulate`) only
when a position past that row is asked for.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate


class RowOffsets:
    """Heights of rows `0..n-1` and the top of each (`top(n)` is the total height)."""

    def __init__(self) -> None:
        self._heights: list[int] = []
        self._tops: list[int] = [0]
        self._valid = 1  # self._tops[:self._valid] are right

    def __len__(self) -> int:
        return len(self._heights)

    def reset(self, heights: list[int]) -> None:
        self._heights = heights
        self._valid = 1

    def insert(self, row: int, heights: list[int]) -> None:
        self._heights[row:row] = heights
        self._valid = min(self._valid, row + 1)

    def set(self, row: int, height: int) -> int:
        """Give `row` a new height; how much it grew (negative: shrank)."""
        change = height - self._heights[row]
        if change:
            self._heights[row] = height
            self._valid = min(self._valid, row + 1)
        return change

    def height(self, row: int) -> int:
        return self._heights[row]

    def top(self, row: int) -> int:
        if row >= self._valid:
            self._settle()
        return self._tops[row]

    def total(self) -> int:
        return self.top(len(self._heights))

    def row_at(self, y: int) -> int:
        """The row covering `y` (-1 above the first row or past the last)."""
        if y < 0 or y >= self.total():
            return -1
        return bisect_right(self._tops, y) - 1

    def _settle(self) -> None:
        start = self._valid - 1
        self._tops[start:] = accumulate(self._heights[start:], initial=self._tops[start])
        self._valid = len(self._tops)
