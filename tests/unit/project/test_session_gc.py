"""The unit suite's own process: what its collection made is frozen out of the garbage collector's passes and
the passes are rarer (conftest.pytest_collection_finish; docs/testing.md, Keeping the unit suite fast)."""

import gc


def test_the_collected_session_is_frozen_and_collections_are_rarer() -> None:
    # Thousands of objects (modules, items, libraries) were frozen when the collection finished.
    assert gc.get_freeze_count() > 10_000
    assert gc.get_threshold()[0] >= 10_000
