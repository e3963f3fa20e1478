"""nnctl stats --json and nnctl metrics against a real nnd after a known set of requests: the
JSON parses and has the documented keys and the counts sent; the OpenMetrics text passes a format
check (every family has # TYPE, valid names, histograms cumulative with +Inf, ends in # EOF) and
its counters equal the requests sent. nnctl models shows the daemon's version."""

import json
import re

import numpy as np
import pytest

import nnclient

OK_BALL = 5          # requests to ball answered OK: batches 1, 2, 3, 4, 4 samples
BALL_SAMPLES = 1 + 2 + 3 + 4 + 4
UNKNOWN = 2          # requests naming a model the daemon does not serve (not counted per model)


@pytest.fixture(scope="module")
def loaded(daemon):
    """Sends the known requests once: 5 OK ball requests; 1 OK detector request."""
    with nnclient.Client(daemon.socket) as c:
        ball = c.model_info("ball")
        for n in (1, 2, 3, 4, 4):
            c.infer(ball, nnclient.deterministic_input(ball, n))
        det = c.model_info("detector")
        c.infer(det, nnclient.deterministic_input(det, 1))
        for _ in range(UNKNOWN):
            with pytest.raises(nnclient.Error):
                c.model_info("nosuch")
    return daemon


def test_models_shows_version(loaded):
    r = loaded.nnctl("models")
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert re.match(r"nnd \d+\.\d+\.\d+ \(git [^)]+\), pid \d+, up \d+ s$", first), first
    assert first.startswith("nnd " + nnclient.version())


def test_unknown_model_suggestion(loaded):
    r = loaded.nnctl("infer", "detectr")
    assert r.returncode == 1
    assert "NNCLIENT_E_UNKNOWN_MODEL" in r.stderr
    assert "did you mean 'detector'?" in r.stderr
    assert "served: ball, detector" in r.stderr


def test_stats_json(loaded):
    r = loaded.nnctl("stats", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema"] == 1
    d = doc["daemon"]
    for key in ("version", "git_revision", "pid", "uptime_ns", "rss_bytes", "clients",
                "clients_total", "clients_refused", "reloads", "reloads_failed",
                "requests_in_flight", "shared_memory_bytes", "models"):
        assert key in d, key
    assert d["version"] == nnclient.version()
    assert d["pid"] == loaded.proc.pid
    assert d["rss_bytes"] > 1 << 20
    assert d["models"] == 2
    assert d["reloads"] == 0
    models = {m["name"]: m for m in doc["models"]}
    assert list(models) == ["ball", "detector"]
    ball = models["ball"]
    for key in ("requests", "batches", "samples", "mean_batch", "errors", "deadline_misses",
                "queue_depth", "latency_p50_ns", "latency_p99_ns", "latency_max_ns",
                "latency_sum_ns", "errors_by_status", "latency_buckets_us",
                "batch_size_buckets"):
        assert key in ball, key
    assert ball["requests"] == OK_BALL
    assert ball["samples"] == BALL_SAMPLES
    assert ball["errors"] == 0 and ball["deadline_misses"] == 0 and ball["queue_depth"] == 0
    assert 1 <= ball["batches"] <= OK_BALL
    assert sum(ball["latency_buckets_us"].values()) == OK_BALL
    assert list(ball["latency_buckets_us"])[-1] == "+Inf"
    assert sum(ball["batch_size_buckets"].values()) == ball["batches"]
    assert list(ball["batch_size_buckets"])[:4] == ["1", "2", "4", "8"]
    assert ball["errors_by_status"]["NNCLIENT_E_OVERLOADED"] == 0
    assert 0 < ball["latency_p50_ns"] <= ball["latency_p99_ns"] <= ball["latency_max_ns"]
    assert models["detector"]["requests"] == 1
    # The same figures as the table.
    table = loaded.nnctl("stats").stdout.splitlines()
    row = next(line.split() for line in table if line.startswith("ball "))
    assert int(row[1]) == ball["requests"] and int(row[2]) == ball["batches"]


NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
SUFFIXES = {"counter": ("_total", "_created"), "gauge": ("",), "info": ("_info",),
            "histogram": ("_bucket", "_count", "_sum", "_created")}


def parse_openmetrics(text):
    """A strict-enough OpenMetrics check; returns {family: (type, [(name, labels, value)])}."""
    assert text.endswith("# EOF\n"), "must end with '# EOF'"
    lines = text[:-len("# EOF\n")].splitlines()
    families, current = {}, None
    for line in lines:
        assert line, "no blank lines"
        if line.startswith("#"):
            parts = line.split(" ", 3)
            assert parts[1] in ("TYPE", "HELP", "UNIT"), line
            name = parts[2]
            assert NAME.match(name), line
            if parts[1] == "TYPE":
                assert name not in families, f"family {name} twice"
                assert parts[3] in SUFFIXES, line
                families[name] = (parts[3], [])
                current = name
            else:
                assert name == current, f"{line}: metadata before its # TYPE"
                if parts[1] == "UNIT":
                    assert name.endswith("_" + parts[3]), line
            continue
        m = SAMPLE.match(line)
        assert m, f"bad sample line: {line}"
        name, labels, value = m.group(1), m.group(2) or "", m.group(3)
        assert current is not None, f"{line}: sample before any # TYPE"
        ftype = families[current][0]
        assert any(name == current + s for s in SUFFIXES[ftype]), \
            f"{name} does not belong to {ftype} family {current}"
        lab = dict(LABEL.findall(labels))
        assert labels == "" or labels == "{" + ",".join(f'{k}="{v}"' for k, v in
                                                       LABEL.findall(labels)) + "}", line
        v = float(value)
        if ftype in ("counter", "histogram"):
            assert v >= 0, line
        families[current][1].append((name, lab, v))
    for fam, (ftype, samples) in families.items():
        assert samples or ftype != "info", f"{fam} has no samples"
        if ftype == "histogram":
            series = {}
            for name, lab, v in samples:
                key = tuple(sorted((k, x) for k, x in lab.items() if k != "le"))
                series.setdefault(key, {"buckets": [], "count": None})
                if name.endswith("_bucket"):
                    series[key]["buckets"].append((lab["le"], v))
                elif name.endswith("_count"):
                    series[key]["count"] = v
            for key, s in series.items():
                b = s["buckets"]
                assert b and b[-1][0] == "+Inf", f"{fam}{key}: no +Inf bucket"
                bounds = [float(le) for le, _ in b]
                assert bounds == sorted(bounds), f"{fam}{key}: bounds out of order"
                counts = [v for _, v in b]
                assert counts == sorted(counts), f"{fam}{key}: buckets not cumulative"
                assert s["count"] == counts[-1], f"{fam}{key}: _count != +Inf bucket"
    return families


def value(families, family, sample, **labels):
    for name, lab, v in families[family][1]:
        if name == sample and all(lab.get(k) == x for k, x in labels.items()):
            return v
    raise KeyError(f"{sample}{labels}")


def test_openmetrics(loaded):
    r = loaded.nnctl("metrics")
    assert r.returncode == 0, r.stderr
    fam = parse_openmetrics(r.stdout)
    for f in ("nnd_build", "nnd_resident_memory_bytes", "nnd_clients", "nnd_reloads",
              "nnd_model_requests", "nnd_model_errors", "nnd_model_deadline_misses",
              "nnd_model_queue_depth", "nnd_model_batch_size", "nnd_model_latency_seconds"):
        assert f in fam, f
    assert value(fam, "nnd_build", "nnd_build_info", version=nnclient.version()) == 1
    assert value(fam, "nnd_model_requests", "nnd_model_requests_total", model="ball") == OK_BALL
    assert value(fam, "nnd_model_requests", "nnd_model_requests_total", model="detector") == 1
    assert value(fam, "nnd_model_samples", "nnd_model_samples_total", model="ball") == BALL_SAMPLES
    assert value(fam, "nnd_model_latency_seconds", "nnd_model_latency_seconds_count",
                 model="ball") == OK_BALL
    assert value(fam, "nnd_model_latency_seconds", "nnd_model_latency_seconds_bucket",
                 model="ball", le="+Inf") == OK_BALL
    assert value(fam, "nnd_model_batch_size", "nnd_model_batch_size_sum",
                 model="ball") == BALL_SAMPLES
    assert value(fam, "nnd_model_errors", "nnd_model_errors_total", model="ball",
                 status="NNCLIENT_E_DEADLINE") == 0
    assert value(fam, "nnd_model_deadline_misses", "nnd_model_deadline_misses_total",
                 model="ball") == 0
    assert value(fam, "nnd_reloads", "nnd_reloads_total", result="ok") == 0
    assert value(fam, "nnd_resident_memory_bytes", "nnd_resident_memory_bytes") > 1 << 20
    assert value(fam, "nnd_clients", "nnd_clients") >= 1  # nnctl itself


def test_reload_is_counted(loaded):
    r = loaded.nnctl("reload")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(loaded.nnctl("stats", "--json").stdout)
    assert doc["daemon"]["reloads"] == 1
    fam = parse_openmetrics(loaded.nnctl("metrics").stdout)
    assert value(fam, "nnd_reloads", "nnd_reloads_total", result="ok") == 1
