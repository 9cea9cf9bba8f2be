"""The event-driven replay (``dralloc replay --events``): arrivals and departures over time, the queue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dralloc.cli.main import main
from dralloc.scheduler.plugins.trace_policies.registry import profile
from dralloc.trace import workload
from dralloc.trace.events import replay_events
from dralloc.trace.replay import EventSeries, ReplayResult, prepare

HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
ONE_GPU = "sn,cpu_milli,memory_mib,gpu,model\nn1,16000,65536,1,T4\n"
# a holds the only GPU from 0 to 100; b and c (600 + 400 milli) wait for it; d waits from 30 and is deleted at
# 40 before it ever got the GPU.
QUEUED = HEADER + ("a,1000,1024,1,1000,,LS,Running,0,100,0\n"
                   "b,1000,1024,1,600,,LS,Running,10,,10\n"
                   "c,1000,1024,1,400,,LS,Running,20,,20\n"
                   "d,1000,1024,1,500,,LS,Running,30,40,30\n")
TWO_NODES = "sn,cpu_milli,memory_mib,gpu,model\nn1,16000,65536,2,T4\nn2,64000,262144,4,G2\n"
ALL_LEAVE = HEADER + ("a,1000,1024,1,500,,LS,Running,0,50,0\n"
                      "b,2000,1024,1,1000,T4,LS,Running,5,80,5\n"
                      "c,1000,1024,2,1000,,LS,Running,5,90,5\n"
                      "d,500,512,0,0,,LS,Running,7,60,7\n"
                      "e,1000,1024,1,250,,LS,Running,20,95,20\n"
                      "f,1000,1024,4,1000,,LS,Running,21,99,21\n")


def _files(tmp_path: Path, nodes: str, pods: str) -> tuple[str, str]:
    (tmp_path / "n.csv").write_text(nodes)
    (tmp_path / "p.csv").write_text(pods)
    return str(tmp_path / "n.csv"), str(tmp_path / "p.csv")


def _replay(nodes: str, pods: str, *, policy: str = "default", seed: int = 42, inflate: float = 0,
            memo: bool = True) -> ReplayResult:
    work = workload.from_csv(nodes, pods)
    return replay_events(work, profile(policy, seed=seed, workload=work.typical()), seed=seed, inflate=inflate,
                         memo=memo)


def test_a_departure_lets_the_waiting_pods_in(tmp_path: Path) -> None:
    events = _replay(*_files(tmp_path, ONE_GPU, QUEUED)).events
    assert events is not None
    assert events.times == [0, 10, 20, 30, 40, 100]
    # b, c and d queue behind a; d leaves at 40 unscheduled; a's departure at 100 lets b and c share the GPU
    assert events.waiting == [0, 1, 2, 3, 2, 0]
    assert events.allocated == [100.0] * 6
    assert sorted(events.waits) == [0, 80, 90]
    assert events.never_scheduled == 1
    assert events.mean_wait == pytest.approx(170 / 3)
    assert events.p99_wait == 90


def test_p99_wait_is_the_nearest_rank() -> None:
    assert EventSeries(waits=list(range(200, 0, -1))).p99_wait == 198  # rank ceil(0.99 × 200) = 198
    assert EventSeries(waits=list(range(1, 101))).p99_wait == 99
    assert EventSeries().p99_wait == 0 and EventSeries().mean_wait == 0


def test_a_pod_that_never_leaves_keeps_its_share(tmp_path: Path) -> None:
    pods = HEADER + "a,1000,1024,1,1000,,LS,Running,0,,0\nb,1000,1024,1,1000,,LS,Running,10,,10\n"
    events = _replay(*_files(tmp_path, ONE_GPU, pods)).events
    assert events is not None
    assert events.waiting == [0, 1] and events.waits == [0]
    assert events.never_scheduled == 1  # still waiting when the trace ends


def test_utilisation_returns_to_zero_when_everything_leaves(tmp_path: Path) -> None:
    nodes, pods = _files(tmp_path, TWO_NODES, ALL_LEAVE)
    result = _replay(nodes, pods, policy="fgd")
    events = result.events
    assert events is not None
    assert max(events.allocated) > 50
    assert events.allocated[-1] == 0.0 and events.waiting[-1] == 0
    work = workload.from_csv(nodes, pods)
    empty = prepare(work, profile("fgd", seed=42, workload=work.typical()), seed=42, inflate=0).frag.total
    assert events.fragmentation[-1] == round(empty * 100 / (work.total_gpus * 1000), 4)
    assert max(events.fragmentation) != events.fragmentation[-1]
    assert events.never_scheduled == 0 and len(events.waits) == 6


def test_freed_devices_are_allocated_again(tmp_path: Path) -> None:
    """After everything left, the same pods fit again: the departures released their claims' devices."""
    # f2 takes every GPU of n2 and c2 both of n1: each fits only if every earlier share was released
    again = ALL_LEAVE + ("f2,1000,1024,4,1000,,LS,Running,200,,200\n"
                         "c2,1000,1024,2,1000,,LS,Running,210,,210\n")
    events = _replay(*_files(tmp_path, TWO_NODES, again)).events
    assert events is not None
    assert events.never_scheduled == 0 and events.waiting[-1] == 0
    assert events.allocated[-1] == 100.0


def test_same_seed_same_result_and_memo_changes_nothing(tmp_path: Path) -> None:
    nodes, pods = _files(tmp_path, TWO_NODES, ALL_LEAVE)
    first = _replay(nodes, pods, policy="fgd", seed=3, inflate=3.0)
    second = _replay(nodes, pods, policy="fgd", seed=3, inflate=3.0)
    uncached = _replay(nodes, pods, policy="fgd", seed=3, inflate=3.0, memo=False)
    assert first.events is not None and first.pods > 6  # inflated copies keep their source's times
    strip = {"seconds"}
    as_json = [{k: v for k, v in r.to_json().items() if k not in strip} for r in (first, second, uncached)]
    assert as_json[0] == as_json[1] == as_json[2]


def test_json_contract_and_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes, pods = _files(tmp_path, TWO_NODES, ALL_LEAVE)
    report = tmp_path / "r.html"
    assert main(["replay", "--nodes", nodes, "--pods", pods, "--events", "-o", "json", "--report",
                 str(report)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"kind", "policy", "seed", "totalGpus", "curve", "failedPods", "seconds", "fragmentation"} <= set(doc)
    ev = doc["events"]
    assert set(ev) == {"times", "allocated", "fragmentation", "waiting", "meanWaitSeconds", "p99WaitSeconds",
                       "neverScheduled"}
    assert len(ev["times"]) == len(ev["allocated"]) == len(ev["fragmentation"]) == len(ev["waiting"])
    assert ev["times"] == sorted(ev["times"])
    html = report.read_text()
    assert html.count("<svg") == 5 and "Queue length over time" in html
    # without --events the output is the protocol replay's, with no events key
    assert main(["replay", "--nodes", nodes, "--pods", pods, "-o", "json"]) == 0
    assert "events" not in json.loads(capsys.readouterr().out)


def test_table_prints_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes, pods = _files(tmp_path, ONE_GPU, QUEUED)
    assert main(["replay", "--nodes", nodes, "--pods", pods, "--events", "--inflate", "0"]) == 0
    out = capsys.readouterr().out
    assert "peak waiting 3 pods" in out and "1 never scheduled" in out


def test_events_need_creation_times(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes, pods = _files(tmp_path, ONE_GPU, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,1024,1,500\n")
    assert main(["replay", "--nodes", nodes, "--pods", pods, "--events"]) == 2
    assert "creation_time" in capsys.readouterr().err


def test_waiting_pods_are_retried_in_arrival_order(tmp_path: Path) -> None:
    pods = HEADER + ("a,1000,1024,1,1000,,LS,Running,0,100,0\n"
                     "z,1000,1024,1,1000,,LS,Running,10,,10\n"
                     "b,1000,1024,1,1000,,LS,Running,20,,20\n")
    for seed in (1, 2, 3):
        events = _replay(*_files(tmp_path, ONE_GPU, pods), seed=seed).events
        assert events is not None
        # z waited longest and takes the freed GPU (a wait of 90, not b's 80); b still waits at the end
        assert events.waits == [0, 90] and events.waiting[-1] == 1
