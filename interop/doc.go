// Package interop proves that the tables dualcrf writes open in a data
// lake's own readers: DuckDB (through its Go bindings, cgo) in this
// module's tests, and an independent npm reader in node/check.mjs. It is a
// separate module so that the core module stays free of cgo and DuckDB.
//
// It also holds WriteTokens, which turns a CoNLL corpus into a token table
// (one row per token), for the lake round trip and the measurements.
package interop
