#!/usr/bin/env node
// Runs ONNX models with ONNX Runtime (CPU, 1 thread, graph optimizations off) for
// make_fixtures.py. Not meant to be called by hand.
//
// Usage: node ort_expected.mjs JOBS.json
//   JOBS.json: {"jobs": [{"model": "a.onnx",
//                         "inputs":  [{"name": "x", "file": "a.in.0.npy"}],
//                         "outputs": [{"name": "y", "file": "/tmp/.../a.out.0.npy"}],
//                         "optimization": "disabled"}]}      (optional; "all" for int8 kernels)
// Reads each input .npy (float32 or uint8, C order), runs the model, writes every listed
// output as a .npy (npy format 1.0, the same bytes numpy.save writes): float32, an int8, uint8 or
// int32 output as float32 holding its integers, an int64 one (ArgMax indices) as int64, as nnd
// serves them, and prints
// one JSON line {"ort_version": ..., "results": [{"model", "outputs": [{"name", "dims"}]}]}.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import ort from 'onnxruntime-node';

const require = createRequire(import.meta.url);
const ortVersion = require('onnxruntime-node/package.json').version;

if (new Uint8Array(new Float32Array([1]).buffer)[3] !== 0x3f) throw new Error('big-endian host');

// ---------------------------------------------------------------- .npy (format 1.0)
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not an .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: fortran order`);
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)[1];
  const shape = shapeText.split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const body = buf.subarray(start + headerLen);
  const n = shape.reduce((p, d) => p * d, 1);
  const copy = new Uint8Array(body.length);
  copy.set(body);
  if (descr === '<f4') return new ort.Tensor('float32', new Float32Array(copy.buffer, 0, n), shape);
  if (descr === '|u1') return new ort.Tensor('uint8', new Uint8Array(copy.buffer, 0, n), shape);
  throw new Error(`${file}: unsupported dtype ${descr}`);
}

function npyBytes(data, shape, descr) {
  // Same header as numpy.save (format 1.0, header padded to a multiple of 64 bytes).
  const shapeStr = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeStr}, }`;
  const pre = 10;
  const total = Math.ceil((pre + header.length + 1) / 64) * 64;
  header = header + ' '.repeat(total - pre - header.length - 1) + '\n';
  const buf = Buffer.alloc(total + data.byteLength);
  buf.write('\x93NUMPY', 0, 'latin1');
  buf[6] = 1;
  buf[7] = 0;
  buf.writeUInt16LE(header.length, 8);
  buf.write(header, pre, 'latin1');
  Buffer.from(data.buffer, data.byteOffset, data.byteLength).copy(buf, total);
  return buf;
}

// ---------------------------------------------------------------- run
const jobsFile = process.argv[2];
if (!jobsFile) throw new Error('usage: node ort_expected.mjs JOBS.json');
const { jobs } = JSON.parse(fs.readFileSync(jobsFile, 'utf8'));
const options = {
  executionProviders: ['cpu'],
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'disabled',
};

const results = [];
const levels = ['disabled', 'basic', 'extended', 'all'];
for (const job of jobs) {
  const level = job.optimization ?? 'disabled';
  if (!levels.includes(level)) throw new Error(`${job.model}: unknown optimization level ${level}`);
  const session = await ort.InferenceSession.create(job.model, { ...options, graphOptimizationLevel: level });
  const feeds = {};
  for (const inp of job.inputs) feeds[inp.name] = readNpy(inp.file);
  const names = job.outputs.map((o) => o.name);
  const out = await session.run(feeds, names);
  const outs = [];
  for (const o of job.outputs) {
    const t = out[o.name];
    if (!t) throw new Error(`${job.model}: no output ${o.name}`);
    let data = t.data;
    let descr = '<f4';
    if (['int8', 'uint8', 'int32'].includes(t.type)) data = Float32Array.from(t.data);
    else if (t.type === 'int64') descr = '<i8';  // a BigInt64Array
    else if (t.type !== 'float32') throw new Error(`${job.model}: output ${o.name} is ${t.type}, not float32 or an integer type`);
    fs.writeFileSync(o.file, npyBytes(data, t.dims.map(Number), descr));
    outs.push({ name: o.name, dims: t.dims.map(Number) });
  }
  await session.release();
  results.push({ model: job.model, outputs: outs });
}
console.log(JSON.stringify({ ort_version: ortVersion, results }));
