//go:build !amd64 || purego

package crf

// kern is goKernels: there are no vector kernels for this architecture.
var kern = goKernels
