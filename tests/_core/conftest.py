import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import walk_family  # noqa: E402


@pytest.fixture(scope="session")
def walk():
    """The Walk family, compiled (cached in ~/.cache/cypool/test-walk) and registered."""
    module = walk_family.build_walk(walk_family.default_cache())
    walk_family.register(module)
    yield module
    walk_family.unregister()
