"""Make ``livecoding`` (repository root) and ``lc_support`` (this folder) importable however pytest is run."""

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for path in (_HERE.parent.parent, _HERE):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
