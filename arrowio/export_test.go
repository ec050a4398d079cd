package arrowio

// Exported for the external tests (package arrowio_test).
var (
	WriteBatches = writeBatches
	ReadAll      = readAll
	WantRows     = wantRows
)
