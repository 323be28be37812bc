"""Record store: fingerprints, incremental appends, crash-cut lines, reload."""

from __future__ import annotations

import json

from rllm.eval.store import RecordStore, fingerprint

SETTINGS = {"model": "/m", "budget": {"mode": "e1", "thinking": 1024, "solution": 1024}, "n": 4, "seed": 0}


def record(p, s, **extra):
    return {"prompt_index": p, "sample_index": s, "response": f"r{p}.{s}", "acc": False, **extra}


def test_fingerprint_changes_with_every_setting_and_not_with_key_order():
    base = fingerprint(SETTINGS)
    assert fingerprint(dict(reversed(list(SETTINGS.items())))) == base
    for key, value in [
        ("model", "/other"),
        ("n", 8),
        ("seed", 1),
        ("budget", {"mode": "e1", "thinking": 512, "solution": 1024}),
    ]:
        assert fingerprint({**SETTINGS, key: value}) != base


def test_records_are_flushed_per_append_and_reload(tmp_path):
    store = RecordStore.open(tmp_path, "aime", "1024+1024", SETTINGS)
    store.add(record(0, 1))
    # visible to another reader before close: each append is flushed
    lines = store.path.read_text().splitlines()
    assert [json.loads(line)["sample_index"] for line in lines] == [1]
    store.add(record(0, 0))
    store.close()
    again = RecordStore.open(tmp_path, "aime", "1024+1024", SETTINGS)
    assert again.directory == store.directory
    assert (0, 0) in again and (0, 1) in again and len(again) == 2
    assert [r["sample_index"] for r in again.records()] == [0, 1]  # ordered by prompt, sample
    settings = json.loads((again.directory / "settings.json").read_text())
    assert settings["fingerprint"] == fingerprint(SETTINGS)
    again.close()


def test_a_line_cut_by_a_crash_is_dropped_and_appends_continue(tmp_path):
    store = RecordStore.open(tmp_path, "aime", "1024+1024", SETTINGS)
    store.add(record(0, 0))
    store.close()
    with open(store.path, "a") as handle:
        handle.write('{"prompt_index": 0, "sample_ind')  # killed mid-write
    again = RecordStore.open(tmp_path, "aime", "1024+1024", SETTINGS)
    assert len(again) == 1
    again.add(record(0, 1))
    again.close()
    lines = store.path.read_text().splitlines()
    assert [json.loads(line)["sample_index"] for line in lines] == [0, 1]


def test_different_settings_get_a_different_directory(tmp_path):
    a = RecordStore.open(tmp_path, "aime", "1024+1024", SETTINGS)
    a.add(record(0, 0))
    a.close()
    b = RecordStore.open(tmp_path, "aime", "1024+1024", {**SETTINGS, "temperature": 1.0})
    assert b.directory != a.directory and len(b) == 0
    b.close()
