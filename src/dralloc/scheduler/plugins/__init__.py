"""kube-scheduler's default plugins, one module each: the rule, its score and its messages side by side.

A plugin implements the extension points it needs (``pre_filter``, ``filter``, ``post_filter``,
``pre_score``, ``score``, ``normalize``, ``reserve``); :mod:`dralloc.scheduler.profile` lists them in the
default profile's order, which is also the Filter and Score order.
"""
