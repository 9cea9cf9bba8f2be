"""kube-scheduler's default plugins, one module each: the rule, its score and its messages side by side.

A plugin (:class:`dralloc.scheduler.plugins.base.Plugin`) implements the extension points it needs —
``pre_enqueue``, ``pre_filter`` (with ``add_pod``/``remove_pod``), ``filter``, ``pre_score``, ``score``,
``normalize``, ``reserve``/``unreserve``, ``permit``, ``pre_bind``, ``bind``; :mod:`dralloc.scheduler.profile`
lists them in the default profile's order, which is every extension point's order.
"""
