"""HTTP: routing a URL to a resource and verb, content negotiation, request bodies and options, responses
(objects, tables, metadata-only), errors as Status, discovery and OpenAPI, health checks, and serving over
TLS."""
