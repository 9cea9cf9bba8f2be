"""The served kinds: the resource table (``kinds.py``), and each kind's strategy (``strategy.py`` and one
module per kind that needs its own rules: what create and update prepare, admission, validation, the status
subresource, deletion)."""
