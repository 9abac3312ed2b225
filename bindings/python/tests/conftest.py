import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
SHARED = os.path.join(REPO, "tests", "bindings")  # mock provider, MCP server, recorded responses
sys.path.insert(0, SHARED)


@pytest.fixture
def mock():
    from mock_provider import MockProvider
    mp = MockProvider()
    mp.start()
    yield mp
    mp.stop()


@pytest.fixture
def repo():
    return REPO


@pytest.fixture
def shared():
    return SHARED
