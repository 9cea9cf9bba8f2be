"""allocator."""
