"""Pod subresources that are not a stored object: eviction, log, exec/attach/portforward."""
