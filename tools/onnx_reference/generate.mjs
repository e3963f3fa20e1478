#!/usr/bin/env node
// Generates independent expected outputs for the real robot networks.
//
// For each network it makes deterministic, image-like inputs (seeded RNG, batch of 3),
// runs the ONNX twin of the Keras file with ONNX Runtime (CPU, 1 thread, one sample at a
// time because some twins have a fixed batch of 1), and writes inputs and outputs as .npy
// plus tests/data/real/manifest.json. Input and output files are named and keyed by the
// *Keras* layer names (model_config input_layers / output_layers), which are read from the
// .h5 file and cross-checked against the table below.
//
// Usage: node generate.mjs [--models DIR] [--out DIR]
//   DIR defaults to <repo>/../shared/models; --out defaults to <repo>/tests/data/real.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import ort from 'onnxruntime-node';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const require = createRequire(import.meta.url);
const ortVersion = require('onnxruntime-node/package.json').version;

function parseArgs(argv) {
  const a = { models: path.resolve(repo, '..', 'shared', 'models'), out: path.join(repo, 'tests', 'data', 'real') };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--models') a.models = path.resolve(argv[++i]);
    else if (argv[i] === '--out') a.out = path.resolve(argv[++i]);
    else if (argv[i] === '-h' || argv[i] === '--help') {
      console.log('usage: node generate.mjs [--models DIR] [--out DIR]');
      process.exit(0);
    } else throw new Error(`unknown argument ${argv[i]}`);
  }
  return a;
}

// ---------------------------------------------------------------- deterministic RNG
// mulberry32: 32-bit state, exact integer arithmetic, identical on every platform.
function makeRng(seed) {
  let s = seed >>> 0;
  const uniform = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = () => {
    const u1 = Math.max(uniform(), 1e-12), u2 = uniform();
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  };
  const range = (lo, hi) => lo + (hi - lo) * uniform();
  return { uniform, normal, range };
}

const clamp = (v, lo, hi) => (v < lo ? lo : v > hi ? hi : v);
const smoothstep = (e0, e1, x) => { const t = clamp((x - e0) / (e1 - e0), 0, 1); return t * t * (3 - 2 * t); };

// ---------------------------------------------------------------- .npy writer (format 1.0)
function npyBytes(data, shape) {
  let descr;
  if (data instanceof Uint8Array) descr = '|u1';
  else if (data instanceof Float32Array) descr = '<f4';
  else throw new Error('unsupported array type');
  const n = shape.reduce((p, d) => p * d, 1);
  if (n !== data.length) throw new Error(`shape ${shape} does not match ${data.length} elements`);
  const shapeStr = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeStr}, }`;
  const pre = 10; // magic(6) + version(2) + header_len(2)
  const total = Math.ceil((pre + header.length + 1) / 64) * 64;
  header = header + ' '.repeat(total - pre - header.length - 1) + '\n';
  const buf = Buffer.alloc(total + data.byteLength);
  buf.write('\x93NUMPY', 0, 'latin1');
  buf[6] = 1; buf[7] = 0;
  buf.writeUInt16LE(header.length, 8);
  buf.write(header, pre, 'latin1');
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (descr === '<f4' && new Uint8Array(new Float32Array([1]).buffer)[3] !== 0x3f) throw new Error('big-endian host');
  bytes.copy(buf, total);
  return buf;
}

// ---------------------------------------------------------------- Keras model_config from .h5
// The model_config attribute is a JSON string stored contiguously in the file (as a fixed-length
// or a variable-length string). Find the object that holds "input_layers" by brace matching.
function matchObject(s, start) {
  let depth = 0, inStr = false;
  for (let i = start; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (inStr) {
      if (c === 92) i++; // backslash
      else if (c === 34) inStr = false;
    } else if (c === 34) inStr = true;
    else if (c === 123) depth++;
    else if (c === 125) { if (--depth === 0) return i + 1; }
    else if (c === 0) return -1;
  }
  return -1;
}

function kerasIo(h5file) {
  const s = fs.readFileSync(h5file).toString('latin1');
  const key = s.indexOf('"input_layers"');
  if (key < 0) throw new Error(`${h5file}: no input_layers in model_config`);
  for (let b = s.lastIndexOf('{', key); b >= 0 && key - b < 1 << 22; b = s.lastIndexOf('{', b - 1)) {
    const e = matchObject(s, b);
    if (e < 0 || e < key) continue;
    try {
      const o = JSON.parse(s.slice(b, e));
      if (o.input_layers && o.output_layers) {
        const norm = (l) => (Array.isArray(l[0]) ? l : [l]).map((x) => x[0]);
        return { inputs: norm(o.input_layers), outputs: norm(o.output_layers) };
      }
    } catch { /* not the config object yet; keep widening */ }
  }
  throw new Error(`${h5file}: could not parse model_config`);
}

// ---------------------------------------------------------------- input generators
// All four networks were trained on raw 0..255 pixel values: none has a Rescaling layer, and
// the moving means of the first BatchNormalization, divided by the first kernel's sums, imply
// per-channel input means of about 100..150. So every image input is made in 0..255.

// bop: raw YUYV bytes, 240 rows x 320 columns x 2 bytes. Byte 0 of each column is Y of that
// pixel; byte 1 alternates U (even column) and V (odd column) as in a YUV422 buffer.
function makeBop(rng, k) {
  const H = 240, W = 320, out = new Uint8Array(H * W * 2);
  const horizon = rng.range(50, 110);                        // field starts below this row
  const tilt = rng.range(-0.12, 0.12);
  const blobs = [];
  for (let i = 0; i < 2; i++) {                               // white ball-like blob(s)
    blobs.push({ x: rng.range(40, 280), y: rng.range(horizon + 20, 220), r: rng.range(8, 22) + 6 * k, dark: rng.range(0.3, 0.6) });
  }
  const lineY = rng.range(horizon + 40, 200);                // a white field line
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const h = horizon + tilt * (x - W / 2);
      const field = smoothstep(h - 4, h + 4, y);             // 0 above the horizon, 1 on the field
      // background: bright-ish wall/ceiling with a slow gradient; field: green, darker far away
      let Y = (1 - field) * (150 + 50 * Math.sin(x / 47 + k) * Math.cos(y / 31)) + field * (85 + 0.15 * y);
      let U = (1 - field) * (128 + 8 * Math.sin(x / 70)) + field * 100;
      let V = (1 - field) * (128 + 6 * Math.cos(y / 40)) + field * 110;
      const onLine = Math.exp(-(((y - lineY - 0.1 * (x - W / 2)) / 2.5) ** 2)) * field;
      Y += onLine * 120; U += onLine * 25; V += onLine * 15;
      for (const bl of blobs) {
        const d = Math.hypot(x - bl.x, y - bl.y) / bl.r;
        const inBlob = 1 - smoothstep(0.9, 1.05, d);
        if (inBlob > 0) {
          // white ball with dark pentagon-like patches
          const patch = Math.sin(x / 3.1 + bl.x) * Math.sin(y / 2.7 + bl.y) > 0.55 ? bl.dark : 1;
          Y = Y * (1 - inBlob) + inBlob * 230 * patch;
          U = U * (1 - inBlob) + inBlob * 128;
          V = V * (1 - inBlob) + inBlob * 128;
        }
      }
      const i = (y * W + x) * 2;
      out[i] = clamp(Math.round(Y + 6 * rng.normal()), 0, 255);
      out[i + 1] = clamp(Math.round((x % 2 === 0 ? U : V) + 3 * rng.normal()), 0, 255);
    }
  }
  return out;
}

// ball-penalty-multihead: a 32x32 gray patch (0..255), candidate ball / penalty mark / nothing.
function makeBallPatch(rng, k) {
  const S = 32, out = new Float32Array(S * S);
  const bg = rng.range(70, 120), gx = rng.range(-1.5, 1.5), gy = rng.range(-1.5, 1.5);
  const cx = rng.range(12, 20), cy = rng.range(12, 20);
  for (let y = 0; y < S; y++) {
    for (let x = 0; x < S; x++) {
      let v = bg + gx * (x - 16) + gy * (y - 16);
      if (k === 0) {          // ball: bright disc with dark patches
        const d = Math.hypot(x - cx, y - cy) / 11;
        const a = 1 - smoothstep(0.85, 1.05, d);
        const patch = Math.sin(x / 1.9 + cx) * Math.sin(y / 2.1 + cy) > 0.5 ? 60 : 215;
        v = v * (1 - a) + a * patch;
      } else if (k === 1) {   // penalty mark: white cross
        const a = Math.max(1 - smoothstep(1.5, 2.5, Math.abs(x - cx)), 1 - smoothstep(1.5, 2.5, Math.abs(y - cy)))
          * (1 - smoothstep(7, 8, Math.max(Math.abs(x - cx), Math.abs(y - cy))));
        v = v * (1 - a) + a * 200;
      } else {                // background: field with a line edge
        v += 70 * smoothstep(-1.5, 1.5, x - cx + 0.4 * (y - cy));
      }
      out[y * S + x] = clamp(Math.round(v + 5 * rng.normal()), 0, 255);
    }
  }
  return out;
}

// field-boundary: a 30x40 3-channel downscaled camera image (0..255); green field at the
// bottom, a field boundary whose height varies across the columns, busier background above.
function makeFieldImage(rng, k) {
  const H = 30, W = 40, out = new Float32Array(H * W * 3);
  const base = rng.range(8, 18), slope = rng.range(-0.2, 0.2), bend = rng.range(-4, 4);
  const bgc = [rng.range(110, 190), rng.range(90, 170), rng.range(90, 170)];
  const fc = [rng.range(60, 100), rng.range(110, 150), rng.range(50, 90)];
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const b = base + slope * (x - W / 2) + bend * Math.sin((x / W) * Math.PI * (1 + k));
      const f = smoothstep(b - 0.7, b + 0.7, y);
      for (let c = 0; c < 3; c++) {
        const bgv = bgc[c] + 35 * Math.sin(x / 3 + c + k) * Math.cos(y / 4 - c);
        const fv = fc[c] + 1.2 * (y - H / 2);
        out[(y * W + x) * 3 + c] = clamp(bgv * (1 - f) + fv * f + 4 * rng.normal(), 0, 255);
      }
    }
  }
  return out;
}

// referee-gesture: a 256x256 3-channel image (0..255) of a person-like figure whose arms are
// raised to different heights per sample, plus the distance input (meters; the first Dense
// on it has weights ~±1 and biases ~-0.1, which fits a distance of a few meters).
function makeRefereeImage(rng, k) {
  const S = 256, out = new Float32Array(S * S * 3);
  const bg = [rng.range(120, 180), rng.range(120, 170), rng.range(110, 160)];
  const shirt = [[30, 30, 30], [200, 40, 40], [40, 60, 180]][k % 3];
  const cx = rng.range(110, 146), top = rng.range(40, 70);
  const armAng = [-1.2, 0.0, 0.9][k % 3];                    // arm angle (radians, up is negative)
  const seg = (px, py, ax, ay, bx, by, r) => {                // soft capsule
    const vx = bx - ax, vy = by - ay, t = clamp(((px - ax) * vx + (py - ay) * vy) / (vx * vx + vy * vy), 0, 1);
    return 1 - smoothstep(r - 1.5, r + 1.5, Math.hypot(px - ax - t * vx, py - ay - t * vy));
  };
  const shY = top + 45, armL = 70;
  const lx = cx - 28 - armL * Math.cos(armAng), ly = shY + armL * Math.sin(armAng);
  const rx = cx + 28 + armL * Math.cos(-armAng * 0.5), ry = shY + armL * Math.sin(-armAng * 0.5);
  for (let y = 0; y < S; y++) {
    for (let x = 0; x < S; x++) {
      const floor = smoothstep(185, 195, y);
      const head = 1 - smoothstep(18, 21, Math.hypot(x - cx, y - top - 18));
      const body = seg(x, y, cx, shY, cx, shY + 80, 26);
      const legs = Math.max(seg(x, y, cx - 12, shY + 80, cx - 16, 240, 9), seg(x, y, cx + 12, shY + 80, cx + 16, 240, 9));
      const arms = Math.max(seg(x, y, cx - 28, shY, lx, ly, 7), seg(x, y, cx + 28, shY, rx, ry, 7));
      const person = Math.max(body, arms);
      for (let c = 0; c < 3; c++) {
        let v = bg[c] + 25 * Math.sin(x / 37 + c) * Math.cos(y / 29 + k);
        v = v * (1 - floor) + floor * [70, 130, 60][c];        // green carpet
        v = v * (1 - legs) + legs * 40;
        v = v * (1 - person) + person * shirt[c];
        v = v * (1 - head) + head * [200, 160, 130][c];
        out[(y * S + x) * 3 + c] = clamp(v + 6 * rng.normal(), 0, 255);
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------- the cases
// keras: name from model_config input_layers/output_layers (checked against the .h5 at run time)
// onnx: the ONNX twin's tensor name, matched to the Keras input by shape and order.
const BATCH = 3;
const CASES = [
  {
    stem: 'bop', seed: 0x0b0b,
    inputs: [{ keras: 'input', onnx: 'args_0', shape: [240, 320, 2], dtype: 'uint8', make: makeBop }],
    outputs: [{ keras: 'conv2d_3', onnx: 'conv2d_3', shape: [15, 20, 4] }],
  },
  {
    stem: 'ball-penalty-multihead', seed: 0xba11,
    inputs: [{ keras: 'Input_Layer', onnx: 'args_0', shape: [32, 32, 1], dtype: 'float32', make: makeBallPatch }],
    outputs: [{ keras: 'concatenate', onnx: 'concatenate', shape: [6] }],
  },
  {
    stem: 'field-boundary', seed: 0xf1e1d,
    inputs: [{ keras: 'input', onnx: 'input', shape: [30, 40, 3], dtype: 'float32', make: makeFieldImage }],
    outputs: [{ keras: 'reshape', onnx: 'reshape', shape: [40, 2] }],
  },
  {
    stem: 'referee-gesture', seed: 0x4ef,
    inputs: [
      { keras: 'input_layer', onnx: 'args_0', shape: [256, 256, 3], dtype: 'float32', make: makeRefereeImage },
      { keras: 'distance_input', onnx: 'args_1', shape: [1], dtype: 'float32', make: (rng, k) => new Float32Array([[1.3, 2.6, 4.1][k] + rng.range(-0.2, 0.2)]) },
    ],
    outputs: [{ keras: 'Output_Layer', onnx: 'Output_Layer', shape: [3] }],
  },
];

const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);
const size = (s) => s.reduce((p, d) => p * d, 1);

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(args.models)) {
    console.error(`models folder ${args.models} not found (pass --models DIR)`);
    process.exit(2);
  }
  fs.mkdirSync(args.out, { recursive: true });
  const manifest = {
    generator: 'tools/onnx_reference/generate.mjs',
    engine: `onnxruntime-node ${ortVersion}, CPU, 1 thread`,
    cases: [],
  };

  for (const c of CASES) {
    const h5 = `${c.stem}.h5`, onnxFile = `${c.stem}.onnx`;
    const io = kerasIo(path.join(args.models, h5));
    if (!sameShape(io.inputs, c.inputs.map((i) => i.keras)) || !sameShape(io.outputs, c.outputs.map((o) => o.keras)))
      throw new Error(`${h5}: Keras io ${JSON.stringify(io)} differs from the table`);

    const sess = await ort.InferenceSession.create(path.join(args.models, onnxFile), {
      intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', executionProviders: ['cpu'],
    });
    // Check the name mapping against the ONNX graph: names, order and shapes (NHWC, batch first).
    const inMeta = sess.inputMetadata, outMeta = sess.outputMetadata;
    c.inputs.forEach((inp, i) => {
      const m = inMeta[i];
      if (m.name !== inp.onnx || !sameShape(m.shape.slice(1), inp.shape))
        throw new Error(`${onnxFile}: input ${i} is ${m.name} ${JSON.stringify(m.shape)}, expected ${inp.onnx} [b,${inp.shape}]`);
    });
    c.outputs.forEach((o) => {
      const m = outMeta.find((x) => x.name === o.onnx);
      if (!m || !sameShape(m.shape.slice(1), o.shape))
        throw new Error(`${onnxFile}: output ${o.onnx} ${JSON.stringify(m && m.shape)} is not [b,${o.shape}]`);
    });

    const rng = makeRng(c.seed);
    const inData = c.inputs.map((inp) => (inp.dtype === 'uint8' ? new Uint8Array(BATCH * size(inp.shape)) : new Float32Array(BATCH * size(inp.shape))));
    const outData = c.outputs.map((o) => new Float32Array(BATCH * size(o.shape)));
    for (let k = 0; k < BATCH; k++) {
      const feeds = {};
      c.inputs.forEach((inp, i) => {
        const sample = inp.make(rng, k);
        if (sample.length !== size(inp.shape)) throw new Error(`${c.stem}: generator size`);
        inData[i].set(sample, k * size(inp.shape));
        feeds[inp.onnx] = new ort.Tensor('float32', Float32Array.from(sample), [1, ...inp.shape]);
      });
      const res = await sess.run(feeds);
      c.outputs.forEach((o, j) => {
        const t = res[o.onnx];
        if (!sameShape(t.dims, [1, ...o.shape])) throw new Error(`${c.stem}: output dims ${t.dims}`);
        if (!t.data.every(Number.isFinite)) throw new Error(`${c.stem}: non-finite output`);
        outData[j].set(t.data, k * size(o.shape));
      });
    }
    await sess.release();

    const entry = { model: h5, onnx: onnxFile, inputs: [], outputs: [] };
    c.inputs.forEach((inp, i) => {
      const file = `${c.stem}.in.${i}.npy`;
      fs.writeFileSync(path.join(args.out, file), npyBytes(inData[i], [BATCH, ...inp.shape]));
      entry.inputs.push({ name: inp.keras, file, dtype: inp.dtype, onnx_name: inp.onnx });
    });
    c.outputs.forEach((o, j) => {
      const file = `${c.stem}.out.${j}.npy`;
      fs.writeFileSync(path.join(args.out, file), npyBytes(outData[j], [BATCH, ...o.shape]));
      entry.outputs.push({ name: o.keras, file, onnx_name: o.onnx });
      let lo = Infinity, hi = -Infinity;
      for (const v of outData[j]) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
      console.log(`${c.stem}: ${o.keras} [${BATCH},${o.shape}] range ${lo.toPrecision(5)} .. ${hi.toPrecision(5)}`);
    });
    manifest.cases.push(entry);
  }
  fs.writeFileSync(path.join(args.out, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  console.log(`wrote ${manifest.cases.length} cases to ${args.out} (${manifest.engine})`);
}

main().catch((e) => { console.error(e); process.exit(1); });
