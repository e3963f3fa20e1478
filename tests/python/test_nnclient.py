"""The Python client against a real nnd: model info, answers equal to nnrun's, uint8 inputs,
batches over max_batch, errors as nnclient.Error with the status name, context-manager close,
and `python3 -m nnclient`."""

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import nnclient
from conftest import NNRUN, model_path


def test_library_is_the_build_tree_one():
    assert os.path.exists(nnclient.library_path())
    assert nnclient.version().count(".") == 2


def test_model_info_is_a_dataclass(daemon):
    with nnclient.Client(daemon.socket) as c:
        ball = c.model_info("ball")
        assert ball.name == "ball"
        assert ball.max_batch == 4
        assert ball.version == 1
        assert ball.engine.startswith("jit")
        assert len(ball.inputs) == 1 and len(ball.outputs) >= 1
        t = ball.inputs[0]
        assert isinstance(t, nnclient.TensorInfo)
        assert t.dtype == "float32"
        assert t.sample_bytes == 4 * int(np.prod(t.shape))
        det = c.model_info("detector")
        assert det.inputs[0].dtype == "uint8"
        assert det.inputs[0].sample_bytes == int(np.prod(det.inputs[0].shape))
        assert [m.name for m in c.models()] == ["ball", "detector"]


def nnrun_outputs(model_file, batch, folder):
    """nnrun's answer on its deterministic pattern (JIT engine, as the daemon serves ball)."""
    out = os.path.join(folder, "nnrun")
    r = subprocess.run([NNRUN, model_file, "--engine", "jit", "--batch", str(batch),
                        "--output-dir", out], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return out


def test_answers_match_nnrun(daemon, tmp_path):
    batch = 3
    with nnclient.Client(daemon.socket) as c:
        ball = c.model_info("ball")
        outs = c.infer(ball, nnclient.deterministic_input(ball, batch))
    folder = nnrun_outputs(model_path("ball_patch.h5"), batch, str(tmp_path))
    for t, got in zip(ball.outputs, outs):
        want = np.load(os.path.join(folder, t.name.replace("/", "_") + ".npy"))
        assert got.dtype == np.float32
        assert got.shape == (batch,) + t.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_batches_larger_than_max_batch_and_input_forms(daemon):
    with nnclient.Client(daemon.socket) as c:
        ball = c.model_info("ball")
        x = nnclient.deterministic_input(ball, 10)[0]  # max_batch is 4: three requests
        (whole, *_) = c.infer("ball", x)
        (by_name, *_) = c.infer(ball, {ball.inputs[0].name: x})
        firsts = [c.infer(ball, [x[i:i + 1]])[0] for i in range(10)]
        np.testing.assert_array_equal(whole, by_name)
        np.testing.assert_array_equal(whole, np.concatenate(firsts))
        # float64 input is refused, and converted when asked: the same numbers, the same answer.
        with pytest.raises(ValueError, match="input 'patch' is float32, got a float64 array.*convert=True"):
            c.infer(ball, x.astype(np.float64))
        np.testing.assert_array_equal(c.infer(ball, x.astype(np.float64), convert=True)[0], whole)


def test_uint8_input(daemon):
    with nnclient.Client(daemon.socket) as c:
        det = c.model_info("detector")
        img = nnclient.deterministic_input(det, 2)[0]
        assert img.dtype == np.uint8
        outs = c.infer(det, img)
        assert all(o.shape[0] == 2 and np.isfinite(o).all() for o in outs)
        with pytest.raises(ValueError, match="input 'input' is uint8, got a float32 array"):
            c.infer(det, img.astype(np.float32))
        # convert=True takes integers 0..255, never floats or values out of range.
        np.testing.assert_array_equal(c.infer(det, img.astype(np.int64), convert=True)[0], outs[0])
        with pytest.raises(ValueError, match="integers 0..255"):
            c.infer(det, img.astype(np.float32), convert=True)
        with pytest.raises(ValueError, match="values 0..256"):
            c.infer(det, img.astype(np.int64) + (img == 255), convert=True)


def test_zero_copy_request(daemon):
    with nnclient.Client(daemon.socket) as c:
        ball = c.model_info("ball")
        x = nnclient.deterministic_input(ball, 3)[0]
        (want, *_) = c.infer(ball, x)
        with c.request(ball, batch=3) as r:
            assert r.inputs[0].shape == x.shape and r.inputs[0].dtype == np.float32
            r.inputs[0][:] = x
            (got, *_) = r.run()
            np.testing.assert_array_equal(got, want)
            assert not got.flags.writeable
            got_copy = got.copy()
        assert r.inputs == [] and r.outputs == []
        np.testing.assert_array_equal(got_copy, want)
        with pytest.raises(nnclient.Error, match="released"):
            r.run()
        # A uint8 model's request gives uint8 arrays.
        det = c.model_info("detector")
        with c.request(det) as r:
            assert r.inputs[0].dtype == np.uint8


def test_version():
    assert nnclient.__version__.count(".") == 2
    assert nnclient.__version__ == nnclient.version()


def test_errors_carry_the_status_name(daemon):
    with nnclient.Client(daemon.socket) as c:
        with pytest.raises(nnclient.Error) as e:
            c.model_info("bal")
        assert e.value.status == nnclient.Status.E_UNKNOWN_MODEL
        assert e.value.name == "NNCLIENT_E_UNKNOWN_MODEL"
        assert "did you mean 'ball'?" in str(e.value)
        assert "served: ball, detector" in e.value.detail
        with pytest.raises(nnclient.Error) as e:
            c.infer("nosuch", np.zeros((1, 1), np.float32))
        assert e.value.name == "NNCLIENT_E_UNKNOWN_MODEL"
        ball = c.model_info("ball")
        with pytest.raises(ValueError, match="does not fit"):
            c.infer(ball, np.zeros((1, 3), np.float32))
    with pytest.raises(nnclient.Error) as e:
        nnclient.Client(os.path.join(os.path.dirname(daemon.socket), "nobody.sock"))
    assert e.value.status == nnclient.Status.E_DAEMON_NOT_RUNNING
    assert e.value.name == "NNCLIENT_E_DAEMON_NOT_RUNNING"


def test_context_manager_closes(daemon):
    with nnclient.Client(daemon.socket) as probe:
        with nnclient.Client(daemon.socket) as c:
            c.model_info("ball")
            assert not c.closed
            open_count = probe.daemon_info()["clients"]
            assert open_count >= 2
        assert c.closed
        c.close()  # idempotent
        with pytest.raises(nnclient.Error) as e:
            c.model_info("ball")
        assert e.value.status == nnclient.Status.E_INVALID_ARGUMENT
        # The daemon sees the hang-up (its control thread handles it asynchronously).
        deadline = time.monotonic() + 10
        while probe.daemon_info()["clients"] >= open_count and time.monotonic() < deadline:
            time.sleep(0.01)
        assert probe.daemon_info()["clients"] < open_count


def test_daemon_info_and_metrics(daemon):
    with nnclient.Client(daemon.socket) as c:
        d = c.daemon_info()
        assert d["version"] == nnclient.version()
        assert d["git_revision"]
        assert d["pid"] == daemon.proc.pid
        assert d["rss_bytes"] > 0
        assert d["models"] == 2
        names = [m["name"] for m in c.metrics()]
        assert names == ["ball", "detector"]


def run_module(daemon, *args):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "nnclient", "--endpoint", daemon.socket, *args],
                          capture_output=True, text=True, timeout=60, env=env)


def test_python_m_nnclient(daemon, tmp_path):
    r = subprocess.run([sys.executable, "-m", "nnclient", "--help"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and "infer" in r.stdout
    r = run_module(daemon)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("nnd " + nnclient.version() + " (git ")
    assert "ball  version 1" in r.stdout and "detector" in r.stdout
    r = run_module(daemon, "infer", "ball", "--batch", "2", "--save", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "batch 2 in" in r.stdout
    r = run_module(daemon, "infer", "bal")
    assert r.returncode == 1
    assert "NNCLIENT_E_UNKNOWN_MODEL" in r.stderr and "did you mean 'ball'?" in r.stderr


def test_open_options_size_the_shared_memory(daemon):
    # A connection that names its model and batch holds slots for exactly that.
    with nnclient.Client(daemon.socket, slots=2, max_batch=4, models=["ball"]) as c:
        info = c.model_info("ball")
        out = c.infer("ball", np.zeros((4, *info.inputs[0].shape), dtype=np.float32))
        assert out[0].shape[0] == 4
        mine = [x for x in json.loads(daemon.nnctl("stats", "--json").stdout)["clients"]
                if x["pid"] == os.getpid() and x["slots"] == 2]
        assert len(mine) == 1, mine
    with pytest.raises(nnclient.Error) as e:
        nnclient.Client(daemon.socket, models=["no_such_model"])
    assert e.value.status == nnclient.Status.E_UNKNOWN_MODEL
