import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "test_assets"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
