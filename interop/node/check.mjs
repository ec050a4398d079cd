// An independent reader of dualcrf's tables: nodejs-polars (Rust's Arrow
// and Parquet readers, no code shared with arrow-go) opens every table
// check.sh made, in every format, and checks row counts and values.
//
//   node check.mjs DIR
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const require = createRequire(process.env.NODE_MODULES_DIR + "/");
const pl = require("nodejs-polars");
const dir = process.argv[2];
let failures = 0;
const fail = (msg) => { console.error("check.mjs: FAIL: " + msg); failures++; };

// Files are read into buffers: nodejs-polars 0.26's readIPC(path) fails
// with "InvalidFooter" on IPC files that it reads whole from a buffer (and
// that Arrow JS reads too).
function read(name) {
  const b = fs.readFileSync(path.join(dir, name));
  if (name.endsWith(".parquet")) return pl.readParquet(b);
  if (name.endsWith(".arrows")) return pl.readIPCStream(b);
  return pl.readIPC(b); // IPC file (.arrow from train and eval, .feather)
}

const tables = [
  { files: ["train.arrows", "train.feather", "train.parquet"], rows: 3479,
    value: (df) => { const r = df.filter(pl.col("sentence").eq(0).and(pl.col("position").eq(0))).row(0);
      const c = df.columns; return `${r[c.indexOf("word")]}/${r[c.indexOf("label")]}/${r[c.indexOf("attrs")].length}`; } },
  { files: ["model.arrow", "model.parquet"], rows: 17302,
    value: (df) => `${df.filter(pl.col("kind").eq(pl.lit("attr"))).height} attributes` },
  { files: ["sparse.arrow", "sparse.parquet"], rows: null,
    value: (df) => { const w = df.getColumn("weights").toArray(), l = df.getColumn("labels").toArray();
      let stored = 0, nonzero = 0, byLabel = 0;
      for (let i = 0; i < w.length; i++) { stored += w[i].length; nonzero += [...w[i]].filter((x) => x !== 0).length; if (l[i] !== null) byLabel++; }
      return `${byLabel} rows by label, ${stored} weights stored, ${nonzero} non-zero`; } },
  { files: ["log.arrow", "log.parquet"], rows: null, value: (df) => `${df.height} epochs` },
  { files: ["pred.arrows", "pred.feather", "pred.parquet"], rows: 1171,
    value: (df) => { const acc = df.filter(pl.col("gold").eq(pl.col("pred"))).height / df.height;
      const r = df.row(0); const c = df.columns;
      return `${r[c.indexOf("word")]}/${r[c.indexOf("gold")]}/${r[c.indexOf("pred")]} accuracy ${acc.toFixed(6)}`; } },
  { files: ["scores.arrow", "scores.parquet"], rows: 1,
    value: (df) => `accuracy ${Number(df.getColumn("accuracy").get(0)).toFixed(6)} f1 ${Number(df.getColumn("f1").get(0)).toFixed(6)}` },
];

for (const t of tables) {
  let first = null;
  for (const f of t.files) {
    let df;
    try { df = read(f); } catch (e) { fail(`${f}: ${e.message}`); continue; }
    if (t.rows !== null && df.height !== t.rows) fail(`${f}: ${df.height} rows, want ${t.rows}`);
    const v = t.value(df);
    if (first === null) first = v; else if (v !== first) fail(`${f}: ${v}, but ${t.files[0]} gives ${first}`);
    console.log(`${f.padEnd(15)} ${String(df.height).padStart(7)} rows  ${v}`);
  }
}
// The prediction table's accuracy is the scores table's.
const pred = read("pred.parquet"), scores = read("scores.parquet");
const acc = pred.filter(pl.col("gold").eq(pl.col("pred"))).height / pred.height;
if (Math.abs(acc - Number(scores.getColumn("accuracy").get(0))) > 1e-12) fail(`accuracy ${acc} from pred.parquet, scores.parquet says ${scores.getColumn("accuracy").get(0)}`);
if (failures > 0) process.exit(1);
console.log("check.mjs: every table read by nodejs-polars " + require("nodejs-polars/package.json").version);
