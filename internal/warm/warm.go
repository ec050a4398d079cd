package warm

import (
	_ "github.com/apache/arrow-go/v18/arrow/ipc"
	_ "github.com/apache/arrow-go/v18/parquet/pqarrow"
	_ "github.com/klauspost/compress/zstd"
	_ "github.com/urfave/cli/v2"
	_ "gonum.org/v1/gonum/optimize"
	_ "golang.org/x/sys/unix"
)
