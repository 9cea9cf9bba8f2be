"""The served kinds: the resource table, and each kind's strategy (what create and update prepare, admission, validation, status, deletion)."""
