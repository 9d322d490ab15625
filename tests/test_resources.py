"""Specification of ``wink.resources.registry``: bindings, scopes, dependencies, closing."""

from __future__ import annotations

import gc
import threading
import time
from dataclasses import dataclass

import pytest

from wink.errors import WinkError
from wink.resources import (
    Binding,
    BindingError,
    CircularDependencyError,
    Filesystem,
    InMemoryFilesystem,
    ResourceBuildError,
    ResourceRegistry,
    ResourceResolver,
    ResourceScopeError,
    Scope,
    UnboundResourceError,
)
from wink.runtime import Session


@dataclass
class Closable:
    """A resource that records when it is closed into a shared log."""

    name: str
    log: list[str]
    closed: bool = False

    def close(self) -> None:
        self.closed = True
        self.log.append(self.name)


@dataclass
class Database:
    url: str


@dataclass
class Repository:
    database: Database


@dataclass
class Counter:
    value: int = 0

    def snapshot(self) -> object:
        return self.value

    def restore(self, snapshot: object) -> None:
        assert isinstance(snapshot, int)
        self.value = snapshot


class Alpha:
    pass


class Beta:
    pass


class Gamma:
    pass


def counting_factory(calls: list[int], value: object) -> Binding[object]:
    """A binding of ``object`` that appends to ``calls`` each time it builds."""

    def build(_: ResourceResolver) -> object:
        calls.append(1)
        return value

    return Binding(object, build)


# --- lookup -------------------------------------------------------------------------------


def test_get_returns_the_bound_instance() -> None:
    database = Database("sqlite://")
    registry = ResourceRegistry.of(Binding.instance(Database, database))
    assert registry.get(Database) is database


def test_get_of_unbound_type_names_it_and_lists_bound_types() -> None:
    registry = ResourceRegistry.of(
        Binding.instance(Database, Database("x")), Binding(Alpha, lambda _: Alpha())
    )
    with pytest.raises(UnboundResourceError) as raised:
        registry.get(Beta)
    assert str(raised.value) == "no resource is bound for Beta; bound types: Alpha, Database"
    assert isinstance(raised.value, WinkError)


def test_get_of_unbound_type_in_empty_registry_says_none_are_bound() -> None:
    with pytest.raises(UnboundResourceError) as raised:
        ResourceRegistry.of().get(Beta)
    assert str(raised.value) == "no resource is bound for Beta; bound types: (none)"


def test_get_optional_returns_none_for_unbound_type() -> None:
    assert ResourceRegistry.of().get_optional(Database) is None


def test_get_optional_returns_bound_resource() -> None:
    database = Database("x")
    registry = ResourceRegistry.of(Binding.instance(Database, database))
    assert registry.get_optional(Database) is database


def test_from_mapping_accepts_instances_and_bindings() -> None:
    database = Database("x")
    registry = ResourceRegistry.from_mapping(
        {Database: database, Repository: Binding(Repository, lambda r: Repository(r.get(Database)))}
    )
    assert registry.get(Repository) == Repository(database)
    assert registry.bound_types == (Database, Repository)


def test_from_mapping_refuses_binding_under_another_type() -> None:
    with pytest.raises(BindingError) as raised:
        ResourceRegistry.from_mapping({Alpha: Binding(Beta, lambda _: Beta())})
    assert str(raised.value) == (
        "resources mapping: key Alpha holds a Binding for Beta; key each binding by its own "
        "resource_type"
    )


def test_from_mapping_refuses_a_bare_factory_with_a_hint_to_wrap_it() -> None:
    def make_alpha(resolver: ResourceResolver) -> Alpha:
        return Alpha()

    with pytest.raises(BindingError) as raised:
        ResourceRegistry.from_mapping({Alpha: make_alpha})
    assert str(raised.value) == (
        f"resources mapping: {make_alpha!r} under key Alpha is not an instance of Alpha; "
        "wrap factories in Binding(Type, factory)"
    )


def test_binding_the_same_type_twice_is_refused() -> None:
    with pytest.raises(BindingError) as raised:
        ResourceRegistry.of(Binding(Alpha, lambda _: Alpha()), Binding(Alpha, lambda _: Alpha()))
    assert str(raised.value) == "Alpha is bound twice"


def test_instance_of_wrong_type_is_refused() -> None:
    with pytest.raises(BindingError) as raised:
        Binding.instance(Database, Alpha())
    assert "is not an instance of Database" in str(raised.value)


# --- scopes -------------------------------------------------------------------------------


def test_singleton_is_built_once_and_shared() -> None:
    calls: list[int] = []
    registry = ResourceRegistry.of(counting_factory(calls, Alpha()))
    first, second = registry.get(object), registry.get(object)
    assert first is second
    assert calls == [1]


def test_singleton_is_built_only_when_first_requested() -> None:
    calls: list[int] = []
    registry = ResourceRegistry.of(counting_factory(calls, Alpha()))
    assert calls == []
    registry.get(object)
    assert calls == [1]


def test_prototype_is_built_afresh_on_every_get() -> None:
    registry = ResourceRegistry.of(Binding(Alpha, lambda _: Alpha(), Scope.PROTOTYPE))
    first, second = registry.get(Alpha), registry.get(Alpha)
    assert first is not second


def test_tool_call_resource_is_built_once_per_call() -> None:
    registry = ResourceRegistry.of(Binding(Alpha, lambda _: Alpha(), Scope.TOOL_CALL))
    with registry.tool_call_scope() as first_call:
        in_first = first_call.get(Alpha)
        assert first_call.get(Alpha) is in_first
    with registry.tool_call_scope() as second_call:
        assert second_call.get(Alpha) is not in_first


def test_tool_call_resource_is_closed_when_its_call_ends() -> None:
    log: list[str] = []
    registry = ResourceRegistry.of(
        Binding(Closable, lambda _: Closable("call", log), Scope.TOOL_CALL)
    )
    with registry.tool_call_scope() as call:
        resource = call.get(Closable)
        assert log == []
    assert resource.closed
    assert log == ["call"]


def test_tool_call_resource_outside_a_call_is_refused() -> None:
    registry = ResourceRegistry.of(Binding(Alpha, lambda _: Alpha(), Scope.TOOL_CALL))
    with pytest.raises(ResourceScopeError) as raised:
        registry.get(Alpha)
    assert str(raised.value) == (
        "Alpha is TOOL_CALL-scoped and was requested outside a tool call (Alpha); "
        "resolve it inside registry.tool_call_scope(), and not from a singleton"
    )


def test_singleton_depending_on_tool_call_resource_is_refused_even_inside_a_call() -> None:
    registry = ResourceRegistry.of(
        Binding(Alpha, lambda _: Alpha(), Scope.TOOL_CALL),
        Binding(Beta, lambda r: (r.get(Alpha), Beta())[1]),
    )
    with registry.tool_call_scope() as call, pytest.raises(ResourceScopeError) as raised:
        call.get(Beta)
    assert "(Beta -> Alpha)" in str(raised.value)


def test_tool_call_scope_that_ended_refuses_get() -> None:
    registry = ResourceRegistry.of(Binding(Alpha, lambda _: Alpha(), Scope.TOOL_CALL))
    with registry.tool_call_scope() as call:
        pass
    with pytest.raises(ResourceScopeError) as raised:
        call.get(Alpha)
    assert str(raised.value) == "Alpha requested from a tool-call scope that ended"


def test_tool_call_scope_shares_the_registry_singletons() -> None:
    registry = ResourceRegistry.of(Binding(Alpha, lambda _: Alpha()))
    with registry.tool_call_scope() as call:
        assert call.get(Alpha) is registry.get(Alpha)


def test_singleton_construction_from_many_threads_builds_once() -> None:
    calls: list[int] = []
    barrier = threading.Barrier(8)

    def slow(_: ResourceResolver) -> Alpha:
        calls.append(1)
        time.sleep(0.05)  # widen the window in which a racing thread could build too
        return Alpha()

    registry = ResourceRegistry.of(Binding(Alpha, slow))
    results: list[Alpha] = []

    def worker() -> None:
        barrier.wait()
        results.append(registry.get(Alpha))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [1]
    assert len(results) == 8
    assert all(result is results[0] for result in results)


# --- dependencies -------------------------------------------------------------------------


def test_factory_resolves_its_dependencies_through_the_registry() -> None:
    registry = ResourceRegistry.of(
        Binding(Repository, lambda r: Repository(r.get(Database))),
        Binding(Database, lambda _: Database("postgres://")),
    )
    repository = registry.get(Repository)
    assert repository.database is registry.get(Database)
    assert repository.database.url == "postgres://"


def test_tool_call_resource_may_depend_on_tool_call_and_singleton_resources() -> None:
    registry = ResourceRegistry.of(
        Binding(Database, lambda _: Database("x")),
        Binding(Alpha, lambda _: Alpha(), Scope.TOOL_CALL),
        Binding(Beta, lambda r: (r.get(Alpha), r.get(Database), Beta())[2], Scope.TOOL_CALL),
    )
    with registry.tool_call_scope() as call:
        assert isinstance(call.get(Beta), Beta)


def test_dependency_cycle_is_named_in_the_error() -> None:
    registry = ResourceRegistry.of(
        Binding(Alpha, lambda r: (r.get(Beta), Alpha())[1]),
        Binding(Beta, lambda r: (r.get(Gamma), Beta())[1]),
        Binding(Gamma, lambda r: (r.get(Beta), Gamma())[1]),
    )
    with pytest.raises(CircularDependencyError) as raised:
        registry.get(Alpha)
    assert str(raised.value) == "circular dependency between resources: Beta -> Gamma -> Beta"


def test_a_failing_factory_raises_resource_build_error_naming_the_type() -> None:
    registry = ResourceRegistry.of(Binding(Alpha, lambda _: 1 / 0))
    with pytest.raises(ResourceBuildError) as raised:
        registry.get(Alpha)
    assert str(raised.value) == (
        "building resource Alpha failed: the factory raised ZeroDivisionError: division by zero"
    )
    assert isinstance(raised.value.__cause__, ZeroDivisionError)


def test_a_failing_dependency_is_named_not_the_resource_that_needed_it() -> None:
    def broken(resolver: ResourceResolver) -> Beta:
        raise OSError("no network")

    registry = ResourceRegistry.of(
        Binding(Alpha, lambda r: (r.get(Beta), Alpha())[1]), Binding(Beta, broken)
    )
    with pytest.raises(ResourceBuildError) as raised:
        registry.get(Alpha)
    assert str(raised.value) == (
        "building resource Beta failed: the factory raised OSError: no network"
    )


def test_an_unbound_dependency_of_a_factory_stays_an_unbound_resource_error() -> None:
    registry = ResourceRegistry.of(Binding(Alpha, lambda r: (r.get(Beta), Alpha())[1]))
    with pytest.raises(UnboundResourceError):
        registry.get(Alpha)


def test_resource_depending_on_itself_is_a_cycle() -> None:
    registry = ResourceRegistry.of(Binding(Alpha, lambda r: r.get(Alpha)))
    with pytest.raises(CircularDependencyError) as raised:
        registry.get(Alpha)
    assert str(raised.value) == "circular dependency between resources: Alpha -> Alpha"


def test_registry_recovers_after_a_cycle_error() -> None:
    registry = ResourceRegistry.of(
        Binding(Alpha, lambda r: r.get(Alpha)), Binding(Beta, lambda _: Beta())
    )
    with pytest.raises(CircularDependencyError):
        registry.get(Alpha)
    assert isinstance(registry.get(Beta), Beta)


# --- closing ------------------------------------------------------------------------------


def test_exit_closes_built_resources_in_reverse_order_of_construction() -> None:
    log: list[str] = []
    registry = ResourceRegistry.of(
        Binding(Alpha, lambda r: (r.get(Beta), Closable("alpha", log))[1]),
        Binding(Beta, lambda _: Closable("beta", log)),
        Binding(Gamma, lambda _: Closable("gamma", log)),
    )
    with registry:
        registry.get(Alpha)
        registry.get(Gamma)
    assert log == ["gamma", "alpha", "beta"]


def test_exit_does_not_close_resources_never_built() -> None:
    log: list[str] = []
    with ResourceRegistry.of(Binding(Alpha, lambda _: Closable("alpha", log))):
        pass
    assert log == []


def test_binding_close_callable_is_used_instead_of_the_close_method() -> None:
    log: list[str] = []
    registry = ResourceRegistry.of(
        Binding(Closable, lambda _: Closable("own", log), close=lambda c: log.append("binding"))
    )
    with registry:
        registry.get(Closable)
    assert log == ["binding"]


def test_prebuilt_instance_is_never_closed() -> None:
    log: list[str] = []
    resource = Closable("instance", log)
    with ResourceRegistry.of(Binding.instance(Closable, resource)) as registry:
        registry.get(Closable)
    assert log == []


def test_prototypes_built_outside_a_call_are_closed_with_the_registry() -> None:
    log: list[str] = []
    names = iter(["first", "second"])
    registry = ResourceRegistry.of(
        Binding(Closable, lambda _: Closable(next(names), log), Scope.PROTOTYPE)
    )
    with registry:
        registry.get(Closable)
        registry.get(Closable)
    assert log == ["second", "first"]


def test_prototypes_built_inside_a_call_are_closed_when_it_ends() -> None:
    log: list[str] = []
    registry = ResourceRegistry.of(
        Binding(Closable, lambda _: Closable("prototype", log), Scope.PROTOTYPE)
    )
    with registry.tool_call_scope() as call:
        call.get(Closable)
    assert log == ["prototype"]


def test_tool_call_resources_are_closed_in_reverse_order_of_construction() -> None:
    log: list[str] = []
    registry = ResourceRegistry.of(
        Binding(Alpha, lambda r: (r.get(Beta), Closable("alpha", log))[1], Scope.TOOL_CALL),
        Binding(Beta, lambda _: Closable("beta", log), Scope.TOOL_CALL),
    )
    with registry.tool_call_scope() as call:
        call.get(Alpha)
    assert log == ["alpha", "beta"]


def test_a_failing_close_does_not_leave_the_others_open() -> None:
    log: list[str] = []

    def fail(_: object) -> None:
        raise RuntimeError("boom")

    registry = ResourceRegistry.of(
        Binding(Alpha, lambda _: Closable("alpha", log)),
        Binding(Beta, lambda _: Beta(), close=fail),
    )
    registry.get(Alpha)
    registry.get(Beta)
    with pytest.raises(RuntimeError, match="boom"):
        registry.close()
    assert log == ["alpha"]


def test_singleton_is_rebuilt_after_the_registry_was_closed() -> None:
    registry = ResourceRegistry.of(Binding(Alpha, lambda _: Alpha()))
    with registry:
        before = registry.get(Alpha)
    assert registry.get(Alpha) is not before


# --- filesystem and snapshotables ---------------------------------------------------------


def test_filesystem_bound_by_protocol_is_found() -> None:
    filesystem = InMemoryFilesystem()
    registry = ResourceRegistry.of(Binding.instance(Filesystem, filesystem))
    assert registry.filesystem is filesystem


def test_filesystem_instance_bound_by_its_class_is_found() -> None:
    filesystem = InMemoryFilesystem()
    registry = ResourceRegistry.from_mapping({InMemoryFilesystem: filesystem})
    assert registry.filesystem is filesystem


def test_filesystem_bound_lazily_by_its_class_is_built_on_access() -> None:
    registry = ResourceRegistry.of(Binding(InMemoryFilesystem, lambda _: InMemoryFilesystem("/w")))
    filesystem = registry.filesystem
    assert filesystem is registry.get(InMemoryFilesystem)
    assert filesystem is not None
    assert filesystem.mount_point == "/w"


def test_filesystem_is_none_when_none_is_bound() -> None:
    assert ResourceRegistry.of(Binding.instance(Database, Database("x"))).filesystem is None


def test_filesystem_choices_name_the_keys_a_filesystem_request_could_take() -> None:
    assert ResourceRegistry.of(Binding.instance(Database, Database("x"))).filesystem_choices == ()
    lazy = ResourceRegistry.of(
        Binding.instance(Database, Database("x")),
        Binding(InMemoryFilesystem, lambda _: InMemoryFilesystem()),
    )
    assert lazy.filesystem_choices == (InMemoryFilesystem,)


def test_tool_call_filesystem_is_found_through_the_call_scope() -> None:
    registry = ResourceRegistry.of(
        Binding(InMemoryFilesystem, lambda _: InMemoryFilesystem(), Scope.TOOL_CALL)
    )
    with registry.tool_call_scope() as call:
        assert call.filesystem is call.get(InMemoryFilesystem)


def test_snapshotables_lists_only_built_snapshotable_resources() -> None:
    counter = Counter()
    registry = ResourceRegistry.of(
        Binding.instance(Counter, counter),
        Binding(InMemoryFilesystem, lambda _: InMemoryFilesystem()),
        Binding(Alpha, lambda _: Alpha()),
    )
    registry.get(Alpha)
    assert registry.snapshotables() == (counter,)
    filesystem = registry.get(InMemoryFilesystem)
    assert registry.snapshotables() == (counter, filesystem)


def test_call_scope_snapshotables_add_the_call_resources() -> None:
    counter = Counter()
    registry = ResourceRegistry.of(
        Binding.instance(Counter, counter),
        Binding(InMemoryFilesystem, lambda _: InMemoryFilesystem(), Scope.TOOL_CALL),
    )
    with registry.tool_call_scope() as call:
        filesystem = call.get(InMemoryFilesystem)
        assert call.snapshotables() == (counter, filesystem)
    assert registry.snapshotables() == (counter,)


def test_snapshotables_are_not_copied_while_nothing_new_is_built() -> None:
    registry = ResourceRegistry.of(Binding.instance(Counter, Counter()))
    assert registry.snapshotables() is registry.snapshotables()


def test_snapshotables_taken_earlier_do_not_change_when_more_are_built() -> None:
    counter = Counter()
    registry = ResourceRegistry.of(
        Binding.instance(Counter, counter),
        Binding(InMemoryFilesystem, lambda _: InMemoryFilesystem()),
    )
    earlier = registry.snapshotables()
    registry.get(InMemoryFilesystem)
    assert earlier == (counter,)


# --- what a tool call needs ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("scope", "needed"),
    [(Scope.SINGLETON, False), (Scope.TOOL_CALL, True), (Scope.PROTOTYPE, True)],
)
def test_a_call_scope_is_needed_only_for_tool_call_or_prototype_bindings(
    scope: Scope, needed: bool
) -> None:
    registry = ResourceRegistry.of(
        Binding.instance(Counter, Counter()), Binding(Database, lambda _: Database("x"), scope)
    )
    assert registry.needs_call_scope is needed


def test_lazily_built_singletons_are_one_per_session() -> None:
    registry = ResourceRegistry.of(Binding(InMemoryFilesystem, lambda _: InMemoryFilesystem()))
    first, second = Session(), Session()
    mine = registry.for_session(first).get(InMemoryFilesystem)
    assert registry.for_session(first).get(InMemoryFilesystem) is mine
    assert registry.for_session(second).get(InMemoryFilesystem) is not mine
    assert registry.get(InMemoryFilesystem) is not mine  # outside sessions: its own


def test_instances_passed_in_are_shared_by_every_session() -> None:
    counter = Counter()
    registry = ResourceRegistry.of(
        Binding.instance(Counter, counter), Binding(Alpha, lambda _: Alpha())
    )
    assert registry.for_session(Session()).get(Counter) is counter
    assert registry.for_session(Session()).get(Counter) is counter
    assert registry.get(Counter) is counter


def test_a_registry_without_lazy_singletons_is_its_own_session_view() -> None:
    registry = ResourceRegistry.of(Binding.instance(Counter, Counter()))
    assert registry.for_session(Session()) is registry


def test_closing_the_registry_closes_every_sessions_singletons() -> None:
    log: list[str] = []
    registry = ResourceRegistry.of(Binding(Closable, lambda _: Closable("mine", log)))
    session = Session()
    built = registry.for_session(session).get(Closable)
    with registry:
        pass
    assert log == ["mine"]
    assert registry.for_session(session).get(Closable) is not built  # built anew after closing


def test_a_collected_sessions_singletons_are_closed() -> None:
    log: list[str] = []
    registry = ResourceRegistry.of(Binding(Closable, lambda _: Closable("mine", log)))
    session = Session()
    registry.for_session(session).get(Closable)
    del session
    gc.collect()
    assert log == ["mine"]
