"""LoCoMo loader on a small fixture with the real schema and its quirks; download helper offline."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import stat
import threading
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

import pytest

from memorykit.evaluation.locomo import (
    LOCOMO_SHA256,
    LocomoIntegrityError,
    download_locomo,
    load_locomo,
    normalize_evidence,
    parse_locomo,
    parse_session_datetime,
)
from memorykit.tokens import Tokenizer

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_mini.json"


@pytest.fixture(scope="module")
def data():
    return load_locomo(FIXTURE, verify=False)


def test_sessions_turns_and_messages(data):
    a, b = data.conversations
    assert (a.id, b.id) == ("conv-a", "conv-b")
    # session_3 has a date but no turns: skipped; session_10 comes after session_2.
    assert [s.number for s in a.sessions] == [1, 2, 10]
    assert [(s.start, s.stop) for s in a.sessions] == [(0, 4), (4, 7), (7, 9)]
    assert [m.id for m in a.messages] == [
        "D1:1", "D1:2", "D1:3", "D1:4", "D2:1", "D2:2", "D2:3", "D10:1", "D10:2"]
    assert [m.role for m in a.messages[:4]] == ["user", "assistant", "user", "assistant"]
    assert a.messages[10 - 10].content == "Caroline: Hey Mel! I moved to Boston in 2022 and love it."
    assert a.messages[2].content == (
        "Caroline: Look at the lake I hiked to yesterday. "
        "[image: a photo of a blue lake surrounded by pine trees]")
    assert a.messages[2].metadata["image"] and a.messages[2].metadata["session"] == 1
    counter = Tokenizer()
    assert all(m.content_tokens == counter.count(m.content) for m in a.messages)
    report = data.report
    assert (report.conversations, report.sessions, report.turns, report.image_turns) == (2, 4, 11, 1)
    assert report.session_dates_without_session == 1


def test_session_dates_become_message_times(data):
    a = data.conversations[0]
    start = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc).timestamp()
    assert [m.created_at for m in a.messages[:4]] == [start, start + 30, start + 60, start + 90]
    assert a.messages[7].created_at == datetime(2023, 7, 20, 20, 56, tzinfo=timezone.utc).timestamp()
    assert all(x.created_at < y.created_at for x, y in zip(a.messages, a.messages[1:]))


@pytest.mark.parametrize("text, expected", [
    ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)),
    ("10:37 am on 27 June, 2023", datetime(2023, 6, 27, 10, 37, tzinfo=timezone.utc)),
    ("12:09 am on 1 Jan, 2024", datetime(2024, 1, 1, 0, 9, tzinfo=timezone.utc)),
    ("8:56 pm on 20 July,2023", datetime(2023, 7, 20, 20, 56, tzinfo=timezone.utc)),
])
def test_parse_session_datetime(text, expected):
    assert parse_session_datetime(text) == expected


def test_bad_date_names_the_value():
    with pytest.raises(ValueError, match="got 'yesterday'"):
        parse_session_datetime("yesterday")


def test_categories_answers_and_adversarial(data):
    a = data.conversations[0]
    by_id = {q.id: q for q in a.questions}
    assert [q.category for q in a.questions] == [
        "single-hop", "multi-hop", "temporal", "open-domain", "adversarial", "single-hop"]
    assert by_id["conv-a:q4"].answer is None
    assert by_id["conv-a:q4"].metadata["adversarial_answer"] == "pine trees"
    assert by_id["conv-a:q6"].answer == "2022"  # an int in the file
    assert data.report.questions_by_category == {
        "single-hop": 3, "multi-hop": 1, "temporal": 1, "open-domain": 1, "adversarial": 1}


def test_malformed_evidence_is_normalized_or_dropped_and_counted(data):
    by_id = {q.id: q for q in data.conversations[0].questions}
    assert by_id["conv-a:q1"].evidence_ids == ("D1:2", "D2:3")  # "D1:2; D2:3"
    assert by_id["conv-a:q2"].evidence_ids == ("D2:1",)  # "D:2:1"
    assert by_id["conv-a:q3"].evidence_ids == ("D10:2",)  # "D10:02" kept, "D9:9" dropped
    assert by_id["conv-a:q6"].evidence_ids == ("D1:1",)  # repeated id kept once
    assert "conv-a:q5" not in by_id and "conv-a:q7" not in by_id  # no evidence left
    r = data.report
    assert (r.evidence_normalized, r.evidence_dropped, r.questions_without_evidence) == (4, 2, 2)
    assert r.dropped_examples == ["D9:9", "nonsense"]
    assert (r.questions, r.evidence_ids) == (7, 8)


def test_normalize_evidence_rules():
    ids = {"D8:6", "D9:17", "D11:26", "D30:5"}
    assert normalize_evidence("D8:6; D9:17", ids) == (["D8:6", "D9:17"], 2, [])
    assert normalize_evidence("D:11:26", ids) == (["D11:26"], 1, [])
    assert normalize_evidence("D30:05", ids) == (["D30:5"], 1, [])
    assert normalize_evidence("D8:6", ids) == (["D8:6"], 0, [])
    assert normalize_evidence("D8:6, D99:1", ids) == (["D8:6"], 1, ["D99:1"])
    assert normalize_evidence(None, ids) == ([], 0, ["None"])


@pytest.mark.parametrize("raw", [
    "D9:1 D4:4 D4:6",  # spaces only, as written in the real file (3 questions were lost to it)
    "D9:1  D4:4\tD4:6",  # runs of white space, a tab
    "D9:1;D4:4,D4:6",  # no space at all after the separators
    "D9:1 ; D4:4 , D4:6",
    "D9:1, D:4:4; D4:06",  # separators and repairs together
])
def test_every_separator_the_schema_uses_splits_evidence(raw):
    ids = {"D9:1", "D4:4", "D4:6"}
    assert normalize_evidence(raw, ids) == (["D9:1", "D4:4", "D4:6"], 3, [])


def test_space_separated_evidence_keeps_its_question():
    raw = json.loads(FIXTURE.read_text())
    raw[0]["qa"][1]["evidence"] = ["D1:2 D2:3"]
    q1 = {q.id: q for q in parse_locomo(raw).conversations[0].questions}["conv-a:q1"]
    assert q1.evidence_ids == ("D1:2", "D2:3")


def test_verify_rejects_a_file_that_is_not_the_published_one():
    with pytest.raises(LocomoIntegrityError, match="not the published locomo10.json"):
        load_locomo(FIXTURE)


def test_missing_file_says_how_to_get_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="download_locomo"):
        load_locomo(tmp_path)


def test_bad_schema_names_the_problem():
    with pytest.raises(TypeError, match="list of samples"):
        parse_locomo({"conversation": {}})
    sample = json.loads(FIXTURE.read_text())[1]
    sample["qa"][0]["category"] = 9
    with pytest.raises(ValueError, match="category 9"):
        parse_locomo([sample])
    sample = json.loads(FIXTURE.read_text())[1]
    sample["conversation"]["session_1"][0]["speaker"] = "Zed"
    with pytest.raises(ValueError, match="speaker 'Zed'"):
        parse_locomo([sample])


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_download_verifies_the_hash_good(tmp_path):
    url = FIXTURE.resolve().as_uri()  # file:// : no network
    dest = tmp_path / "data"
    dest.mkdir()
    path = download_locomo(dest, url=url, expected_sha256=_sha(FIXTURE), timeout=5)
    assert path == dest / "locomo10.json" and path.read_bytes() == FIXTURE.read_bytes()
    assert [p.name for p in dest.iterdir()] == ["locomo10.json"]
    # Already there with the right hash: not fetched again.
    def refuse(*a, **k):
        raise AssertionError("should not download")
    assert download_locomo(dest, url=url, expected_sha256=_sha(FIXTURE), opener=refuse) == path


def test_download_verifies_the_hash_bad(tmp_path):
    url = FIXTURE.resolve().as_uri()
    target = tmp_path / "locomo10.json"
    with pytest.raises(LocomoIntegrityError, match="not the published locomo10.json"):
        download_locomo(target, url=url)  # default: the published hash
    assert list(tmp_path.iterdir()) == []  # nothing written, temp file removed
    assert LOCOMO_SHA256 != _sha(FIXTURE)


def test_download_uses_the_injected_opener_with_a_timeout(tmp_path):
    calls = []

    class Response:
        def __init__(self):
            self.chunks = [b"[]"]

        def read(self, n):
            return self.chunks.pop() if self.chunks else b""

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    def opener(url, timeout):
        calls.append((url, timeout))
        return Response()

    digest = hashlib.sha256(b"[]").hexdigest()
    path = download_locomo(tmp_path / "x.json", url="https://example.invalid/l.json",
                           expected_sha256=digest, timeout=7, opener=opener)
    assert path.read_bytes() == b"[]" and calls == [("https://example.invalid/l.json", 7)]


@pytest.mark.parametrize("kwargs, error, text", [
    ({"expected_sha256": "abc"}, ValueError, "64 lowercase hex"),
    ({"timeout": 0}, ValueError, "timeout must be > 0"),
    ({"max_bytes": 0}, ValueError, "max_bytes must be >= 1"),
    ({"url": ""}, ValueError, "url must be a non-empty"),
])
def test_download_bad_arguments(tmp_path, kwargs, error, text):
    with pytest.raises(error, match=text):
        download_locomo(tmp_path, **kwargs)


class _Server:
    """A loopback HTTP server: ``/fixture`` serves the fixture; ``/junk`` streams zeros with
    no Content-Length until the client hangs up; ``/big`` declares 10**9 bytes."""

    def __enter__(self) -> str:
        body = FIXTURE.read_bytes()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                if self.path == "/fixture":
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                if self.path == "/big":
                    self.send_header("Content-Length", str(10**9))
                self.end_headers()
                try:
                    for _ in range(10_000):  # at most 640 MB: a bug shows as a slow test
                        self.wfile.write(b"\0" * 65536)
                except OSError:
                    pass  # the client refused and hung up, as it should

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


class _CountingOpener:
    """urllib's opener, counting the bytes the helper reads."""

    def __init__(self):
        self.read = 0

    def __call__(self, url, timeout):
        response = urllib.request.urlopen(url, timeout=timeout)
        real_read = response.read

        def read(n=-1):
            chunk = real_read(n)
            self.read += len(chunk)
            return chunk

        response.read = read
        return response


def test_download_over_http_is_synced_renamed_and_world_readable(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    old_umask = os.umask(0o022)
    try:
        with _Server() as base:
            path = download_locomo(tmp_path / "l.json", url=f"{base}/fixture",
                                   expected_sha256=_sha(FIXTURE), timeout=5)
    finally:
        os.umask(old_umask)
    assert path.read_bytes() == FIXTURE.read_bytes()
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # like any new file, not mkstemp's 0o600
    assert events[:2] == ["fsync", "replace"]  # the bytes reach the disk before the rename
    assert [p.name for p in tmp_path.iterdir()] == ["l.json"]


@pytest.mark.parametrize("path, read_at_most", [("/junk", 100_000 + 65_536), ("/big", 0)])
def test_download_refuses_as_soon_as_the_cap_is_passed(tmp_path, path, read_at_most):
    opener = _CountingOpener()
    with _Server() as base:
        with pytest.raises(LocomoIntegrityError, match="max_bytes=100000"):
            download_locomo(tmp_path / "l.json", url=base + path, expected_sha256=None,
                            timeout=5, max_bytes=100_000, opener=opener)
    assert opener.read <= read_at_most  # refused while reading, not after the whole stream
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("timeout", [float("nan"), float("inf"), -1.0, 0, True, "5"])
def test_download_refuses_nonsense_timeouts(tmp_path, timeout):
    with pytest.raises((TypeError, ValueError), match="timeout"):
        download_locomo(tmp_path, timeout=timeout)


def test_load_locomo_reads_the_file_once(tmp_path, monkeypatch):
    copy = tmp_path / "locomo10.json"
    copy.write_bytes(FIXTURE.read_bytes())
    opened = []
    real_open = Path.open
    monkeypatch.setattr(Path, "open", lambda self, *a, **k: (opened.append(self), real_open(self, *a, **k))[1])
    monkeypatch.setattr("builtins.open", lambda *a, **k: pytest.fail(f"open({a[0]}) besides read_bytes"))
    with pytest.raises(LocomoIntegrityError):  # hashed (not the published file) ...
        load_locomo(copy)
    assert load_locomo(copy, verify=False).name == "locomo10"  # ... or parsed, from one read
    assert opened == [copy, copy]  # one read_bytes per call
