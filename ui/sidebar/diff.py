"""The list diff behind the sidebar: old rows + new rows → row operations a Qt model can apply.

A reconcile must never reset the sidebar's model (the selection and the scroll position would
be lost), so the model is brought from the list it shows to the mirror's new list through
the operations Qt's model/view understands: removals, moves, insertions and changes. This
module is pure Python (no Qt) so that it can be tested with Hypothesis:
`apply_ops(old, compute_diff(old, new)) == new`. It is planned on the UI thread, a few
thousand rows at a time (`diff_steps`), never on a worker thread.

The plan, in the order the operations are applied:

1. removals of rows whose id is gone, bottom-up, in contiguous ranges;
2. reordering of the kept rows: the rows on a longest increasing subsequence (by their new
   position) stay, every other row moves once, placed just before its successor in the new
   order (walking the new order from the end). Positions are tracked with a Fenwick tree, so
   k moves over n rows cost O((n + k) log n). When more than `max_moves` rows would move
   (a mass reshuffle) one `Reorder` (a Qt layout change, with persistent indexes remapped)
   replaces the moves;
3. insertions of new rows in ascending final position, in contiguous ranges;
4. changes of kept rows whose data differ, by final position, in contiguous ranges.

Every range is cut to at most `chunk` rows so that the model can apply the plan a few
operations at a time between event-loop iterations.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol


class Keyed(Protocol):
    """A row with a stable identity."""

    @property
    def id(self) -> str: ...


DEFAULT_CHUNK = 2000
DEFAULT_MAX_MOVES = 2000
_MASK = 2047  # yield every 2,048 rows


@dataclass(frozen=True, slots=True)
class Remove:
    """Remove rows `[start, start + count)` of the current list."""

    start: int
    count: int


@dataclass(frozen=True, slots=True)
class Move:
    """Move row `source` to before row `dest`, both counted before the move (Qt's rule)."""

    source: int
    dest: int


@dataclass(frozen=True, slots=True)
class Reorder[T]:
    """Replace the list by the same rows in another order (a layout change).

    `position` maps each row id to its new index, for remapping persistent indexes.
    """

    rows: tuple[T, ...]
    position: dict[str, int]


@dataclass(frozen=True, slots=True)
class Insert[T]:
    """Insert `rows` so that the first of them ends up at index `start`."""

    start: int
    rows: tuple[T, ...]


@dataclass(frozen=True, slots=True)
class Change[T]:
    """Replace rows `[start, start + len(rows))` by `rows` (same ids, new data)."""

    start: int
    rows: tuple[T, ...]


type Op[T] = Remove | Move | Reorder[T] | Insert[T] | Change[T]


def compute_diff[R: Keyed](
    old: Sequence[R],
    new: Sequence[R],
    *,
    chunk: int = DEFAULT_CHUNK,
    max_moves: int = DEFAULT_MAX_MOVES,
) -> list[Op[R]]:
    """The operations that turn `old` into `new` (ids are unique within each list)."""
    steps = diff_steps(old, new, chunk=chunk, max_moves=max_moves)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]


def diff_steps[R: Keyed](
    old: Sequence[R],
    new: Sequence[R],
    *,
    chunk: int = DEFAULT_CHUNK,
    max_moves: int = DEFAULT_MAX_MOVES,
) -> Generator[None, None, list[Op[R]]]:
    """`compute_diff` in small steps: a generator that yields every few thousand rows and
    returns the operations, so that the UI thread can plan a long list's diff between
    event-loop iterations without a worker thread (which would fight it for the GIL).
    """
    if chunk < 1:
        raise ValueError("chunk must be positive")
    new = yield from _unique_steps(new)
    if not old:  # the first load: no planning, only insertions (fast first paint)
        return [Insert(i, tuple(new[i : i + chunk])) for i in range(0, len(new), chunk)]
    new_index: dict[str, int] = {}
    for i, row in enumerate(new):
        new_index[row.id] = i
        if not i & _MASK:
            yield
    ops: list[Op[R]] = []

    # 1. Removals, bottom-up so that earlier indexes stay valid.
    removed: list[int] = []
    kept: list[R] = []
    targets: list[int] = []
    old_ids: set[str] = set()
    for i, row in enumerate(old):
        old_ids.add(row.id)
        target = new_index.get(row.id)
        if target is None:
            removed.append(i)
        else:
            kept.append(row)
            targets.append(target)
        if not i & _MASK:
            yield
    for start, count in reversed(list(_ranges(removed))):
        while count > 0:
            take = min(count, chunk)
            ops.append(Remove(start + count - take, take))
            count -= take

    # 2. Reordering of the kept rows.
    stays = yield from _lis_mask(targets)
    movers = len(kept) - sum(stays)
    if movers > max_moves:
        order = yield from _by_target(targets, len(new))
        rows = tuple(kept[p] for p in order)
        yield
        position = {row.id: i for i, row in enumerate(rows)}
        ops.append(Reorder(rows, position))
    elif movers:
        ops.extend((yield from _moves(targets, stays, len(new))))

    # 3. Insertions in ascending final position: the prefix before each is then final.
    fresh: list[int] = []
    for i, row in enumerate(new):
        if row.id not in old_ids:
            fresh.append(i)
        if not i & _MASK:
            yield
    for start, count in _ranges(fresh):
        for offset in range(0, count, chunk):
            end = min(count, offset + chunk)
            ops.append(Insert(start + offset, tuple(new[start + offset : start + end])))

    # 4. Changes, by final position (kept rows compared with their new version).
    changed: list[int] = []
    for p, row in enumerate(kept):
        if row != new[targets[p]]:
            changed.append(targets[p])
        if not p & _MASK:
            yield
    changed.sort()
    for start, count in _ranges(changed):
        for offset in range(0, count, chunk):
            end = min(count, offset + chunk)
            ops.append(Change(start + offset, tuple(new[start + offset : start + end])))
    return ops


def apply_op[R: Keyed](rows: list[R], op: Op[R]) -> None:
    """Apply one operation to a plain list, exactly as the Qt model applies it."""
    match op:
        case Remove(start, count):
            del rows[start : start + count]
        case Move(source, dest):
            row = rows.pop(source)
            rows.insert(dest - 1 if dest > source else dest, row)
        case Reorder(new_rows, _):
            rows[:] = new_rows
        case Insert(start, new_rows):
            rows[start:start] = new_rows
        case Change(start, new_rows):
            rows[start : start + len(new_rows)] = new_rows


def apply_ops[R: Keyed](rows: Sequence[R], ops: Sequence[Op[R]]) -> list[R]:
    """A copy of `rows` with `ops` applied (for tests and for checking a plan)."""
    result = list(rows)
    for op in ops:
        apply_op(result, op)
    return result


def _unique[R: Keyed](rows: Sequence[R]) -> Sequence[R]:
    """`rows` without later duplicates of an id (the mirror never has any; be safe)."""
    seen: set[str] = set()
    if len({row.id for row in rows}) == len(rows):
        return rows
    out: list[R] = []
    for row in rows:
        if row.id not in seen:
            seen.add(row.id)
            out.append(row)
    return out


def _unique_steps[R: Keyed](rows: Sequence[R]) -> Generator[None, None, Sequence[R]]:
    """`_unique(rows)`, yielding every 2,048 rows (hashing a long list's ids is a long step)."""
    seen: set[str] = set()
    add = seen.add
    for i, row in enumerate(rows):
        add(row.id)
        if not i & _MASK:
            yield
    if len(seen) == len(rows):
        return rows
    return _unique(rows)  # a mirror never has duplicates: this path is for safety only


def _ranges(indexes: Sequence[int]) -> Iterator[tuple[int, int]]:
    """Ascending indexes grouped into `(start, count)` runs of consecutive values."""
    start = prev = -2
    for i in indexes:
        if i == prev + 1:
            prev = i
            continue
        if start >= 0:
            yield start, prev - start + 1
        start = prev = i
    if start >= 0:
        yield start, prev - start + 1


def _lis_mask(values: Sequence[int]) -> Generator[None, None, list[bool]]:
    """Which positions form one longest strictly increasing subsequence (O(n log n))."""
    tails: list[int] = []  # smallest tail value of an increasing run of each length
    tail_pos: list[int] = []  # position of that tail
    parent = [-1] * len(values)
    for pos, value in enumerate(values):
        k = bisect_left(tails, value)
        if k == len(tails):
            tails.append(value)
            tail_pos.append(pos)
        else:
            tails[k] = value
            tail_pos[k] = pos
        parent[pos] = tail_pos[k - 1] if k else -1
        if not pos & _MASK:
            yield
    mask = [False] * len(values)
    pos = tail_pos[-1] if tail_pos else -1
    while pos >= 0:
        mask[pos] = True
        pos = parent[pos]
    return mask


def _by_target(targets: Sequence[int], size: int) -> Generator[None, None, list[int]]:
    """Positions sorted by their (distinct, `< size`) target: a bucket pass, O(n)."""
    slots = [-1] * size
    for p, target in enumerate(targets):
        slots[target] = p
        if not p & _MASK:
            yield
    return [p for p in slots if p >= 0]


def _moves(
    targets: Sequence[int], stays: Sequence[bool], size: int
) -> Generator[None, None, list[Move]]:
    """Moves that put the kept rows (now in old order) into their target order.

    Walks the target order from the end; each mover goes just before its successor (its
    "anchor"): a row that stays, a mover already placed, or the end of the list. So the
    movers placed before one row that stays form a chain, and the final order of all rows
    is known in advance: for each staying row (and the end), its chain, then itself. That
    order gives every row a rank; a Fenwick tree over the ranks counts the rows present
    before a rank, which is a row's current position, in O(log n).
    """
    m = len(targets)
    order = yield from _by_target(targets, size)
    end = m  # the anchor "end of list" is slot m
    chains: dict[int, list[int]] = {}  # anchor slot → movers, in placement order
    anchor = end
    for p in reversed(order):
        if stays[p]:
            anchor = p
        else:
            chains.setdefault(anchor, []).append(p)

    slot_rank = [0] * (m + 1)
    final_rank: dict[int, int] = {}
    rank = 0
    for slot in range(m + 1):
        chain = chains.get(slot)
        if chain:
            for p in reversed(chain):
                final_rank[p] = rank
                rank += 1
        slot_rank[slot] = rank
        rank += 1
        if not slot & _MASK:
            yield

    tree = _Fenwick(rank)
    present = [0] * rank
    for slot in range(m):
        present[slot_rank[slot]] = 1
    yield
    tree.build(present)
    yield

    moves: list[Move] = []
    for count, (anchor_slot, chain) in enumerate(chains.items()):
        anchor_rank = slot_rank[anchor_slot]
        for p in chain:
            source_rank = slot_rank[p]
            source = tree.prefix(source_rank)
            dest = tree.prefix(anchor_rank)
            if dest not in (source, source + 1):
                moves.append(Move(source, dest))
            tree.add(source_rank, -1)
            tree.add(final_rank[p], 1)
            anchor_rank = final_rank[p]
        if not count & 63:
            yield
    return moves


class _Fenwick:
    """Counts present ranks: `prefix(i)` is how many of ranks `[0, i)` are present."""

    __slots__ = ("_tree",)

    def __init__(self, size: int) -> None:
        self._tree = [0] * (size + 1)

    def build(self, present: Sequence[int]) -> None:
        """Linear-time construction from 0/1 flags per rank."""
        tree = self._tree
        n = len(tree)
        for i, flag in enumerate(present, 1):
            tree[i] += flag
            parent = i + (i & -i)
            if parent < n:
                tree[parent] += tree[i]

    def add(self, rank: int, delta: int) -> None:
        i = rank + 1
        tree = self._tree
        n = len(tree)
        while i < n:
            tree[i] += delta
            i += i & -i

    def prefix(self, rank: int) -> int:
        i = rank
        total = 0
        tree = self._tree
        while i > 0:
            total += tree[i]
            i -= i & -i
        return total
