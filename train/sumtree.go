package train

// Complete binary trees over n non-negative leaf weights, stored flat: node k has children 2k and 2k+1,
// the root is node 1, and leaf i is node size+i where size is the smallest power of two ≥ n (the padding
// leaves hold 0). Every update recomputes the nodes on the leaf's path from their two children rather than
// adding a delta, so a node is always exactly fl(left + right): no drift accumulates, however many updates.

// sumTree keeps partial sums: O(log n) update, O(log n) proportional draw, O(1) total.
type sumTree struct {
	size int
	node []float64
}

// newSumTree returns a tree over n leaves of weight 0.
func newSumTree(n int) *sumTree {
	size := 1
	for size < n {
		size *= 2
	}
	return &sumTree{size: size, node: make([]float64, 2*size)}
}

// total is the sum of all leaves.
func (t *sumTree) total() float64 { return t.node[1] }

// weight is leaf i.
func (t *sumTree) weight(i int) float64 { return t.node[t.size+i] }

// set makes leaf i equal to w (w ≥ 0, finite) and repairs the sums above it.
func (t *sumTree) set(i int, w float64) {
	k := t.size + i
	t.node[k] = w
	for k > 1 {
		k /= 2
		t.node[k] = t.node[2*k] + t.node[2*k+1]
	}
}

// fill replaces all leaves with w[0..n) (each ≥ 0, finite) and rebuilds the sums in O(n).
func (t *sumTree) fill(w []float64) {
	leaves := t.node[t.size:]
	copy(leaves, w)
	clear(leaves[len(w):])
	for k := t.size - 1; k >= 1; k-- {
		t.node[k] = t.node[2*k] + t.node[2*k+1]
	}
}

// sample returns a leaf drawn with probability proportional to its weight, using r ∈ [0,1) as the
// uniform variate; it returns -1 when the total is 0. It never returns a leaf of weight 0: a node of
// positive weight has at least one child of positive weight, and the descent only enters such children,
// even when rounding puts the target at or past a boundary.
func (t *sumTree) sample(r float64) int {
	if !(t.node[1] > 0) {
		return -1
	}
	u := r * t.node[1]
	k := 1
	for k < t.size {
		left, right := t.node[2*k], t.node[2*k+1]
		switch {
		case right == 0:
			k = 2 * k
		case left == 0 || u >= left:
			u -= left
			k = 2*k + 1
		default:
			k = 2 * k
		}
	}
	return k - t.size
}

// maxTree keeps, at every node, the leaf index of the largest weight below it (ties → smallest index):
// O(log n) update, O(1) argmax. Padding leaves point at index -1 and never win.
type maxTree struct {
	size int
	w    []float64 // leaf weights, length n
	arg  []int     // arg[k] = argmax leaf under node k, or -1
}

// newMaxTree returns a tree over n leaves of weight 0.
func newMaxTree(n int) *maxTree {
	size := 1
	for size < n {
		size *= 2
	}
	t := &maxTree{size: size, w: make([]float64, n), arg: make([]int, 2*size)}
	t.fill(t.w)
	return t
}

// argmax is the index of the largest leaf, the smallest such index on ties.
func (t *maxTree) argmax() int { return t.arg[1] }

// set makes leaf i equal to w and repairs the path above it.
func (t *maxTree) set(i int, w float64) {
	t.w[i] = w
	for k := (t.size + i) / 2; k >= 1; k /= 2 {
		t.arg[k] = t.better(t.arg[2*k], t.arg[2*k+1])
	}
}

// fill replaces all leaves with w (length n) and rebuilds the tree in O(n).
func (t *maxTree) fill(w []float64) {
	copy(t.w, w)
	for k := range t.size {
		t.arg[t.size+k] = -1
		if k < len(t.w) {
			t.arg[t.size+k] = k
		}
	}
	for k := t.size - 1; k >= 1; k-- {
		t.arg[k] = t.better(t.arg[2*k], t.arg[2*k+1])
	}
}

// better picks the larger of leaves a < b (either may be -1, absent); ties go to a, the smaller index.
func (t *maxTree) better(a, b int) int {
	switch {
	case b < 0:
		return a
	case a < 0:
		return b
	case t.w[b] > t.w[a]:
		return b
	default:
		return a
	}
}
