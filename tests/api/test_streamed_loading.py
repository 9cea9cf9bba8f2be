"""Loading a big dump: a List's items are decoded one at a time, each item's parsed dicts dropped once its
typed object is made, so a dump's parsed text and its typed objects are never all in memory at once; the
errors, field paths and repeated-key checks stay as they were."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dralloc.api import codec, parsing
from dralloc.errors import DecodeError


def _slice(i: int, devices: int = 16) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"node-{i}-gpus"},
            "spec": {"driver": "gpu.example.com", "nodeName": f"node-{i}",
                     "pool": {"name": f"node-{i}", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{g}",
                                  "attributes": {"model": {"string": "h100"}, "index": {"int": g},
                                                 "uuid": {"string": f"GPU-{i:06}-{g:04}"},
                                                 "driverVersion": {"version": "560.35.3"}},
                                  "capacity": {"memory": {"value": "80Gi"}}} for g in range(devices)]}}


def _dump(tmp_path: Path, items: list[dict[str, Any]], name: str = "dump.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)


def _traced_peak(load: Any) -> tuple[Any, int, int]:
    """What ``load()`` returns, the peak of traced memory while it ran and what stays once it returned."""
    tracemalloc.start()
    try:
        result = load()
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak, kept


def test_a_lists_parsed_items_and_typed_objects_are_never_all_held_at_once(tmp_path: Path) -> None:
    path = _dump(tmp_path, [_slice(i) for i in range(150)])
    text = Path(path).read_text()
    _, tree_peak, tree = _traced_peak(lambda: msgspec.json.decode(text))  # the parsed dicts of the whole dump
    (objects, problems), peak, kept = _traced_peak(lambda: codec.load_checked([path]))
    assert len(objects) == 150 and problems == []
    # Holding every parsed item until the last object is made costs at least both together; streamed, the
    # peak is the text (its items parsed only when taken), the objects and one item's dicts.
    assert peak < 0.6 * (tree + kept), (peak, tree, kept, tree_peak)


def test_streamed_items_decode_exactly_as_the_fast_path_does(tmp_path: Path) -> None:
    path = _dump(tmp_path, [_slice(i, devices=3) for i in range(20)])
    checked, _ = codec.load_checked([path])
    assert [codec.to_dict(o) for o in checked] == [codec.to_dict(o) for o in codec.load(path)]


def test_a_bad_item_still_names_its_document_and_field_and_later_items_are_read(tmp_path: Path) -> None:
    bad = _slice(1, devices=2)
    bad["spec"]["devices"][1]["attributes"]["index"] = {"int": "one"}
    path = _dump(tmp_path, [_slice(0, devices=2), bad, _slice(2, devices=2)])
    checked = list(codec.iter_checked([path]))
    assert [c.error is None for c in checked] == [True, False, True]
    message = str(checked[1].error)
    assert 'ResourceSlice "node-1-gpus"' in message and "spec.devices[1].attributes" in message
    with pytest.raises(DecodeError) as raised:
        codec.load_checked([path])
    assert str(raised.value) == message  # the first bad document, as before


def test_repeated_keys_of_a_streamed_item_are_reported_under_that_item(tmp_path: Path) -> None:
    items = [json.dumps(_slice(i, devices=1)) for i in range(3)]
    items[2] = items[2].replace('"nodeName": "node-2"', '"nodeName": "node-2", "nodeName": "node-9"')
    path = tmp_path / "dups.json"
    path.write_text('{"apiVersion": "v1", "kind": "List", "items": [' + ", ".join(items) + "]}")
    objects, problems = codec.load_checked([str(path)])
    assert [o.spec.node_name for o in objects] == ["node-0", "node-1", "node-9"]
    assert [str(p) for p in problems] == ['ResourceSlice/node-2-gpus: duplicate field "spec.nodeName"']


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(alphabet=st.sampled_from('ab:"\\')),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                         st.text(alphabet=st.sampled_from("ab:"), max_size=3), inner, max_size=3), max_leaves=12)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_json)
def test_colons_counted_piecewise_are_the_colons_of_the_whole_encoding(data: Any) -> None:
    assert parsing._encoded_colons(data) == msgspec.json.encode(data).count(b":")


def test_each_object_is_handed_over_as_it_is_decoded_and_what_it_gives_is_kept(tmp_path: Path) -> None:
    path = _dump(tmp_path, [_slice(i, devices=1) for i in range(4)])
    seen: list[str] = []

    def each(obj: Any) -> str:
        seen.append(obj.metadata.name)
        return f"kept {obj.metadata.name}"

    objects, _ = codec.load_checked([path], each=each)
    assert objects == [f"kept node-{i}-gpus" for i in range(4)] and len(seen) == 4


def test_a_simulated_dumps_slices_share_their_identical_parts(tmp_path: Path) -> None:
    from dralloc.simulator.loading import load_checked_inputs

    objects, _, _ = load_checked_inputs([_dump(tmp_path, [_slice(i, devices=2) for i in range(3)])])
    models = [s.spec.devices[0].attributes["model"] for s in objects]
    assert models[0] is models[1] is models[2]  # one copy for every node's equal attribute
    uuids = [s.spec.devices[0].attributes["uuid"].string for s in objects]
    assert len(set(uuids)) == 3  # what tells them apart stays theirs


def test_a_key_the_list_itself_repeats_is_still_reported(tmp_path: Path) -> None:
    path = tmp_path / "l.json"
    path.write_text('{"apiVersion": "v1", "kind": "List", "kind": "List", "items": ['
                    + json.dumps(_slice(0, devices=1)) + "]}")
    objects, problems = codec.load_checked([str(path)])
    assert len(objects) == 1
    assert [p.message for p in problems] == ['duplicate field "kind"']  # (given to the first item, as before)


def test_an_item_nested_too_deep_is_refused_with_the_documents_place(tmp_path: Path) -> None:
    deep: Any = 1
    for _ in range(parsing.MAX_DEPTH - 4):  # with the List, its items, the item and its spec: 200 levels
        deep = [deep]
    ok = _slice(0, devices=1)
    ok["spec"]["x"] = deep
    too_deep = _slice(1, devices=1)
    too_deep["spec"]["x"] = [deep]
    assert codec.load_checked([_dump(tmp_path, [ok], "ok.json")])[0]  # 200 levels: read (x is unknown)
    with pytest.raises(DecodeError) as raised:
        codec.load_checked([_dump(tmp_path, [ok, too_deep], "deep.json")])
    assert str(raised.value).endswith("deep.json: document 1: exceeded max depth of 200")
