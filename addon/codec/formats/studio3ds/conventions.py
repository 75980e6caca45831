"""3D Studio's conventions in the Scene: the one place for its axes and mirroring.

3DS axes are Blender's (Z up, right-handed, counter-clockwise faces), so positions
cross unchanged. A mesh whose 0x4160 matrix mirrors has its local X flipped the way
lib3ds and assimp read it (X_FLIP), and export writes such a node as world @ X_FLIP.
"""
from __future__ import annotations

import numpy as np

BASIS = np.eye(3)            # 3DS axes are Blender's
X_FLIP = np.diag([-1.0, 1.0, 1.0, 1.0])
