//go:build !dualcrf_testhook

package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/stage"
)

// installTestHook returns the stage's context: the signal test hook is
// built only with the dualcrf_testhook tag (testhook.go).
func installTestHook(c *cli.Context, o *stage.TrainOptions) context.Context { return c.Context }
