// Package train fits chain CRF weights by minimising the ℓ2-regularised
// negative log-likelihood
//
//	P(w) = λ/2 ‖w‖² + (1/n) Σ_i [log Z_i(w) − w·F(x_i,y_i)]
//
// (with Problem.L1, the elastic net's λ₁‖w‖₁ too: proximal SDCA in
// elastic.go, OWL-QN in owlqn.go)
// with SDCA (stochastic dual coordinate ascent on the dual
// D(μ) = −λ/2 ‖ŵ(μ)‖² + (1/n) Σ_i H̃(μ_i), Le Priol et al. 2018), with the
// paper's peers OEG and SAG, or with L-BFGS as a reference; and the
// structural SVM's Hamming hinge loss with BCFW (block-coordinate
// Frank–Wolfe, SDCA-GAP's structured twin: the same samplers and a
// certified gap).
//
// The driver (Train) owns the loop, limits, stopping rules, certificates,
// logging, cancellation and the policies — when to refresh the gap
// estimates (Settings.RefreshEvery), when to checkpoint, and resuming from
// a checkpoint in one call (Settings.Resume); a Method owns only its
// mathematics, as in gonum/optimize.
//
// Each method declares itself (Describer): its name and loss, its
// settings — field, name, default, range, help — the options of a run it
// reads and the facts a model records of it. Methods lists them; a program
// iterates over it (flags, checks, the copy a run trains, ForLoss's choice
// of a method for a loss) instead of naming the methods, and asks a method
// for what it can do beyond Method through the exported interfaces of
// capability.go.
//
// SDCA and BCFW draw their sentences from a Sampler a user can supply
// (NewSampler makes the kinds the CLI names). The inner loops are kernels
// (kernels.go) with vector versions for amd64 (kernels_amd64.s).
package train
