// Package dualcrfbeam runs dualcrf's batch stages — featurize, decode and
// eval — as Apache Beam pipelines over sharded inputs, so that a corpus
// too large for one machine is processed by a distributed engine (Flink,
// Spark, Dataflow through a portable job server) or, here, by Beam's
// Prism runner inside the process.
//
// Each pipeline reads a list of shards (files, in the order Shards gives)
// and writes one output per shard, part-NNNNN.EXT in an output directory,
// NNNNN being the shard's index. The outputs equal those of the
// single-machine stages on the concatenation of the shards:
//
//   - Featurize counts attributes and labels per shard, combines the counts
//     (per template and value, with their first appearance) into the
//     vocabulary — the attributes kept by the min-count cut-off, in the
//     order `dualcrf featurize` would give them ids — and featurizes every
//     shard with that vocabulary as a side input: part-NNNNN.arrow feature
//     tables whose rows, read in shard order, are the single-machine table's.
//   - Decode reads the model once as a side input and writes each shard's
//     predictions as `dualcrf decode --format parquet` does.
//   - Eval scores every shard's predictions, combines conlleval's counts
//     (decode.Counts) and returns the evaluator of the whole corpus, whose
//     report is `dualcrf eval`'s, byte for byte.
//
// Shards are processed by a splittable DoFn, so that Prism (which otherwise
// runs a stage's elements in one bundle) splits the list across bundles
// running in parallel. Outputs are written atomically on a file system
// every worker shares; the pipelines read and write local paths only.
package dualcrfbeam
