// `npm run bench`: runs every bench item and prints one table of side-by-side ratios.
// Options: --quick (small sizes, for CI), --json <file> (write the results), --only <name[,name]>.
// Items: throughput (1, 2), operators (3), encode (4), stateDelta (5), memory (6), latency (7), verify (8),
// broker (9-12: the run broker's replay, Redis round trips, memory per reader, added latency),
// serve (13-16, issue 17: serving many streams, server CPU per token, heap per open stream, frames
// and bytes on the wire, token latency; agui-rx vs a hand-written handler vs the official stack),
// linearity (17: per-chunk cost of one long message or tool call).
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { machine, parseArgs, rowLine, settings, table } from './harness.mjs';
import * as throughput from './throughput.mjs';
import * as operators from './operators.mjs';
import * as encode from './encode.mjs';
import * as stateDelta from './stateDelta.mjs';
import * as memory from './memory.mjs';
import * as latency from './latency.mjs';
import * as verify from './verify.mjs';
import * as broker from './broker.mjs';
import * as serve from './serve.mjs';
import * as linearity from './linearity.mjs';

const modules = [throughput, operators, encode, stateDelta, memory, latency, verify, broker, serve, linearity];
const args = parseArgs();
const unknown = (args.only ?? []).filter((name) => !modules.some((m) => m.name === name));
if (unknown.length > 0) {
  console.error(`Unknown item(s) ${unknown.join(', ')}. Items: ${modules.map((m) => m.name).join(', ')}.`);
  process.exit(2);
}

const info = { machine: machine(), quick: args.quick, runs: 5, warmup: 2, date: new Date().toISOString() };
settings.gcBetweenRuns = !args.quick;
const notes = [];
const ctx = {
  quick: args.quick,
  runs: info.runs,
  warmup: info.warmup,
  log: (message) => process.stderr.write(`  ${message}\n`),
  // What a reader of the table must know (an item skipped, and why): printed under the table.
  note: (message) => {
    notes.push(message);
    process.stderr.write(`  note: ${message}\n`);
  },
};
const started = performance.now();
const rows = [];
const errors = [];
for (const module of modules) {
  if (args.only && !args.only.includes(module.name)) continue;
  const t = performance.now();
  try {
    for (const r of await module.run(ctx)) {
      rows.push({ ...r, module: module.name });
      // Each row as its item finishes, so that a long run shows its results before the table.
      ctx.log(`  ${rowLine(r)}`);
    }
  } catch (error) {
    // One broken item must not cost the others' results: it is reported as failed.
    process.exitCode = 1;
    errors.push({ module: module.name, error: String(error?.stack ?? error) });
    ctx.log(`${module.name} FAILED: ${error?.stack ?? error}`);
  }
  ctx.log(`${module.name}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
}
info.seconds = Math.round((performance.now() - started) / 100) / 10;

console.log(table(rows, info));
for (const message of notes) console.log(`\nNote: ${message}`);
for (const { module, error } of errors) console.log(`\n${module} FAILED:\n${error}`);
if (args.json) writeFileSync(args.json, JSON.stringify({ ...info, rows, notes, errors }, null, 2) + '\n');
