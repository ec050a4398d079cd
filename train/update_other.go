//go:build !amd64

package train

// updateKernel is updateGo: there is no vector kernel for this architecture.
var updateKernel = updateGo

// momentsKernel is momentsGo: there is no vector kernel for this architecture.
var momentsKernel = momentsGo

// ratiosKernel is ratiosGo: there is no vector kernel for this architecture.
var ratiosKernel = ratiosGo

// evalBinsKernel is evalBinsGo: there is no vector kernel for this architecture.
var evalBinsKernel = evalBinsGo

// blockRowsKernel is blockRowsGo: there is no vector kernel for this architecture.
var blockRowsKernel = blockRowsGo
