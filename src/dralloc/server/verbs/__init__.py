"""The generic verbs: get and list, create, update and patch, delete and deletecollection. They dispatch to
each kind's strategy and name no resource."""
