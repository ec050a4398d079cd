//go:build duckdb_arrow

package interop

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// TestEveryTableInDuckDB opens every table dualcrf writes, in every format
// it writes it — Parquet with DuckDB's own reader (read_parquet), Arrow
// IPC files and streams through DuckDB's Arrow interface, fed by arrow-go's
// IPC readers (DuckDB reads IPC bytes only through a community extension,
// which cannot be installed offline) — and checks row counts and a few
// values against what the tool reported.
func TestEveryTableInDuckDB(t *testing.T) {
	dir := t.TempDir()
	train, test := testdata("train150.txt"), testdata("test50.txt")
	for _, f := range []string{"train.arrows", "train.feather", "train.parquet"} {
		dualcrf(t, dir, "featurize", "--template", "chunking", "-o", f, train)
	}
	dualcrf(t, dir, "train", "-q", "--gap-tol", "1e-2", "-o", "model.arrow", "--log", "log.arrow", "train.arrows")
	dualcrf(t, dir, "train", "-q", "--gap-tol", "1e-2", "-o", "model.parquet", "--log", "log.parquet", "train.parquet")
	// The elastic net's model: most rows store a few weights with their labels.
	for _, f := range []string{"sparse.arrow", "sparse.parquet"} {
		dualcrf(t, dir, "train", "-q", "--gap-tol", "1e-2", "--l1", "1/n", "-o", f, "train.arrows")
	}
	dualcrf(t, dir, "featurize", "--model", "model.arrow", "-o", "test.arrows", test)
	for _, f := range []string{"pred.arrows", "pred.feather", "pred.parquet"} {
		dualcrf(t, dir, "decode", "-m", "model.arrow", "-o", f, "test.arrows")
	}
	dualcrf(t, dir, "eval", "--scores", "scores.arrow", "pred.arrows")
	dualcrf(t, dir, "eval", "--scores", "scores.parquet", "pred.arrows")

	db, conn, ar := duckArrow(t)
	_ = db
	count := func(table string) (n int) {
		if err := conn.QueryRowContext(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		return n
	}
	open := func(name string) string {
		path := filepath.Join(dir, name)
		if filepath.Ext(name) == ".parquet" {
			return fmt.Sprintf("read_parquet('%s')", path)
		}
		view := registerIPC(t, conn, ar, path)
		return view
	}
	models := 0
	for _, c := range []struct {
		files []string
		rows  int // -1: the same in every format
		check string
		want  string
	}{
		{[]string{"train.arrows", "train.feather", "train.parquet"}, 3479,
			"SELECT word || '/' || label || '/' || len(attrs) FROM %s WHERE sentence = 0 AND position = 0", ""},
		{[]string{"model.arrow", "model.parquet"}, -1, "SELECT count(DISTINCT kind) || ' kinds, ' || count(*) FILTER (WHERE kind = 'attr') || ' attributes' FROM %s", "5 kinds, 17282 attributes"},
		{[]string{"sparse.arrow", "sparse.parquet"}, -1, "SELECT count(*) FILTER (WHERE labels IS NOT NULL) || ' rows by label, ' || " +
			"sum(len(weights)) || ' weights stored, ' || sum(len(list_filter(weights, x -> x <> 0))) || ' non-zero' FROM %s", ""},
		{[]string{"log.arrow", "log.parquet"}, -1, "SELECT count(*) > 0 FROM %s WHERE gap IS NOT NULL", "true"},
		{[]string{"pred.arrows", "pred.feather", "pred.parquet"}, 1171,
			"SELECT word || '/' || gold || '/' || pred FROM %s WHERE sentence = 0 AND position = 0", "Rockwell/B-NP/B-NP"},
		{[]string{"scores.arrow", "scores.parquet"}, 1, "SELECT tokens || ' ' || round(accuracy, 6) FROM %s", ""},
	} {
		first := -1
		for _, f := range c.files {
			table := open(f)
			n := count(table)
			switch {
			case c.rows >= 0 && n != c.rows:
				t.Errorf("%s: %d rows in DuckDB, want %d", f, n, c.rows)
			case first >= 0 && n != first:
				t.Errorf("%s: %d rows in DuckDB, %s has %d", f, n, c.files[0], first)
			}
			first = n
			var got string
			if err := conn.QueryRowContext(context.Background(), fmt.Sprintf(c.check, table)).Scan(&got); err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			if c.want != "" && got != c.want {
				t.Errorf("%s: %q, want %q", f, got, c.want)
			}
			if c.want == "" {
				c.want = got // the other formats must agree
			}
			t.Logf("%-15s %7d rows  %s", f, n, got)
		}
		models++
	}
	if models != 6 {
		t.Fatal("not every table was checked")
	}
	// The metadata travels: DuckDB sees dualcrf.format in the Parquet key-value metadata.
	var format string
	q := fmt.Sprintf("SELECT decode(value) FROM parquet_kv_metadata('%s') WHERE decode(key) = 'dualcrf.format'", filepath.Join(dir, "model.parquet"))
	if err := conn.QueryRowContext(context.Background(), q).Scan(&format); err != nil || format != "model" {
		t.Errorf("model.parquet dualcrf.format = %q, %v", format, err)
	}
}

// duckArrow opens DuckDB with its Arrow interface on one connection.
func duckArrow(t *testing.T) (*sql.DB, *sql.Conn, *duckdb.Arrow) {
	t.Helper()
	db := duck(t)
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var ar *duckdb.Arrow
	err = conn.Raw(func(dc any) error {
		var err error
		ar, err = duckdb.NewArrowFromConn(dc.(driver.Conn))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return db, conn, ar
}

var views int

// registerIPC registers the Arrow IPC file or stream at path as a DuckDB
// view, read by arrow-go's IPC reader, and returns the view's name.
func registerIPC(t *testing.T, conn *sql.Conn, ar *duckdb.Arrow, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var rr array.RecordReader
	if fr, err := ipc.NewFileReader(f); err == nil {
		var recs []arrow.RecordBatch
		for i := 0; i < fr.NumRecords(); i++ {
			rec, err := fr.RecordBatch(i)
			if err != nil {
				t.Fatal(err)
			}
			rec.Retain()
			recs = append(recs, rec)
		}
		rr, err = array.NewRecordReader(fr.Schema(), recs)
		if err != nil {
			t.Fatal(err)
		}
	} else {
		if _, err := f.Seek(0, 0); err != nil {
			t.Fatal(err)
		}
		sr, err := ipc.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		rr = sr
	}
	views++
	name := fmt.Sprintf("ipc_%d", views)
	release, err := ar.RegisterView(rr, name+"_view")
	if err != nil {
		t.Fatalf("%s: register in DuckDB: %v", path, err)
	}
	defer release()
	// A view of a record reader can be scanned once: keep it as a table.
	if _, err := conn.ExecContext(context.Background(), fmt.Sprintf("CREATE TABLE %s AS SELECT * FROM %s_view", name, name)); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return name
}
