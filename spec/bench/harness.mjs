// The bench harness: warm-up, interleaved runs, medians, ratios, the table and the JSON file.
// Every figure the suite reports is a ratio of two medians measured side by side in one process.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

// A full GC between runs, so that one contender does not pay for the garbage of the other.
v8.setFlagsFromString('--expose-gc');
/** Runs a full garbage collection (exposed at run time, so `node spec/bench/index.mjs` needs no flag). */
export const gc = globalThis.gc ?? vm.runInNewContext('gc');

/** The command line: `--quick`, `--json <file>`, `--only <name[,name]>`. */
export function parseArgs(argv = process.argv.slice(2)) {
  const args = { quick: false, json: undefined, only: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') args.quick = true;
    else if (arg === '--json') args.json = argv[++i];
    else if (arg.startsWith('--json=')) args.json = arg.slice('--json='.length);
    else if (arg === '--only') args.only = argv[++i].split(',');
    else if (arg.startsWith('--only=')) args.only = arg.slice('--only='.length).split(',');
    else if (arg === '--help' || arg === '-h') {
      console.log('Usage: npm run bench [-- --quick] [--json <file>] [--only <name[,name]>]\n  --quick  small workloads, 5 runs (under a minute)\n  --json   also write the results as JSON\n  --only   run only these items (throughput, operators, encode, stateDelta, memory, latency, verify, broker)\nMethod and results: docs/performance.md');
      process.exit(0);
    } else {
      console.error(`Unknown argument '${arg}'. Use --quick, --json <file>, --only <name[,name]>, or --help.`);
      process.exit(2);
    }
  }
  return args;
}

/** The machine the figures come from. */
export function machine() {
  const cpus = os.cpus();
  return {
    cores: cpus.length,
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    node: process.version,
    platform: `${process.platform} ${os.release()} ${process.arch}`,
    memoryGB: Math.round(os.totalmem() / 2 ** 30),
    loadavg: os.loadavg().map((n) => Math.round(n * 100) / 100),
  };
}

/** The median of some numbers. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The p-th percentile (0..100, nearest rank) of some numbers. */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * Suite-wide settings, set by index.mjs. `gcBetweenRuns`: a full GC before every timed run (tens
 * of ms each on a loaded 2-core machine; --quick skips it and measures more loosely).
 */
export const settings = { gcBetweenRuns: true };

/** Times one run of a contender (sync or async) in ms, after its untimed setup and (`gcFirst`) a full GC. */
async function timeOnce(contender, gcFirst) {
  const fn = contender.setup ? contender.setup() : contender.fn;
  if (gcFirst) gc();
  const start = performance.now();
  const result = fn();
  if (result && typeof result.then === 'function') await result;
  return performance.now() - start;
}

/**
 * Measures contenders side by side: `warmup` untimed rounds, then `runs` timed rounds, each round
 * running every contender once in turn (A, B, A, B…; the order rotates each round so that neither
 * always goes first). A contender is `{ name, fn }` (`fn` is timed) or `{ name, setup }` (`setup()`
 * runs untimed and returns the function that is timed). Returns `{ [name]: { median, samples } }` in ms.
 * `gcFirst`: a full GC before each run (default: `settings.gcBetweenRuns`); without it the rounds
 * measure a process in its steady state, its compiled code as the runs before left it.
 */
export async function measure(contenders, { runs = 5, warmup = 1, gcFirst = settings.gcBetweenRuns } = {}) {
  const samples = Object.fromEntries(contenders.map((c) => [c.name, []]));
  for (let round = 0; round < warmup + runs; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const contender = contenders[(k + round) % contenders.length];
      const ms = await timeOnce(contender, gcFirst);
      if (round >= warmup) samples[contender.name].push(ms);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, { median: median(values), samples: values }]));
}

/**
 * One row of the table. `ratio` is `baseline ÷ ours` for times (above 1: ours is faster) unless
 * the row says otherwise in `ratioMeans`; `target` is `{ op: '>=' | '<=', value }` or undefined.
 */
export function row({ item, name, ours, baseline, ratio, target, unit = 'ms', ratioMeans = 'baseline ÷ ours', ratioUnit, note }) {
  const pass = target === undefined || !Number.isFinite(ratio) ? undefined : target.op === '>=' ? ratio >= target.value : ratio <= target.value;
  return { item, name, contenders: [ours, baseline], unit, ratio, ratioMeans, ...(ratioUnit === undefined ? {} : { ratioUnit }), target, pass, note };
}

/** A comparison row of two measured contenders: ratio = baseline median ÷ ours median. */
export function speedRow({ item, name, results, ours, baseline, target, note }) {
  const a = results[ours].median;
  const b = results[baseline].median;
  return row({ item, name, ours: { name: ours, value: a }, baseline: { name: baseline, value: b }, ratio: b / a, target, note });
}

const fmt = (value, unit) => {
  if (!Number.isFinite(value)) return String(value);
  const digits = unit === 'MB' ? 2 : value >= 100 ? 0 : value >= 10 ? 1 : value >= 1 ? 2 : 3;
  return `${value.toFixed(digits)} ${unit}`;
};
const fmtRatio = (r, unit = 'x') => {
  if (!Number.isFinite(r)) return String(r);
  const text = Math.abs(r) >= 100 ? r.toFixed(0) : Math.abs(r) >= 10 ? r.toFixed(1) : r.toFixed(2);
  return unit === 'x' ? `${text}x` : `${text} ${unit}`;
};
/**
 * A row's figure and what it means. A negative difference reads as its size the other way
 * ("-1.76 KB (more per reader)" as "1.76 KB (less per reader)"); the JSON keeps the signed value.
 */
function fmtFigure(r) {
  if (r.ratioMeans === 'baseline ÷ ours') return fmtRatio(r.ratio, r.ratioUnit);
  const flipped = r.ratioUnit !== undefined && r.ratio < 0 ? oppositeOf(r.ratioMeans) : undefined;
  return flipped === undefined ? `${fmtRatio(r.ratio, r.ratioUnit)} (${r.ratioMeans})` : `${fmtRatio(-r.ratio, r.ratioUnit)} (${flipped})`;
}

// The words of a difference the other way round, for the differences the items report.
function oppositeOf(means) {
  if (means === 'added') return 'less';
  if (means.startsWith('more ')) return `less ${means.slice(5)}`;
  if (means.startsWith('saved ')) return `more ${means.slice(6)}`;
  return undefined;
}

const fmtTarget = (t, unit = 'x') => (t === undefined ? '—' : `${t.op === '>=' ? '≥' : '≤'} ${t.value}${unit === 'x' ? 'x' : ` ${unit}`}`);

/** The results as one plain-text table (also valid Markdown). */
/** One row as a line of progress: its item, name, figure, target and mark (the table has it all at the end). */
export function rowLine(r) {
  const target = r.target === undefined ? '' : ` (target ${fmtTarget(r.target, r.ratioUnit)})`;
  return `[${r.item}] ${r.name}: ${fmtFigure(r)}${target}${r.pass === undefined ? '' : r.pass ? ' ✓' : ' ✗'}`;
}

export function table(rows, info) {
  const header = ['#', 'item', 'ours', 'median', 'baseline', 'median', 'ratio', 'target', ''];
  const lines = rows.map((r) => [
    String(r.item),
    r.name,
    r.contenders[0].name,
    fmt(r.contenders[0].value, r.unit),
    r.contenders[1].name,
    fmt(r.contenders[1].value, r.unit),
    fmtFigure(r),
    fmtTarget(r.target, r.ratioUnit),
    r.pass === undefined ? '' : r.pass ? '✓' : '✗',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const render = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  const m = info.machine;
  return [
    `agui-rx bench${info.quick ? ' (--quick)' : ''}, ${info.date.slice(0, 16).replace('T', ' ')} UTC: ${m.cores} cores × ${m.cpu}, Node ${m.node}, ${m.platform}, ${m.memoryGB} GB, load ${m.loadavg.join(' ')}`,
    `Ratio = baseline median ÷ ours median (above 1: agui-rx is faster) unless the row says otherwise; ${info.runs} timed runs after ${info.warmup} warm-up rounds, contenders interleaved${info.quick ? '' : ', a full GC before each run'}.`,
    '',
    render(header),
    render(widths.map((w) => '-'.repeat(w))),
    ...lines.map(render),
    ...(info.seconds === undefined ? [] : ['', `${rows.length} rows in ${info.seconds} s.`]),
  ].join('\n');
}
