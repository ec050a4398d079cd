package crf

// kern is goKernels for now.
var kern = goKernels
