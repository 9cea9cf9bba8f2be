"""The generic verbs: get and list, create, update and patch, delete and deletecollection; they dispatch to each kind's strategy."""
