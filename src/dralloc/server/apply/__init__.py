"""Patches and field ownership: JSON merge and JSON patch, strategic merge patch, server-side apply and the
managedFields it keeps."""
