"""Each default filter plugin's rule, with kube-scheduler's texts, on a case that fails without the rule."""

from __future__ import annotations

from sched_builders import by_name, node, pod

PREEMPTION_NOT_HELPFUL = "preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."


def test_a_cordoned_node_takes_only_pods_that_tolerate_unschedulable(simulate) -> None:
    cordoned = node("n1", extra="spec: {unschedulable: true}")
    _, result = simulate(cordoned, pod("p"),
                         pod("tolerant", extra_spec="tolerations: [{key: node.kubernetes.io/unschedulable, "
                                                    "operator: Exists, effect: NoSchedule}]"))
    pods = by_name(result)
    assert pods["p"].message == ("0/1 nodes are available: 1 node(s) were unschedulable. no new claims to "
                                 "deallocate, " + PREEMPTION_NOT_HELPFUL.format(n=1))
    assert pods["tolerant"].node == "n1"


def test_untolerated_noschedule_taints_reject_and_prefernoschedule_only_scores(simulate) -> None:
    tainted = node("tainted", extra="spec: {taints: [{key: gpu, value: 'yes', effect: NoSchedule}]}")
    soft = node("soft", extra="spec: {taints: [{key: spot, effect: PreferNoSchedule}]}")
    plain = node("plain")
    _, result = simulate(tainted, soft, plain, pod("a"), pod("b"),
                         pod("t", extra_spec="tolerations: [{key: gpu, operator: Equal, value: 'yes'}]\n"
                                             "nodeSelector: {kubernetes.io/hostname: tainted}"))
    pods = by_name(result)
    # TaintToleration's score (weight 3) keeps untolerating pods off the PreferNoSchedule node.
    assert pods["a"].node == "plain" and pods["b"].node == "plain"
    assert pods["t"].node is None
    assert pods["t"].message.startswith("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.")


def test_taint_message_names_no_taint(simulate) -> None:
    tainted = node("n1", extra="spec: {taints: [{key: a, value: b, effect: NoExecute}]}")
    _, result = simulate(tainted, pod("p"))
    assert by_name(result)["p"].message.startswith("0/1 nodes are available: 1 node(s) had untolerated taint(s).")


def test_node_selector_and_required_affinity_must_both_match(simulate) -> None:
    docs = [node("a", labels="{zone: x, disk: ssd}"), node("b", labels="{zone: x}"), node("c", labels="{zone: y}")]
    affinity = """\
        nodeSelector: {zone: x}
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms: [{matchExpressions: [{key: disk, operator: In, values: [ssd]}]}]
        """
    _, result = simulate(*docs, pod("p", extra_spec=affinity))
    assert by_name(result)["p"].node == "a"


def test_match_fields_pins_nodes_and_others_are_reported_as_not_satisfying_the_plugin(simulate) -> None:
    pinned = """\
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [b]}]}]
        """
    docs = [node("a"), node("b", pods="0"), node("c")]
    _, result = simulate(*docs, pod("p", extra_spec=pinned))
    assert by_name(result)["p"].message.startswith(
        "0/3 nodes are available: 1 Too many pods, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].")


def test_preferred_affinity_weights_pick_the_node(simulate) -> None:
    preferred = """\
        affinity:
          nodeAffinity:
            preferredDuringSchedulingIgnoredDuringExecution:
            - {weight: 80, preference: {matchExpressions: [{key: tier, operator: In, values: [gold]}]}}
        """
    _, result = simulate(node("a", labels="{tier: silver}"), node("b", labels="{tier: gold}"),
                         node("c", labels="{tier: silver}"), pod("p", extra_spec=preferred))
    assert by_name(result)["p"].node == "b"


def test_a_used_host_port_rejects_the_node_and_a_never_preempting_pod_says_so(simulate) -> None:
    port_spec = "{name: c, ports: [{containerPort: 80, hostPort: 8080}]}"
    first = ("apiVersion: v1\nkind: Pod\nmetadata: {name: first, namespace: default}\n"
             f"spec: {{containers: [{port_spec}]}}\n")
    second = ("apiVersion: v1\nkind: Pod\nmetadata: {name: second, namespace: default}\n"
              f"spec: {{containers: [{port_spec}], preemptionPolicy: Never}}\n")
    _, result = simulate(node("n1"), first, second)
    pods = by_name(result)
    assert pods["first"].node == "n1"
    assert pods["second"].message == (
        "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports. "
        "no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never.")


def test_insufficient_cpu_counts_running_pods_and_sidecars(simulate) -> None:
    sidecar = """\
        initContainers:
        - {name: proxy, restartPolicy: Always, resources: {requests: {cpu: "1"}}}
        - {name: init, resources: {requests: {cpu: "3"}}}
        """
    docs = [node("n1", cpu="4"), pod("running", cpu="1", node_name="n1")]
    # 2 (app) + 1 (sidecar) = 3 running together; the init step needs 3 + 1 = 4: request 4, free 3.
    _, result = simulate(*docs, pod("p", cpu="2", extra_spec=sidecar))
    assert by_name(result)["p"].message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    # Free 3 < 4 but allocatable 4 >= 4: Unschedulable, so preemption is tried (no lower-priority victims).
    assert by_name(result)["p"].message.endswith(
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")


def test_a_request_above_the_whole_node_is_unresolvable(simulate) -> None:
    _, result = simulate(node("n1", cpu="2"), pod("p", cpu="3"))
    assert by_name(result)["p"].message.endswith(PREEMPTION_NOT_HELPFUL.format(n=1))


def test_too_many_pods(simulate) -> None:
    _, result = simulate(node("n1", pods="1"), pod("a"), pod("b"))
    pods = by_name(result)
    assert pods["a"].node == "n1"
    assert pods["b"].message.startswith("0/1 nodes are available: 1 Too many pods.")


def test_extended_resources_from_a_device_plugin_must_fit(simulate) -> None:
    gpu_node = node("n1").replace('pods: "110"', 'pods: "110", example.com/fpga: "1"')
    want = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c, " \
           "resources: {requests: {example.com/fpga: 2}, limits: {example.com/fpga: 2}}}]}\n"
    _, result = simulate(gpu_node, want)
    assert by_name(result)["p"].message.startswith("0/1 nodes are available: 1 Insufficient example.com/fpga.")


def test_histogram_sorts_count_strings_bytewise(simulate) -> None:
    docs = [node(f"small-{i}", cpu="1") for i in range(10)] + [node(f"tainted-{i}", extra=(
        "spec: {taints: [{key: x, effect: NoSchedule}]}")) for i in range(2)]
    _, result = simulate(*docs, pod("p", cpu="2"))
    # "10 Insufficient cpu" sorts before "2 node(s)..." because the sort is on the whole string.
    assert by_name(result)["p"].message.startswith(
        "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) had untolerated taint(s).")


def test_no_nodes_at_all(simulate) -> None:
    _, result = simulate(pod("p"))
    assert by_name(result)["p"].message == "no nodes available to schedule pods"


def test_pods_of_other_schedulers_and_gated_pods_are_not_scheduled(simulate) -> None:
    _, result = simulate(node("n1"), pod("other", extra_spec="schedulerName: my-scheduler"),
                         pod("gated", extra_spec="schedulingGates: [{name: wait}]"))
    pods = by_name(result)
    assert pods["other"].node is None and pods["other"].status == "skipped"
    assert pods["gated"].message == "Scheduling is blocked due to non-empty scheduling gates"
