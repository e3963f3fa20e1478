"""A real nnd on a private endpoint for the Python tests (as tests/integration does it in C++):
a temporary folder with its own NND_RUNTIME_DIR and a config naming the example models by
absolute path; started once per module, stopped with SIGTERM."""

import os
import signal
import subprocess
import tempfile
import time

import pytest

import nnclient

SOURCE = os.environ["NND_SOURCE_DIR"]
NND = os.environ["NND_EXE"]
NNCTL = os.environ["NNCTL_EXE"]
NNRUN = os.environ["NNRUN_EXE"]


def model_path(name: str) -> str:
    return os.path.join(SOURCE, "examples", "models", name)


CONFIG = """daemon:
  endpoint: pytest
  workers: 1
  log_level: debug
models:
  - name: ball
    path: {ball}
    engine: jit
    max_batch: 4
  - name: detector
    path: {detector}
    inputs:
      input: uint8
    max_batch: 2
"""


class Daemon:
    """nnd on CONFIG (ball and detector), or on `config` serving `models` models."""

    def __init__(self, folder: str, config: str = "", models: int = 2):
        self.folder = folder
        run = os.path.join(folder, "run")
        os.makedirs(run)
        self.config = os.path.join(folder, "nnd.yaml")
        with open(self.config, "w") as f:
            f.write(config or CONFIG.format(ball=model_path("ball_patch.h5"),
                                            detector=model_path("detector.h5")))
        self.socket = os.path.join(run, "pytest.sock")
        env = {k: v for k, v in os.environ.items()
               if k not in ("JOURNAL_STREAM", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID",
                            "NND_ENDPOINT", "INVOCATION_ID")}
        env["NND_RUNTIME_DIR"] = run
        self.log_path = os.path.join(folder, "nnd.log")
        self.log_file = open(self.log_path, "w")
        self.proc = subprocess.Popen([NND, "--config", self.config], env=env,
                                     stdout=self.log_file, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nnd exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with nnclient.Client(self.socket) as c:
                    if len(c.models()) == models:
                        break
            except nnclient.Error:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"nnd did not serve within 120 s:\n{self.log()}")
            time.sleep(0.05)

    def log(self) -> str:
        with open(self.log_path) as f:
            return f.read()

    def nnctl(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([NNCTL, "--endpoint", self.socket, *args], capture_output=True,
                              text=True, timeout=60)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log_file.close()


@pytest.fixture(scope="module")
def daemon():
    with tempfile.TemporaryDirectory(prefix="nnd_pytest_") as folder:
        d = Daemon(folder)
        try:
            yield d
        finally:
            d.stop()
