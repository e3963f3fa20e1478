"""nnclient: Python client of the nnd inference daemon, over libnnclient (ctypes, no build step).

    import numpy as np, nnclient

    with nnclient.Client() as c:                 # default endpoint ("nnd", or $NND_ENDPOINT)
        ball = c.model_info("ball")              # ModelInfo: inputs/outputs with shapes, dtypes
        x = np.zeros((4,) + ball.inputs[0].shape, np.float32)   # batch first
        (y,) = c.infer("ball", x)                # list of float32 arrays, batch first

        with c.request(ball, batch=4) as r:      # zero-copy: arrays in the shared memory
            r.inputs[0][:] = x
            r.run()
            y = r.outputs[0].copy()              # views are valid inside the `with` only

Arrays must have the input's dtype (float32, or uint8 where the daemon's config says so): nothing
is converted unless asked with convert=True (float64 -> float32, say).

Errors of the C API are raised as nnclient.Error, which carries the status code (`status`, an
nnclient.Status), its name (`name`, e.g. "NNCLIENT_E_UNKNOWN_MODEL") and the library's detail
message. Mistakes found before calling the library (wrong shape or dtype) raise ValueError.

The shared library is found, in this order: $NNCLIENT_LIBRARY (a path to libnnclient.so.1); the
build tree, when this package is the copy the build makes in BUILD/python/nnclient
(BUILD/client/libnnclient.so.1); then the system's libnnclient.so.1 (ldconfig).

A Client, like the C handle, must be used by one thread at a time; give each thread its own.
"""

from __future__ import annotations

import ctypes
import enum
import os
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

__all__ = ["Client", "Error", "ModelInfo", "Request", "TensorInfo", "Status", "library_path",
           "version", "__version__"]

# The version of this package: the nnd project version (CMake checks it at configure time).
# version() is the loaded libnnclient's, which may be newer.
__version__ = "1.0.0"

MAX_RANK = 6
MAX_TENSORS = 8
LATENCY_BUCKETS = 16
BATCH_BUCKETS = 16
STATUS_CODES = 32


class Status(enum.IntEnum):
    """nnclient_status of nnclient.h."""

    OK = 0
    E_DAEMON_NOT_RUNNING = 1
    E_UNKNOWN_MODEL = 2
    E_MODEL_CHANGED = 3
    E_SHAPE = 4
    E_TIMEOUT = 5
    E_DEADLINE = 6
    E_DAEMON_RESTARTED = 7
    E_INVALID_ARGUMENT = 8
    E_PROTOCOL = 9
    E_OVERLOADED = 10
    E_INTERNAL = 11
    E_SHUTTING_DOWN = 12
    E_ACCESS = 13
    E_NO_SLOT = 14
    E_SYSTEM = 15
    E_TOO_MANY_CLIENTS = 16
    E_TOO_MANY_REQUESTS = 17
    E_REQUEST_TOO_LARGE = 18
    E_MEMORY_LIMIT = 19
    E_RELOAD_FAILED = 20


# ---- the C structs (nnclient.h) ----------------------------------------------------------------

class _TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 64), ("dtype", ctypes.c_int), ("rank", ctypes.c_uint32),
                ("dims", ctypes.c_int64 * MAX_RANK), ("sample_bytes", ctypes.c_size_t)]


class _ModelInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 64), ("version", ctypes.c_uint32),
                ("max_batch", ctypes.c_uint32), ("num_inputs", ctypes.c_uint32),
                ("num_outputs", ctypes.c_uint32), ("inputs", _TensorInfo * MAX_TENSORS),
                ("outputs", _TensorInfo * MAX_TENSORS), ("engine", ctypes.c_char * 32),
                ("signature", ctypes.c_uint64)]


_STAT_FIELDS = ["requests", "batches", "samples", "errors", "deadline_misses", "latency_p50_ns",
                "latency_p99_ns", "latency_max_ns"]


class _ModelStats(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 64)] + [(f, ctypes.c_uint64) for f in _STAT_FIELDS]


class _ModelMetrics(ctypes.Structure):
    _fields_ = ([("struct_size", ctypes.c_uint32), ("queue_depth", ctypes.c_uint32),
                 ("name", ctypes.c_char * 64)] + [(f, ctypes.c_uint64) for f in _STAT_FIELDS] +
                [("latency_sum_ns", ctypes.c_uint64),
                 ("latency_buckets", ctypes.c_uint64 * LATENCY_BUCKETS),
                 ("batch_buckets", ctypes.c_uint64 * BATCH_BUCKETS),
                 ("errors_by_status", ctypes.c_uint64 * STATUS_CODES)])


_DAEMON_FIELDS = ["uptime_ns", "rss_bytes", "clients", "clients_total", "clients_refused",
                  "reloads", "reloads_failed", "requests_in_flight", "shared_memory_bytes",
                  "models"]


class _DaemonInfo(ctypes.Structure):
    _fields_ = ([("struct_size", ctypes.c_uint32), ("pid", ctypes.c_uint32),
                 ("version", ctypes.c_char * 32), ("git_revision", ctypes.c_char * 48)] +
                [(f, ctypes.c_uint64) for f in _DAEMON_FIELDS])


# ---- loading libnnclient ---------------------------------------------------------------------

def _candidates() -> List[str]:
    env = os.environ.get("NNCLIENT_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    build_tree = os.path.normpath(os.path.join(here, "..", "..", "client", "libnnclient.so.1"))
    out = [build_tree] if os.path.exists(build_tree) else []
    return out + ["libnnclient.so.1"]


def _load() -> Tuple[ctypes.CDLL, str]:
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError("nnclient: cannot load libnnclient (set NNCLIENT_LIBRARY to its path, or "
                      "install libnnclient1): " + "; ".join(errors))


_lib, _lib_path = _load()


def _sig(name, restype, *argtypes):
    fn = getattr(_lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


class _OpenOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("slots", ctypes.c_uint32),
                ("max_batch", ctypes.c_uint32), ("num_models", ctypes.c_uint32),
                ("endpoint", ctypes.c_char_p), ("models", ctypes.POINTER(ctypes.c_char_p))]


_vp = ctypes.c_void_p
_open_with = _sig("nnclient_open_with", _vp, ctypes.POINTER(_OpenOptions),
                  ctypes.POINTER(ctypes.c_int))
_close = _sig("nnclient_close", None, _vp)
_model_info = _sig("nnclient_model_info", ctypes.c_int, _vp, ctypes.c_char_p,
                   ctypes.POINTER(_ModelInfo))
_list_models = _sig("nnclient_list_models", ctypes.c_int, _vp, ctypes.c_uint32,
                    ctypes.POINTER(_ModelInfo))
_infer = _sig("nnclient_infer", ctypes.c_int, _vp, ctypes.POINTER(_ModelInfo),
              ctypes.POINTER(_vp), ctypes.c_uint32, ctypes.POINTER(_vp), ctypes.c_uint64)
_reload = _sig("nnclient_reload", ctypes.c_int, _vp)
_request_begin = _sig("nnclient_request_begin", ctypes.c_int, _vp, ctypes.POINTER(_ModelInfo),
                      ctypes.c_uint32, ctypes.POINTER(_vp))
_request_input = _sig("nnclient_request_input", _vp, _vp, ctypes.c_uint32)
_request_output = _sig("nnclient_request_output", _vp, _vp, ctypes.c_uint32)
_submit = _sig("nnclient_submit", ctypes.c_int, _vp, _vp, _vp)
_wait = _sig("nnclient_wait", ctypes.c_int, _vp, _vp, ctypes.c_uint64)
_request_release = _sig("nnclient_request_release", None, _vp, _vp)
_stats = _sig("nnclient_stats", ctypes.c_int, _vp, ctypes.c_uint32, ctypes.POINTER(_ModelStats))
_metrics = _sig("nnclient_model_metrics", ctypes.c_int, _vp, ctypes.c_uint32,
                ctypes.POINTER(_ModelMetrics))
_daemon_info = _sig("nnclient_daemon_info", ctypes.c_int, _vp, ctypes.POINTER(_DaemonInfo))
_latency_bucket_us = _sig("nnclient_latency_bucket_us", ctypes.c_uint32, ctypes.c_uint32)
_strerror = _sig("nnclient_strerror", ctypes.c_char_p, ctypes.c_int)
_status_name = _sig("nnclient_status_name", ctypes.c_char_p, ctypes.c_int)
_last_error = _sig("nnclient_last_error", ctypes.c_char_p, _vp)
_version = _sig("nnclient_version", ctypes.c_char_p)


def library_path() -> str:
    """The libnnclient this module loaded (a path, or the soname when found by the loader)."""
    return _lib_path


def version() -> str:
    """Version of the loaded libnnclient, "MAJOR.MINOR.PATCH"."""
    return _version().decode()


# ---- public types ----------------------------------------------------------------------------

class Error(Exception):
    """A failure reported by libnnclient: `status` (Status), `name` ("NNCLIENT_E_..."),
    `detail` (nnclient_last_error)."""

    def __init__(self, status: int, detail: str = ""):
        try:
            self.status: Union[Status, int] = Status(status)
        except ValueError:
            self.status = status
        self.name: str = _status_name(int(status)).decode()
        self.detail: str = detail or _strerror(int(status)).decode()
        super().__init__(f"{self.name}: {self.detail}")


@dataclass(frozen=True)
class TensorInfo:
    """One input or output: name, dtype ("float32", "uint8", or "int64" for an output of ArgMax
    indices), per-sample shape (batch excluded), bytes of one sample."""

    name: str
    dtype: str
    shape: Tuple[int, ...]
    sample_bytes: int


@dataclass(frozen=True)
class ModelInfo:
    """A served model as nnclient_model_info reports it."""

    name: str
    version: int
    max_batch: int
    engine: str
    signature: int
    inputs: List[TensorInfo] = field(default_factory=list)
    outputs: List[TensorInfo] = field(default_factory=list)
    _raw: Optional[_ModelInfo] = field(default=None, repr=False, compare=False)


_DTYPE_NAMES = {0: "float32", 1: "uint8", 2: "int64"}


def _tensor(t: _TensorInfo) -> TensorInfo:
    return TensorInfo(t.name.decode(), _DTYPE_NAMES.get(int(t.dtype), "float32"),
                      tuple(int(t.dims[d]) for d in range(t.rank)), int(t.sample_bytes))


def _model(raw: _ModelInfo) -> ModelInfo:
    keep = _ModelInfo()
    ctypes.memmove(ctypes.byref(keep), ctypes.byref(raw), ctypes.sizeof(_ModelInfo))
    return ModelInfo(raw.name.decode(), int(raw.version), int(raw.max_batch), raw.engine.decode(),
                     int(raw.signature), [_tensor(raw.inputs[k]) for k in range(raw.num_inputs)],
                     [_tensor(raw.outputs[k]) for k in range(raw.num_outputs)], keep)


ArrayInputs = Union[np.ndarray, Sequence[np.ndarray], Mapping[str, np.ndarray]]


class Client:
    """A connection to the daemon (nnclient_open_with). Use as a context manager, or call close().

    slots, max_batch and models say what this connection will run, so the daemon sizes its
    shared memory for that (nnclient.h, nnclient_open_options_t); left out, the connection starts
    with one-sample slots and grows them when a larger request comes.
    """

    def __init__(self, endpoint: Optional[str] = None, *, slots: int = 0, max_batch: int = 0,
                 models: Optional[Sequence[str]] = None):
        self._h = None
        status = ctypes.c_int(0)
        names = [m.encode() for m in (models or [])]
        arr = (ctypes.c_char_p * max(1, len(names)))(*names)
        o = _OpenOptions(ctypes.sizeof(_OpenOptions), slots, max_batch, len(names),
                         endpoint.encode() if endpoint else None,
                         ctypes.cast(arr, ctypes.POINTER(ctypes.c_char_p)))
        self._h = _open_with(ctypes.byref(o), ctypes.byref(status))
        if not self._h:
            raise Error(status.value, _last_error(None).decode())

    # -- lifetime --
    def close(self) -> None:
        """Closes the connection (idempotent)."""
        if self._h:
            _close(self._h)
            self._h = None

    @property
    def closed(self) -> bool:
        return not self._h

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        if getattr(self, "_h", None) and _close is not None:
            self.close()

    def _handle(self):
        if not self._h:
            raise Error(Status.E_INVALID_ARGUMENT, "the client is closed")
        return self._h

    def _check(self, st: int) -> None:
        if st != 0:
            raise Error(st, _last_error(self._h).decode())

    # -- queries --
    def model_info(self, name: str) -> ModelInfo:
        raw = _ModelInfo()
        self._check(_model_info(self._handle(), name.encode(), ctypes.byref(raw)))
        return _model(raw)

    def models(self) -> List[ModelInfo]:
        """Every served model, in the daemon's order."""
        out = []
        for i in range(1 << 16):
            raw = _ModelInfo()
            st = _list_models(self._handle(), i, ctypes.byref(raw))
            if st == Status.E_UNKNOWN_MODEL:
                break
            self._check(st)
            out.append(_model(raw))
        return out

    def stats(self) -> List[Dict[str, object]]:
        """nnclient_stats for every model: name, requests, batches, samples, errors, ..."""
        out = []
        for i in range(1 << 16):
            raw = _ModelStats()
            st = _stats(self._handle(), i, ctypes.byref(raw))
            if st == Status.E_UNKNOWN_MODEL:
                break
            self._check(st)
            out.append({"name": raw.name.decode(), **{f: int(getattr(raw, f)) for f in _STAT_FIELDS}})
        return out

    def metrics(self) -> List[Dict[str, object]]:
        """nnclient_model_metrics for every model: the stats plus queue_depth, latency_sum_ns,
        latency_buckets_us {bound: count}, batch_size_buckets {bound: count},
        errors_by_status {status name: count} (non-zero ones)."""
        out = []
        for i in range(1 << 16):
            raw = _ModelMetrics()
            raw.struct_size = ctypes.sizeof(_ModelMetrics)
            st = _metrics(self._handle(), i, ctypes.byref(raw))
            if st == Status.E_UNKNOWN_MODEL:
                break
            self._check(st)
            m = {"name": raw.name.decode(), **{f: int(getattr(raw, f)) for f in _STAT_FIELDS},
                 "queue_depth": int(raw.queue_depth), "latency_sum_ns": int(raw.latency_sum_ns)}
            m["latency_buckets_us"] = {
                (str(_latency_bucket_us(b)) if _latency_bucket_us(b) else "+Inf"):
                int(raw.latency_buckets[b]) for b in range(LATENCY_BUCKETS)}
            m["batch_size_buckets"] = {
                (str(1 << b) if b + 1 < BATCH_BUCKETS else "+Inf"): int(raw.batch_buckets[b])
                for b in range(BATCH_BUCKETS)}
            m["errors_by_status"] = {
                _status_name(s).decode(): int(raw.errors_by_status[s])
                for s in range(1, STATUS_CODES) if raw.errors_by_status[s]}
            out.append(m)
        return out

    def daemon_info(self) -> Dict[str, object]:
        """nnclient_daemon_info: version, git_revision, pid, uptime_ns, rss_bytes, clients, ..."""
        raw = _DaemonInfo()
        raw.struct_size = ctypes.sizeof(_DaemonInfo)
        self._check(_daemon_info(self._handle(), ctypes.byref(raw)))
        return {"version": raw.version.decode(), "git_revision": raw.git_revision.decode(),
                "pid": int(raw.pid), **{f: int(getattr(raw, f)) for f in _DAEMON_FIELDS}}

    def reload(self) -> str:
        """Asks the daemon to reload its config; returns its message (raises if refused)."""
        self._check(_reload(self._handle()))
        return _last_error(self._h).decode()

    # -- inference --
    def infer(self, model: Union[str, ModelInfo], inputs: ArrayInputs,
              timeout: Optional[float] = 10.0, *, convert: bool = False) -> List[np.ndarray]:
        """Runs a batch and returns the outputs (float32, int64 for ArgMax indices; batch first),
        in the model's order.

        `inputs`: one array (a one-input model), a sequence in the model's input order, or a
        dict by input name. Each array is batch first: shape (N,) + the input's shape, the same N
        for all, and of the input's dtype: float32 arrays for float32 inputs, uint8 arrays for
        uint8 inputs. Another dtype raises ValueError, unless convert=True: then a float32 input
        takes any real numbers (converted to float32), and a uint8 input integers 0..255. A
        batch larger than the model's max_batch is sent in several requests. `timeout` in
        seconds per request (None or 0: wait forever)."""
        info = self.model_info(model) if isinstance(model, str) else model
        arrays = self._arrange(info, inputs, convert)
        batch = arrays[0].shape[0] if arrays else 0
        if batch == 0:
            raise ValueError("the batch (first axis) is empty")
        outs = [np.empty((batch,) + t.shape, np.dtype(t.dtype)) for t in info.outputs]
        timeout_us = int(timeout * 1e6) if timeout else 0
        step = max(1, info.max_batch)
        raw = info._raw if info._raw is not None else self.model_info(info.name)._raw
        for start in range(0, batch, step):
            n = min(step, batch - start)
            ins = (_vp * MAX_TENSORS)(*[a[start:start + n].ctypes.data for a in arrays])
            os_ = (_vp * MAX_TENSORS)(*[o[start:start + n].ctypes.data for o in outs])
            self._check(_infer(self._handle(), ctypes.byref(raw), ins, n, os_, timeout_us))
        return outs

    def request(self, model: Union[str, ModelInfo], batch: int = 1) -> "Request":
        """A zero-copy request (nnclient_request_begin): numpy arrays that live in the shared
        memory the daemon reads and writes. Use as a context manager; see Request."""
        info = self.model_info(model) if isinstance(model, str) else model
        return Request(self, info, batch)

    @staticmethod
    def _arrange(info: ModelInfo, inputs: ArrayInputs, convert: bool = False) -> List[np.ndarray]:
        if isinstance(inputs, np.ndarray):
            given = [inputs]
        elif isinstance(inputs, Mapping):
            names = [t.name for t in info.inputs]
            unknown = sorted(set(inputs) - set(names))
            if unknown:
                raise ValueError(f"model '{info.name}' has no input {unknown[0]!r} "
                                 f"(inputs: {', '.join(names)})")
            missing = [n for n in names if n not in inputs]
            if missing:
                raise ValueError(f"input {missing[0]!r} of model '{info.name}' is missing")
            given = [inputs[n] for n in names]
        else:
            given = list(inputs)
        if len(given) != len(info.inputs):
            raise ValueError(f"model '{info.name}' takes {len(info.inputs)} input(s), "
                             f"got {len(given)}")
        out = []
        batch = None
        for t, a in zip(info.inputs, given):
            a = np.asarray(a)
            if a.shape[1:] != t.shape or a.ndim != len(t.shape) + 1:
                raise ValueError(f"input '{t.name}': shape {a.shape} does not fit "
                                 f"(N,) + {t.shape} (batch first)")
            if batch is not None and a.shape[0] != batch:
                raise ValueError(f"input '{t.name}': batch {a.shape[0]} differs from {batch}")
            batch = a.shape[0]
            a = _as_input_dtype(t, a, convert)
            out.append(np.ascontiguousarray(a))
        return out


def _as_input_dtype(t: TensorInfo, a: np.ndarray, convert: bool) -> np.ndarray:
    """`a` when it has input t's dtype; converted when asked (and possible without losing
    values: integers 0..255 for uint8); else ValueError naming both dtypes."""
    want = np.uint8 if t.dtype == "uint8" else np.float32
    if a.dtype == want:
        return a
    if not convert:
        hint = ("the daemon's config says uint8 for it (camera bytes)" if t.dtype == "uint8"
                else "send float32")
        raise ValueError(f"input '{t.name}' is {t.dtype}, got a {a.dtype} array: {hint}; "
                         f"nothing is converted unasked (convert it, e.g. a.astype(np.{t.dtype}), "
                         f"or pass convert=True)")
    if want == np.float32:
        if not (np.issubdtype(a.dtype, np.number) or a.dtype == np.bool_) or np.iscomplexobj(a):
            raise ValueError(f"input '{t.name}' is float32: cannot convert a {a.dtype} array")
        return a.astype(np.float32)
    if not np.issubdtype(a.dtype, np.integer) or (a.size and (a.min() < 0 or a.max() > 255)):
        raise ValueError(f"input '{t.name}' is uint8: convert=True takes integers 0..255, got a "
                         f"{a.dtype} array" + (f" with values {a.min()}..{a.max()}" if a.size else ""))
    return a.astype(np.uint8)


class Request:
    """A zero-copy request: `inputs` and `outputs` are numpy arrays (batch first) in the shared
    memory of the connection, as nnclient_request_input/output give them in C. Fill the inputs
    in place, run(), read the outputs in place.

        with client.request(ball, batch=8) as r:
            r.inputs[0][:] = patches      # or write into r.inputs[0] directly, e.g. a camera copy
            r.run(timeout=0.05)
            best = r.outputs[0].argmax(axis=1)

    The arrays are views of the request's slot: valid until the request is released (leaving the
    `with`, or release()); do not keep them beyond it (copy what you need). Outputs are read-only.
    The Request belongs to its Client and its thread, like the client itself."""

    def __init__(self, client: Client, info: ModelInfo, batch: int):
        if batch < 1:
            raise ValueError("batch must be at least 1")
        self._client = client
        self._info = info
        self._batch = batch
        self._r = _vp()
        raw = info._raw if info._raw is not None else client.model_info(info.name)._raw
        client._check(_request_begin(client._handle(), ctypes.byref(raw), batch, ctypes.byref(self._r)))
        self.inputs: List[np.ndarray] = [
            self._view(_request_input(self._r, k), t, writable=True) for k, t in enumerate(info.inputs)]
        self.outputs: List[np.ndarray] = []

    def _view(self, ptr: Optional[int], t: TensorInfo, writable: bool) -> np.ndarray:
        if not ptr:
            raise Error(Status.E_INVALID_ARGUMENT, f"no buffer for '{t.name}'")
        dtype = np.dtype(t.dtype)
        n = self._batch * int(np.prod(t.shape, dtype=np.int64))
        buf = (ctypes.c_uint8 * (n * np.dtype(dtype).itemsize)).from_address(ptr)
        a = np.frombuffer(buf, dtype=dtype, count=n).reshape((self._batch,) + t.shape)
        a.flags.writeable = writable
        return a

    def run(self, timeout: Optional[float] = 10.0) -> List[np.ndarray]:
        """Submits the request and waits for its answer; returns (and sets) `outputs`."""
        if not self._r:
            raise Error(Status.E_INVALID_ARGUMENT, "the request was released")
        h = self._client._handle()
        self._client._check(_submit(h, self._r, None))
        self.inputs = []  # the daemon owns the input memory now
        self._client._check(_wait(h, self._r, int(timeout * 1e6) if timeout else 0))
        self.outputs = [self._view(_request_output(self._r, k), t, writable=False)
                        for k, t in enumerate(self._info.outputs)]
        return self.outputs

    def release(self) -> None:
        """Gives the slot back (idempotent); the arrays must not be used afterwards."""
        if self._r and not self._client.closed:
            _request_release(self._client._handle(), self._r)
        self._r = _vp()
        self.inputs, self.outputs = [], []

    def __enter__(self) -> "Request":
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def __del__(self):
        if getattr(self, "_r", None) and getattr(self, "_client", None) is not None:
            self.release()


def deterministic_input(info: ModelInfo, batch: int = 1) -> List[np.ndarray]:
    """nnrun's inputs for a model without files: element j (flat, C order, whole batch) of input k
    is ((j*37 + k*101) mod 256) / 255 for float32 inputs, the same without the division for
    uint8 ones."""
    out = []
    for k, t in enumerate(info.inputs):
        n = batch * int(np.prod(t.shape, dtype=np.int64))
        j = np.arange(n, dtype=np.int64)
        v = (j * 37 + k * 101) % 256
        a = v.astype(np.uint8) if t.dtype == "uint8" else (v.astype(np.float32) / np.float32(255))
        out.append(a.reshape((batch,) + t.shape))
    return out
