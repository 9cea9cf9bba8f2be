"""Pod subresources that are not a stored object: binding, eviction, log, exec/attach/portforward."""
