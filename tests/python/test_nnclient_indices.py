"""An output of ArgMax indices (an ONNX classifier that answers its label) arrives as int64
arrays, by infer() and by a zero-copy request, equal to the indices torch computed for the
committed fixture (tests/data/onnx/argmax_classifier.*)."""

import os
import tempfile

import numpy as np
import pytest

import nnclient
from conftest import SOURCE, Daemon

FIXTURE = os.path.join(SOURCE, "tests", "data", "onnx", "argmax_classifier")

CONFIG = """daemon:
  endpoint: pytest
  workers: 1
models:
  - name: cls
    path: {model}
    engine: jit
    max_batch: 2
"""


@pytest.fixture(scope="module")
def classifier():
    with tempfile.TemporaryDirectory(prefix="nnd_pytest_") as folder:
        d = Daemon(folder, CONFIG.format(model=FIXTURE + ".onnx"), models=1)
        try:
            yield d
        finally:
            d.stop()


def test_label_output_is_int64(classifier):
    x = np.load(FIXTURE + ".in.0.npy")
    logits, labels = np.load(FIXTURE + ".out.0.npy"), np.load(FIXTURE + ".out.1.npy")
    assert labels.dtype == np.int64
    with nnclient.Client(classifier.socket) as c:
        info = c.model_info("cls")
        assert [t.dtype for t in info.outputs] == ["float32", "int64"]
        assert info.outputs[1].shape == () and info.outputs[1].sample_bytes == 8
        # Three samples with max_batch 2: infer() splits them, the labels come back in order.
        got_logits, got_labels = c.infer(info, x)
        assert got_labels.dtype == np.int64 and got_labels.shape == labels.shape
        np.testing.assert_array_equal(got_labels, labels)
        np.testing.assert_allclose(got_logits, logits, rtol=1e-5, atol=1e-5)
        with c.request(info, batch=2) as r:
            r.inputs[0][:] = x[:2]
            (_, req_labels) = r.run()
            assert req_labels.dtype == np.int64
            np.testing.assert_array_equal(req_labels, labels[:2])
