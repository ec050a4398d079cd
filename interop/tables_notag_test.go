//go:build !duckdb_arrow

package interop

import "testing"

// TestEveryTableInDuckDB needs DuckDB's Arrow interface, which duckdb-go
// builds only with the duckdb_arrow tag.
func TestEveryTableInDuckDB(t *testing.T) {
	t.Fatal("run the interop tests with -tags duckdb_arrow (DuckDB's Arrow interface reads the Arrow IPC tables)")
}
