package interop

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/arrowio"
	_ "github.com/duckdb/duckdb-go/v2"
)

// bin is the dualcrf command built for these tests.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dualcrf-interop-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "dualcrf")
	build := exec.Command("go", "build", "-o", bin, "./cmd/dualcrf")
	build.Dir = repoRoot()
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	code := 1
	if build.Run() == nil {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// repoRoot is the core module's directory.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// testdata names a file of cmd/dualcrf/testdata (CoNLL-2000 slices).
func testdata(name string) string {
	return filepath.Join(repoRoot(), "cmd", "dualcrf", "testdata", name)
}

// dualcrf runs the command in dir and returns its standard output.
func dualcrf(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("dualcrf %s: %v\n%s", strings.Join(args, " "), err, errb.Bytes())
	}
	return out.Bytes()
}

// duck opens an in-memory DuckDB.
func duck(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// query1 runs a query of one row into dest.
func query1(t *testing.T, db *sql.DB, q string, dest ...any) {
	t.Helper()
	if err := db.QueryRow(q).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// writeTokens writes a CoNLL file as a token table.
func writeTokens(t *testing.T, conll, path string, format arrowio.Format, repeat int) int {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := WriteTokens(conll, f, format, repeat)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// evalJSON is the part of `dualcrf eval --json` compared here.
type evalJSON struct {
	Sentences, Tokens, CorrectTokens int
	Accuracy                         float64
	Chunks                           struct{ Precision, Recall, F1 float64 }
}

func parseEval(t *testing.T, b []byte) evalJSON {
	t.Helper()
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, b)
	}
	var e evalJSON
	e.Sentences = int(raw["sentences"].(float64))
	e.Tokens = int(raw["tokens"].(float64))
	e.CorrectTokens = int(raw["correct_tokens"].(float64))
	e.Accuracy = raw["accuracy"].(float64)
	for _, k := range []string{"overall", "chunks"} {
		if o, ok := raw[k].(map[string]any); ok {
			e.Chunks.Precision, _ = o["precision"].(float64)
			e.Chunks.Recall, _ = o["recall"].(float64)
			e.Chunks.F1, _ = o["f1"].(float64)
		}
	}
	return e
}

// ReadmeSQL is docs/lake.md's query over a prediction table and a scores
// table (docs/lake.md): per predicted label, its tokens and accuracy; the
// overall scores.
const (
	readmePredSQL   = `SELECT pred, count(*) AS tokens, avg((gold = pred)::INT) AS accuracy FROM 'pred.parquet' GROUP BY pred ORDER BY tokens DESC, pred`
	readmeScoresSQL = `SELECT tokens, accuracy, precision, recall, f1 FROM 'scores.parquet'`
)

// lakeRoundTrip runs the lake round trip on the CoNLL files train and
// test: token tables written as Parquet, partitioned by DuckDB (COPY …
// PARTITION_BY), featurized, trained, decoded to Parquet and queried in
// DuckDB; the scores must be those of the text path. It returns the eval
// figures.
func lakeRoundTrip(t *testing.T, train, test string, trainArgs ...string) evalJSON {
	dir := t.TempDir()
	db := duck(t)
	ntrain := writeTokens(t, train, filepath.Join(dir, "train-tokens.parquet"), arrowio.FormatParquet, 1)
	ntest := writeTokens(t, test, filepath.Join(dir, "test-tokens.parquet"), arrowio.FormatParquet, 1)
	// DuckDB writes a partitioned COPY on all its threads, interleaving
	// the rows of sentences (which featurize refuses, naming the row): one
	// thread and an ORDER BY keep each sentence's rows together.
	_, err := db.Exec(fmt.Sprintf(`SET threads = 1; COPY (
		SELECT *, 'train' AS split FROM read_parquet('%[1]s/train-tokens.parquet')
		UNION ALL SELECT *, 'test' AS split FROM read_parquet('%[1]s/test-tokens.parquet')
		ORDER BY split, sentence, position
	) TO '%[1]s/lake' (FORMAT parquet, PARTITION_BY (split))`, dir))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	query1(t, db, fmt.Sprintf(`SELECT count(*) FROM read_parquet('%s/lake/*/*.parquet', hive_partitioning = true) WHERE split = 'train'`, dir), &n)
	if n != ntrain {
		t.Fatalf("lake: %d train tokens, wrote %d", n, ntrain)
	}

	// The lake path: every table Parquet.
	args := append([]string{"train", "-q", "-o", "model.parquet", "--log", "log.parquet"}, trainArgs...)
	dualcrf(t, dir, "featurize", "--template", "chunking", "-o", "train.parquet", "lake/split=train")
	dualcrf(t, dir, append(args, "train.parquet")...)
	dualcrf(t, dir, "featurize", "--model", "model.parquet", "-o", "test.parquet", "lake/split=test")
	dualcrf(t, dir, "decode", "-m", "model.parquet", "-o", "pred.parquet", "test.parquet")
	lake := parseEval(t, dualcrf(t, dir, "eval", "--json", "--scores", "scores.parquet", "pred.parquet"))

	// The text path.
	args = append([]string{"train", "-q", "-o", "model.arrow"}, trainArgs...)
	dualcrf(t, dir, "featurize", "--template", "chunking", "-o", "train.arrow", train)
	dualcrf(t, dir, append(args, "train.arrow")...)
	dualcrf(t, dir, "featurize", "--model", "model.arrow", "-o", "test.arrow", test)
	dualcrf(t, dir, "decode", "-m", "model.arrow", "-o", "pred.arrow", "test.arrow")
	text := parseEval(t, dualcrf(t, dir, "eval", "--json", "pred.arrow"))
	if lake != text {
		t.Errorf("lake path scores %+v, text path %+v", lake, text)
	}
	if lake.Tokens != ntest {
		t.Errorf("eval scored %d tokens, the lake holds %d test tokens", lake.Tokens, ntest)
	}

	// docs/lake.md's SQL, in DuckDB, agrees with eval.
	if _, err := db.Exec(fmt.Sprintf("SET file_search_path = '%s'", dir)); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(readmePredSQL)
	if err != nil {
		t.Fatal(err)
	}
	var tokens, correct float64
	for rows.Next() {
		var pred string
		var k int
		var acc float64
		if err := rows.Scan(&pred, &k, &acc); err != nil {
			t.Fatal(err)
		}
		tokens += float64(k)
		correct += acc * float64(k)
	}
	rows.Close()
	if int(tokens) != lake.Tokens || math.Abs(correct-float64(lake.CorrectTokens)) > 1e-6 {
		t.Errorf("docs/lake.md SQL over pred.parquet: %v tokens, %v correct; eval: %d, %d", tokens, correct, lake.Tokens, lake.CorrectTokens)
	}
	var st int
	var acc, p, r, f1 float64
	query1(t, db, readmeScoresSQL, &st, &acc, &p, &r, &f1)
	if st != lake.Tokens || acc != lake.Accuracy || p != lake.Chunks.Precision || r != lake.Chunks.Recall || f1 != lake.Chunks.F1 {
		t.Errorf("docs/lake.md SQL over scores.parquet: %d %v %v %v %v; eval %+v", st, acc, p, r, f1, lake)
	}
	t.Logf("lake round trip: %d train, %d test tokens; accuracy %.6f, precision %.6f, recall %.6f, F1 %.6f (text path identical)",
		ntrain, ntest, lake.Accuracy, lake.Chunks.Precision, lake.Chunks.Recall, lake.Chunks.F1)
	return lake
}

// TestLakeRoundTrip: the lake round trip on the CoNLL-2000 slices in
// cmd/dualcrf/testdata. DUALCRF_LAKE_FULL=1 runs it on the whole of
// CoNLL-2000 from $DUALCRF_DATA (a few minutes).
func TestLakeRoundTrip(t *testing.T) {
	if os.Getenv("DUALCRF_LAKE_FULL") != "" {
		data := os.Getenv("DUALCRF_DATA")
		if data == "" {
			data = filepath.Join(repoRoot(), "data")
		}
		lakeRoundTrip(t, filepath.Join(data, "conll2000", "train.txt.gz"), filepath.Join(data, "conll2000", "test.txt.gz"))
		return
	}
	e := lakeRoundTrip(t, testdata("train150.txt"), testdata("test50.txt"))
	if e.Tokens != 1171 || e.Chunks.F1 <= 0.5 {
		t.Errorf("slice scores %+v", e)
	}
}

// TestReadmeSQL: the queries TestLakeRoundTrip runs are docs/lake.md's, word
// for word (so that the documented SQL is the SQL that was run).
func TestReadmeSQL(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(), "docs", "lake.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{readmePredSQL, readmeScoresSQL} {
		if !strings.Contains(string(b), q+";") {
			t.Errorf("docs/lake.md lacks the query %q", q)
		}
	}
}
