"""Who a request is and what it may do: static tokens and the allow list, service account tokens
(TokenRequest, the issuer's documents), impersonation, the reviews, and the serving certificates."""
