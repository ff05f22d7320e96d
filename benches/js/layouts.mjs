// The JS study's experiments, written again for this project so that V8 runs on the same CPU
// as our Rust: objects / shuffled objects / struct-of-arrays / interleaved array-of-structs for
// the eight-field frame (move, then regen, doubles), and the 20-field width reversal with S from
// 1 to 20, plus the controls that say where SoA's climb past ~8 streams comes from.
//
// No dependencies. `entity-layouts bench --only js` runs it, one part per process; by hand:
//
//   node --max-old-space-size=8192 benches/js/layouts.mjs layouts 1000000
//   node --max-old-space-size=8192 benches/js/layouts.mjs width soa-columns 1000000
//
// It prints one JSON object on stdout: {"runtime": "node v…", "records": [...]}, each record
// {layout, n, param, metric, unit, p50, p10, p90, samples}.
//
// Method (the study's): three warm-up passes, inner repeats so each sample covers about four
// million elements, then samples until 15 are in and 800 ms have passed (at most 41); p50 with
// p10 and p90 beside it. `--quick` takes 1 warm-up and 5..9 samples, for tests.

'use strict';

const DT = 1 / 60;
const WORLD_WIDTH = 1600;
const WORLD_HEIGHT = 900;
const MAX_ENERGY = 100;
const FIELDS = ['x', 'y', 'vx', 'vy', 'hp', 'energy', 'regen', 'armor'];
const WIDE = 20;

// ---------------------------------------------------------------- measuring

function method(quick) {
  return quick
    ? { warmup: 1, min: 5, max: 9, budgetMs: 40 }
    : { warmup: 3, min: 15, max: 41, budgetMs: 800 };
}

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

// ms per call of `fn`, which does `work` elements of work per call.
function measure(m, fn, work) {
  const reps = Math.max(1, Math.round(4e6 / work));
  for (let w = 0; w < m.warmup; w++) for (let r = 0; r < reps; r++) fn();
  const samples = [];
  const start = performance.now();
  for (;;) {
    const a = performance.now();
    for (let r = 0; r < reps; r++) fn();
    samples.push((performance.now() - a) / reps);
    const spent = performance.now() - start;
    if (samples.length >= m.max || (samples.length >= m.min && spent >= m.budgetMs)) break;
  }
  samples.sort((a, b) => a - b);
  return {
    p50: samples[samples.length >> 1],
    p10: quantile(samples, 0.1),
    p90: quantile(samples, 0.9),
    samples: samples.length,
  };
}

// A small deterministic generator (two 32-bit xorshifts, 53 bits a draw), so every run fills
// the same values without any package.
function generator(seed) {
  let a = Math.imul(seed, 0x9e3779b1) | 1;
  let b = Math.imul(seed + 0x6d2b79f5, 0x85ebca6b) | 1;
  return () => {
    a ^= a << 13; a ^= a >>> 17; a ^= a << 5;
    b ^= b << 17; b ^= b >>> 15; b ^= b << 26;
    return ((a >>> 0) * 2097152 + ((b >>> 0) >>> 11)) / 9007199254740992;
  };
}

// ------------------------------------------------- the frame: two systems, eight fields

// `study`: the study's systems (x += vx * dt, energy += regen * dt clamped at 100) over its
// values in [0, 1). `ours`: this project's systems (the same, then a wrap into the 1600 x 900
// world, as workload.rs does it) over values in this project's ranges, for Rust against V8.
const VARIANTS = {
  study: {
    draw: (r) => FIELDS.map(() => r()),
  },
  ours: {
    draw: (r) => [
      r() * WORLD_WIDTH, r() * WORLD_HEIGHT,
      (r() * 2 - 1) * 120, (r() * 2 - 1) * 120,
      50 + r() * 100, r() * MAX_ENERGY, r() * 10, r() * 20,
    ],
  },
};

function wrap(v, extent) {
  if (v < 0) {
    const w = v + extent;
    return w < extent ? w : 0;
  }
  return v >= extent ? v - extent : v;
}

class Entity {
  constructor(f) {
    this.x = f[0]; this.y = f[1]; this.vx = f[2]; this.vy = f[3];
    this.hp = f[4]; this.energy = f[5]; this.regen = f[6]; this.armor = f[7];
  }
}

const objectSystems = {
  study(list) {
    const n = list.length;
    for (let i = 0; i < n; i++) { const e = list[i]; e.x += e.vx * DT; e.y += e.vy * DT; }
    for (let i = 0; i < n; i++) {
      const e = list[i];
      e.energy += e.regen * DT;
      if (e.energy > MAX_ENERGY) e.energy = MAX_ENERGY;
    }
  },
  ours(list) {
    const n = list.length;
    for (let i = 0; i < n; i++) {
      const e = list[i];
      e.x = wrap(e.x + e.vx * DT, WORLD_WIDTH);
      e.y = wrap(e.y + e.vy * DT, WORLD_HEIGHT);
    }
    for (let i = 0; i < n; i++) {
      const e = list[i];
      const v = e.energy + e.regen * DT;
      e.energy = v > MAX_ENERGY ? MAX_ENERGY : v;
    }
  },
};

const soaSystems = {
  study(c) {
    const { n, x, y, vx, vy, energy, regen } = c;
    for (let i = 0; i < n; i++) { x[i] += vx[i] * DT; y[i] += vy[i] * DT; }
    for (let i = 0; i < n; i++) {
      energy[i] += regen[i] * DT;
      if (energy[i] > MAX_ENERGY) energy[i] = MAX_ENERGY;
    }
  },
  ours(c) {
    const { n, x, y, vx, vy, energy, regen } = c;
    for (let i = 0; i < n; i++) {
      x[i] = wrap(x[i] + vx[i] * DT, WORLD_WIDTH);
      y[i] = wrap(y[i] + vy[i] * DT, WORLD_HEIGHT);
    }
    for (let i = 0; i < n; i++) {
      const v = energy[i] + regen[i] * DT;
      energy[i] = v > MAX_ENERGY ? MAX_ENERGY : v;
    }
  },
};

// Field offsets inside one interleaved record of eight doubles.
const X = 0, Y = 1, VX = 2, VY = 3, ENERGY = 5, REGEN = 6, STRIDE = FIELDS.length;

const aosSystems = {
  study(a) {
    const { n, d } = a;
    for (let i = 0; i < n; i++) { const b = i * STRIDE; d[b + X] += d[b + VX] * DT; d[b + Y] += d[b + VY] * DT; }
    for (let i = 0; i < n; i++) {
      const b = i * STRIDE;
      d[b + ENERGY] += d[b + REGEN] * DT;
      if (d[b + ENERGY] > MAX_ENERGY) d[b + ENERGY] = MAX_ENERGY;
    }
  },
  ours(a) {
    const { n, d } = a;
    for (let i = 0; i < n; i++) {
      const b = i * STRIDE;
      d[b + X] = wrap(d[b + X] + d[b + VX] * DT, WORLD_WIDTH);
      d[b + Y] = wrap(d[b + Y] + d[b + VY] * DT, WORLD_HEIGHT);
    }
    for (let i = 0; i < n; i++) {
      const b = i * STRIDE;
      const v = d[b + ENERGY] + d[b + REGEN] * DT;
      d[b + ENERGY] = v > MAX_ENERGY ? MAX_ENERGY : v;
    }
  },
};

// Every layout of one variant at `n` entities, built from the same values. Each layout is built
// right before it is measured and dropped after, so one layout's heap does not sit under the next.
function layouts(m, variant, n) {
  const values = (() => {
    const r = generator(7);
    const v = new Float64Array(n * STRIDE);
    for (let i = 0; i < n; i++) v.set(VARIANTS[variant].draw(r), i * STRIDE);
    return v;
  })();
  const entity = (i) => new Entity(values.subarray(i * STRIDE, (i + 1) * STRIDE));
  const out = [];
  const record = (layout, stats) =>
    out.push({ layout, n, param: `systems=${variant}`, metric: 'frame_ms', unit: 'ms', ...stats });

  {
    const list = new Array(n);
    for (let i = 0; i < n; i++) list[i] = entity(i);
    const step = objectSystems[variant];
    record('boxed', measure(m, () => step(list), n));
    // Allocation order is the best case for objects; a game's churn shuffles it.
    const shuffled = list.slice();
    const r = generator(9);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      const t = shuffled[i]; shuffled[i] = shuffled[j]; shuffled[j] = t;
    }
    record('boxed-shuffled', measure(m, () => step(shuffled), n));
  }
  {
    const columns = { n };
    FIELDS.forEach((f, k) => {
      const c = new Float64Array(n);
      for (let i = 0; i < n; i++) c[i] = values[i * STRIDE + k];
      columns[f] = c;
    });
    const step = soaSystems[variant];
    record('soa', measure(m, () => step(columns), n));
  }
  {
    const records = { n, d: values.slice() };
    const step = aosSystems[variant];
    record('aos', measure(m, () => step(records), n));
  }
  return out;
}

// ------------------------------------------------- the width reversal: sum S of 20 fields

// The study's kernels, generated per S so each reads exactly S fields with nothing looked up
// at run time: one sum per element, S reads per element.
const sumKernel = {
  objects: (s) => new Function('list', 'n',
    `let s = 0; for (let i = 0; i < n; i++) { const e = list[i]; s += ${range(s).map((f) => `e.f${f}`).join(' + ')}; } return s;`),
  columns: (s) => new Function('cols', 'n',
    `const ${range(s).map((f) => `c${f} = cols[${f}]`).join(', ')}; let s = 0;
     for (let i = 0; i < n; i++) { s += ${range(s).map((f) => `c${f}[i]`).join(' + ')}; } return s;`),
  // One typed array, column-major, read at S constant offsets: the same S memory streams as
  // the column layouts, but one base pointer and one bounds check in the loop instead of S.
  oneIndex: (s) => new Function('d', 'n',
    `let s = 0; for (let i = 0; i < n; i++) { s += ${range(s).map((f) => `d[i + ${f} * n]`).join(' + ')}; } return s;`),
  rows: (s) => new Function('d', 'n',
    `let s = 0; for (let i = 0; i < n; i++) { const b = i * ${WIDE}; s += ${range(s).map((f) => `d[b + ${f}]`).join(' + ')}; } return s;`),
};

function range(s) {
  return [...Array(s).keys()];
}

const WIDTH_LAYOUTS = ['objects', 'soa-columns', 'soa-shared', 'soa-one-index', 'aos'];

// `layout` at `n` entities of 20 doubles, for S = 1..20: ms per pass and ns per element read.
function width(m, layout, n) {
  const r = generator(7);
  const value = () => r();
  let data, kernel;
  switch (layout) {
    case 'objects': {
      const make = new Function('r', `return { ${range(WIDE).map((f) => `f${f}: r()`).join(', ')} };`);
      data = new Array(n);
      for (let i = 0; i < n; i++) data[i] = make(value);
      kernel = sumKernel.objects;
      break;
    }
    case 'soa-columns':
      // One allocation per column, as the study did.
      data = range(WIDE).map(() => Float64Array.from({ length: n }, value));
      kernel = sumKernel.columns;
      break;
    case 'soa-shared': {
      // Every column a view into one buffer: the same kernel, one allocation.
      const buffer = Float64Array.from({ length: n * WIDE }, value);
      data = range(WIDE).map((f) => buffer.subarray(f * n, (f + 1) * n));
      kernel = sumKernel.columns;
      break;
    }
    case 'soa-one-index':
      data = Float64Array.from({ length: n * WIDE }, value);
      kernel = sumKernel.oneIndex;
      break;
    case 'aos':
      data = Float64Array.from({ length: n * WIDE }, value);
      kernel = sumKernel.rows;
      break;
    default:
      fail(`unknown width layout '${layout}'; accepted: ${WIDTH_LAYOUTS.join(', ')}`);
  }
  const out = [];
  let sink = 0;
  for (let s = 1; s <= WIDE; s++) {
    const sum = kernel(s);
    const stats = measure(m, () => { sink += sum(data, n); }, n * s);
    const param = `streams=${s}`;
    out.push({ layout, n, param, metric: 'read_ms', unit: 'ms', ...stats });
    const per = 1e6 / (n * s);
    out.push({
      layout, n, param, metric: 'ns_per_element', unit: 'ns',
      p50: stats.p50 * per, p10: stats.p10 * per, p90: stats.p90 * per, samples: stats.samples,
    });
  }
  if (sink === 0.5) console.error('unreachable');
  return out;
}

// ---------------------------------------------------------------- command line

function fail(message) {
  console.error(`layouts.mjs: ${message}`);
  process.exit(2);
}

function count(text) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 100_000_000) {
    fail(`entity count '${text}' is not accepted; accepted: a whole number from 1 to 100000000`);
  }
  return n;
}

const usage = 'usage: layouts.mjs [--quick] layouts <n> [study|ours] | width <layout> <n>';
const args = process.argv.slice(2).filter((a) => a !== '-');
const quick = args.includes('--quick');
const [part, ...rest] = args.filter((a) => a !== '--quick');
const m = method(quick);
let records;
if (part === 'layouts') {
  const n = count(rest[0]);
  const variants = rest[1] ? [rest[1]] : ['study', 'ours'];
  for (const v of variants) {
    if (!(v in VARIANTS)) fail(`unknown systems '${v}'; accepted: study, ours`);
  }
  records = variants.flatMap((v) => layouts(m, v, n));
} else if (part === 'width') {
  if (!WIDTH_LAYOUTS.includes(rest[0])) {
    fail(`unknown width layout '${rest[0]}'; accepted: ${WIDTH_LAYOUTS.join(', ')}`);
  }
  records = width(m, rest[0], count(rest[1]));
} else {
  fail(usage);
}
process.stdout.write(JSON.stringify({ runtime: `node ${process.version}`, records }) + '\n');
