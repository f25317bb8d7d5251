import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import walk_family  # noqa: E402


@pytest.fixture(scope="session")
def walk():
    """The Walk family, compiled (cached in ~/.cache/cypool/test-walk) and registered."""
    cache = Path(os.environ.get("CYPOOL_CACHE_DIR", Path.home() / ".cache" / "cypool"))
    module = walk_family.build_walk(cache / "test-walk")
    walk_family.register(module)
    yield module
    walk_family.unregister()
