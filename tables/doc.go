// Package tables holds the codec of every table dualcrf writes, beside
// package schemas, which holds their schemas, metadata keys and validation:
//
//   - the feature table: FeatureWriter, and FeatureReader, ReadFeatureTable
//     and InspectFeatureTable, which read it back (FeatureTable is a table,
//     or a chunk of one, in memory);
//   - the model: WriteModel and ReadModel (a crf.Model with its metadata and
//     checksum);
//   - the prediction table: PredictionWriter (Arrow, Parquet or CoNLL text)
//     writes a FeatureTable's tokens with their Predictions, chunk by chunk;
//     ReadPredictions and InspectPredictions read it back;
//   - the scores table: WriteScores writes a ScoresRow (eval's overall
//     figures), ReadScores reads it back;
//   - the training log: WriteLog writes LogRows (one per epoch), ReadLog
//     reads them back.
//
// The codecs know nothing of how their contents are made: featurize, synth,
// decode and the command's train stage use them, and train itself imports
// no Arrow (its epoch records become LogRows in the caller).
//
// Each writer stamps its table's dualcrf.format and dualcrf.version and
// takes an Arrow allocator in its options (memory.DefaultAllocator when
// nil); readers that open bytes take one too, and readers given an
// array.RecordReader use that reader's. Every reader checks what it reads
// and refuses a damaged or foreign table with an error naming the input and
// the row.
package tables
