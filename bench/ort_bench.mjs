#!/usr/bin/env node
// ONNX Runtime timing for nnbench: node ort_bench.mjs MODEL.onnx REPEAT
// CPU, one intra/inter-op thread, one sample per call (batch 1), random inputs from the model's
// input metadata. Prints "ort <min_us> <median_us>" (the JS binding's per-call cost included).
// onnxruntime-node is resolved from tools/onnx_reference (NND_ORT_DIR), where npm installs it.
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.NND_ORT_DIR || process.cwd(), 'package.json'));
const ort = require('onnxruntime-node');

const [model, repeatArg] = process.argv.slice(2);
const repeat = Math.max(1, parseInt(repeatArg || '100', 10));
const sess = await ort.InferenceSession.create(model, {
  intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', executionProviders: ['cpu'],
});
const feeds = {};
for (const m of sess.inputMetadata) {
  const dims = m.shape.map((d, i) => (i === 0 || typeof d !== 'number' || d < 1 ? 1 : d));
  const n = dims.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = Math.random();
  feeds[m.name] = new ort.Tensor('float32', data, dims);
}
for (let i = 0; i < Math.max(2, repeat / 20); i++) await sess.run(feeds);
const t = [];
for (let i = 0; i < repeat; i++) {
  const t0 = process.hrtime.bigint();
  await sess.run(feeds);
  t.push(Number(process.hrtime.bigint() - t0) / 1e3);
}
t.sort((a, b) => a - b);
console.log(`ort ${t[0].toFixed(1)} ${t[Math.floor(t.length / 2)].toFixed(1)}`);
