"""One package per format; each exposes FORMAT (a registry.FormatSpec or a list of them)."""
