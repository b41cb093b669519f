"""The examples the engine tests run, imported from ``examples/`` by file."""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).parents[3] / "examples"


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` without putting ``examples/`` on ``sys.path``, once
    per test session: every test file gets the same classes, so that what one pickles
    the others unpickle as their own."""
    module_name = f"langtree_example_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
