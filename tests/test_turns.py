"""Call locks belong to call trees: reentrant across a tree's threads, exclusive between trees."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from wink import HostFilesystem, InMemoryFilesystem
from wink.runtime._turns import CallLock, CallTree, TurnRefused, lock_of

BOUND = 10.0


def test_a_tree_takes_its_own_lock_again_from_another_thread_without_waiting() -> None:
    lock, tree = CallLock("session s"), CallTree()
    tree.acquire(lock)
    worker = threading.Thread(target=tree.acquire, args=(lock,))
    worker.start()
    worker.join(BOUND)
    assert not worker.is_alive()
    assert lock.owner is tree
    assert tree.held == [lock]  # taken once


def test_another_tree_waits_until_the_owner_ends() -> None:
    lock, owner, other = CallLock("session s"), CallTree(), CallTree()
    owner.acquire(lock)
    waiter = threading.Thread(target=other.acquire, args=(lock,))
    waiter.start()
    waiter.join(0.1)
    assert waiter.is_alive()
    owner.release_all()
    waiter.join(BOUND)
    assert not waiter.is_alive()
    assert lock.owner is other
    assert owner.done is True


def test_a_wait_closing_a_cycle_is_refused_naming_both_locks() -> None:
    first, second = CallLock("session one"), CallLock("session two")
    a, b = CallTree(), CallTree()
    a.acquire(first)
    b.acquire(second)
    waiter = threading.Thread(target=a.acquire, args=(second,))  # a waits for b
    waiter.start()
    while not a.waiting:
        threading.Event().wait(0.001)
    with pytest.raises(TurnRefused) as raised:
        b.acquire(first)  # b would wait for a, which waits for b
    assert str(raised.value) == (
        "waiting for session one would deadlock: the call holding it waits, directly or "
        "through other calls, for session two, held by this call"
    )
    b.release_all()
    waiter.join(BOUND)
    assert not waiter.is_alive() and second.owner is a


def test_acquire_all_takes_free_locks_at_once_and_skips_held_ones() -> None:
    locks = [CallLock("a"), CallLock("b")]
    tree = CallTree()
    tree.acquire(locks[1])
    tree.acquire_all(locks)
    assert [lock.owner for lock in locks] == [tree, tree]
    assert tree.held == [locks[1], locks[0]]
    tree.release_all()
    assert [lock.owner for lock in locks] == [None, None]


def test_a_resource_has_one_lock_and_host_filesystems_over_one_directory_share_it(
    tmp_path: Path,
) -> None:
    fs = InMemoryFilesystem()
    assert lock_of(fs) is lock_of(fs)
    assert lock_of(fs) is not lock_of(InMemoryFilesystem())
    assert lock_of(HostFilesystem(tmp_path)) is lock_of(HostFilesystem(tmp_path))
    assert lock_of(fs).label == "resource InMemoryFilesystem"


def test_a_tree_whose_call_ended_takes_no_more_locks() -> None:
    tree = CallTree()
    tree.release_all()
    with pytest.raises(TurnRefused) as raised:
        tree.acquire(CallLock("session s"))
    assert str(raised.value) == (
        "the call this sub-call belongs to has already ended; a handler must wait for the "
        "sub-calls it starts"
    )
    with pytest.raises(TurnRefused):
        tree.acquire_all([CallLock("session t")])


def test_try_acquire_all_takes_none_of_its_locks_when_another_tree_holds_one() -> None:
    free, taken, mine = CallLock("a"), CallLock("b"), CallLock("c")
    tree, other = CallTree(), CallTree()
    other.acquire(taken)
    tree.acquire(mine)
    assert tree.try_acquire_all([free, taken, mine]) is False
    assert [free.owner, taken.owner, mine.owner] == [None, other, tree]
    assert tree.held == [mine]
    other.release_all()
    assert tree.try_acquire_all([free, taken, mine]) is True
    assert tree.held == [mine, free, taken]


def test_try_acquire_all_of_a_tree_whose_call_ended_takes_nothing() -> None:
    lock, tree = CallLock("session s"), CallTree()
    tree.release_all()
    assert tree.try_acquire_all([lock]) is False
    assert lock.owner is None
    assert tree.held == []


def test_a_tree_that_never_waited_lists_no_waits_and_one_that_waited_lists_none_after() -> None:
    lock, owner, other = CallLock("session s"), CallTree(), CallTree()
    assert other.waiting == ()
    owner.acquire(lock)
    waiter = threading.Thread(target=other.acquire, args=(lock,))
    waiter.start()
    while not other.waiting:
        threading.Event().wait(0.001)
    assert other.waiting == [lock]
    owner.release_all()
    waiter.join(BOUND)
    assert not waiter.is_alive()
    assert other.waiting == []
    assert lock.owner is other


def test_when_ended_callbacks_run_once_in_order_after_the_locks_are_released() -> None:
    lock, tree = CallLock("session s"), CallTree()
    tree.acquire(lock)
    seen: list[tuple[str, object]] = []
    tree.when_ended(lambda: seen.append(("first", lock.owner)))
    tree.when_ended(lambda: seen.append(("second", lock.owner)))
    tree.release_all()
    tree.release_all()
    assert seen == [("first", None), ("second", None)]


def test_trees_racing_for_one_lock_from_many_threads_each_hold_it_alone() -> None:
    lock = CallLock("session s")
    threads, rounds = 8, 300
    inside: list[int] = []
    overlaps: list[list[int]] = []
    counter = [0]
    start = threading.Barrier(threads)

    def race(worker: int) -> None:
        start.wait()
        for _ in range(rounds):
            tree = CallTree()
            if not tree.try_acquire_all([lock]):
                tree.acquire_all([lock])  # waits, woken by a release
            inside.append(worker)
            if len(inside) != 1:
                overlaps.append(list(inside))
            value = counter[0]
            if value % 7 == 0:
                time.sleep(0)  # lets another thread run inside, were the lock not held
            counter[0] = value + 1
            inside.remove(worker)
            tree.release_all()

    workers = [threading.Thread(target=race, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(BOUND * 3)
    assert [worker.is_alive() for worker in workers] == [False] * threads
    assert overlaps == []
    assert counter[0] == threads * rounds
    assert lock.owner is None
