#!/usr/bin/env python3
"""Writes the model files in this folder: files that crash a parser nnd uses instead of making it
report an error. They exist to test that such a file never takes down the daemon
(daemon/registry/model_validator.h); no nnd process may load them in-process.

  model_config_heap_index.h5
      tests/data/fixtures/pool2d_even_same.k3.h5 with one change: the heap object index of the
      root attribute `model_config` (a variable-length string: 4-byte length, 8-byte address of
      its global heap collection "GCOL", 4-byte object index) set to 0x40000000. libhdf5 1.10's
      H5HG_read checks that index only with assertions, which release builds compile out, and
      reads heap->obj[index] far outside the collection's object table: SIGSEGV inside H5Aread
      (H5HG_read <- H5T__conv_vlen <- H5A__read), reproducible with `nninfo FILE`. The global
      heap check nnd runs before libhdf5 sees a file (core/io/hdf5_heap_check.h) validates the
      collections, not the references into them, so the file passes it.

Found by a bounded search: every vlen reference into the file's one collection, each with three
bad indices (index + 1000, 0x40000000, 0x7fffffff), 45 files checked with nninfo; 12 crashed (SIGSEGV).

Run from the repository root:  python3 tests/data/crashers/make_crashers.py
"""
import pathlib
import struct

ROOT = pathlib.Path(__file__).resolve().parents[3]
SOURCE = ROOT / "tests/data/fixtures/pool2d_even_same.k3.h5"
OUT = pathlib.Path(__file__).resolve().parent


def model_config_heap_index() -> bytes:
    data = bytearray(SOURCE.read_bytes())
    collection = data.index(b"GCOL\x01")
    name = data.index(b"model_config\x00")
    # The attribute's value is the first reference to that collection after its name.
    ref = data.index(struct.pack("<Q", collection), name)
    struct.pack_into("<I", data, ref + 8, 0x40000000)
    return bytes(data)


if __name__ == "__main__":
    (OUT / "model_config_heap_index.h5").write_bytes(model_config_heap_index())
