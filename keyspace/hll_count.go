package keyspace

import "math"

// The cardinality estimate: Otmar Ertl's improved raw estimator ("New
// cardinality estimation algorithms for HyperLogLog sketches",
// arXiv:1702.01284), computed from the histogram of register values, as
// Redis 7.0's hllCount does. The floating-point steps are written so that
// Go evaluates them in the same order and with the same roundings as
// Redis's C (no fused multiply-add: each product is rounded by an
// explicit conversion), so that PFCOUNT answers the same number.

// hllAlphaInf is 0.5/ln(2), the estimator's constant for m -> infinity.
var hllAlphaInf = 0.721347520444481703680

// hllHisto counts the registers of each value. Values above Q+1 can only
// come from a damaged dense value; they land in slots the estimate
// ignores, as in Redis.
type hllHisto [64]int

// denseHisto counts the dense registers r, four registers (three bytes)
// at a time.
func (h *hllHisto) dense(r []byte) {
	r = r[:hllRegBytes]
	for i := 0; i+2 < len(r); i += 3 {
		b0, b1, b2 := r[i], r[i+1], r[i+2]
		h[b0&63]++
		h[(b0>>6|b1<<2)&63]++
		h[(b1>>4|b2<<4)&63]++
		h[b2>>2]++
	}
}

// raw counts registers held one per byte (PFCOUNT's union of many keys).
func (h *hllHisto) raw(r []uint8) {
	for _, v := range r {
		h[v&63]++
	}
}

// sparse counts the registers of the sparse value b.
func (h *hllHisto) sparse(b []byte) error {
	return sparseEach(b, func(first, n int, val uint8) {
		h[val] += n
	})
}

// estimate is the cardinality the histogram gives.
func (h *hllHisto) estimate() uint64 {
	const m = float64(hllRegisters)
	z := m * hllTau((m-float64(h[hllQ+1]))/m)
	for j := hllQ; j >= 1; j-- {
		z += float64(h[j])
		z *= 0.5
	}
	z += m * hllSigma(float64(h[0])/m)
	return uint64(math.Round(hllAlphaInf * m * m / z))
}

// hllSigma is Ertl's sigma function: x + sum of x^(2^k) * 2^(k-1).
func hllSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x = float64(x * x)
		prev := z
		z = z + float64(x*y)
		y += y
		if z == prev {
			return z
		}
	}
}

// hllTau is Ertl's tau function.
func hllTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		d := float64((1 - x) * (1 - x))
		z = z - float64(d*y)
		if z == prev {
			return z / 3
		}
	}
}

// hllCount is the cardinality of the HyperLogLog b (dense or sparse).
func hllCount(b []byte) (uint64, error) {
	var h hllHisto
	if b[4] == hllDense {
		h.dense(b[hllHdrSize:])
	} else if err := h.sparse(b); err != nil {
		return 0, err
	}
	return h.estimate(), nil
}
