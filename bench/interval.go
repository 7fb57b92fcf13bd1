package bench

import (
	"math"
	"math/rand/v2"
	"slices"

	"golang.org/x/perf/benchmath"
)

// confidence is the level of every interval the suite reports.
const confidence = 0.95

// minBootstrap is the fewest values per side bootstrap resamples.
const minBootstrap = 6

// Interval is a figure with a 95% interval. For a RATIO line it is the
// median of the per-repetition ratios (repetition i of zklock over
// repetition i of the peer, which ran in the same round, seconds apart) and
// where another run's median should fall (repeatInterval); for a failover
// median, benchmath's distribution-free interval for the median (the
// AssumeNothing summary that benchstat prints). Lo and Hi are ±Inf when the
// sample is too small for the level (benchmath needs 6 values for 95%).
type Interval struct {
	N      int       `json:"n"` // values behind it; 0: none (X, Lo, Hi meaningless)
	X      float64   `json:"x"`
	Lo     float64   `json:"lo"`
	Hi     float64   `json:"hi"`
	Values []float64 `json:"values,omitempty"` // the sample, ascending
	// CILo and CIHi are benchmath's interval for the median, where Lo and
	// Hi are a wider one (repeatInterval); otherwise zero.
	CILo float64 `json:"ci_lo,omitempty"`
	CIHi float64 `json:"ci_hi,omitempty"`
	// Repeat marks an interval of repeatInterval.
	Repeat bool `json:"repeat,omitempty"`
}

// finite stands for an infinite bound by ±math.MaxFloat64, which JSON can
// encode (it has no infinities).
func finite(x float64) float64 {
	switch {
	case math.IsInf(x, 1):
		return math.MaxFloat64
	case math.IsInf(x, -1):
		return -math.MaxFloat64
	}
	return x
}

// unbounded reports whether x is an infinite bound, also after a JSON round
// trip (finite).
func unbounded(x float64) bool { return math.IsInf(x, 0) || math.Abs(x) == math.MaxFloat64 }

// medianInterval is benchmath's median and 95% interval of xs.
func medianInterval(xs []float64) Interval {
	if len(xs) == 0 {
		return Interval{Lo: -math.MaxFloat64, Hi: math.MaxFloat64}
	}
	s := benchmath.NewSample(slices.Clone(xs), &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(s, confidence)
	return Interval{N: len(xs), X: sum.Center, Lo: finite(sum.Lo), Hi: finite(sum.Hi), Values: s.Values}
}

// pairedRatios is the per-repetition ratios a[i]/b[i] over the repetitions
// both have (keys are repetition numbers).
func pairedRatios(a, b map[int]float64) []float64 {
	var out []float64
	for rep, x := range a {
		if y, ok := b[rep]; ok && y > 0 {
			out = append(out, x/y)
		}
	}
	slices.Sort(out)
	return out
}

// Verdicts of a goal judged on an interval.
const (
	Met        = "met"
	NotMet     = "NOT MET"
	Unresolved = "unresolved"
)

// maxProjected bounds the repetitions judge projects.
const maxProjected = 100

// judge judges the goal "figure >= goal" (atLeast) or "figure <= goal" on
// iv: met only when the whole interval is on the goal's side, not met only
// when it is wholly on the other, otherwise unresolved. For an unresolved
// goal need is the number of values that would resolve it if further ones
// spread as these do (the smallest n whose interval, from n values at the
// sample's quantiles, excludes the goal); 0 when not within maxProjected.
func judge(iv Interval, goal float64, atLeast bool) (verdict string, need int) {
	lo, hi := iv.Lo, iv.Hi
	if !atLeast { // judge -x >= -goal
		lo, hi, goal = -hi, -lo, -goal
	}
	switch {
	case iv.N == 0:
		return Unresolved, 0
	case !unbounded(lo) && lo >= goal:
		return Met, 0
	case !unbounded(hi) && hi < goal:
		return NotMet, 0
	}
	vals := iv.Values
	if len(vals) == 0 { // a bootstrap interval: no sample to project
		return Unresolved, 0
	}
	build := medianInterval
	if iv.Repeat {
		build = repeatInterval
	}
	for n := len(vals) + 1; n <= maxProjected; n++ {
		p := build(atQuantiles(vals, n))
		plo, phi := p.Lo, p.Hi
		if !atLeast {
			plo, phi = -phi, -plo
		}
		if (!unbounded(plo) && plo >= goal) || (!unbounded(phi) && phi < goal) {
			return Unresolved, n
		}
	}
	return Unresolved, 0
}

// atQuantiles is n values at the quantiles (i-0.5)/n of the sorted sample
// vals, linearly interpolated: a larger sample with the same spread.
func atQuantiles(vals []float64, n int) []float64 {
	s := slices.Clone(vals)
	slices.Sort(s)
	out := make([]float64, n)
	for i := range out {
		q := (float64(i) + 0.5) / float64(n) * float64(len(s)-1)
		k := int(q)
		if k >= len(s)-1 {
			out[i] = s[len(s)-1]
			continue
		}
		out[i] = s[k] + (q-float64(k))*(s[k+1]-s[k])
	}
	return out
}

// bootstrap is the 95% percentile-bootstrap interval of stat(a, b), a and b
// resampled independently with replacement (10,000 times, a fixed seed so
// that a report is reproducible from its raw numbers). It is used where
// benchmath has no interval: a difference between two recipes' failover
// figures. With fewer than minBootstrap values on a side the interval is
// unbounded (a resample of a handful says little).
func bootstrap(a, b []float64, stat func(a, b []float64) float64) Interval {
	if len(a) == 0 || len(b) == 0 {
		return Interval{Lo: -math.MaxFloat64, Hi: math.MaxFloat64}
	}
	x := stat(a, b)
	if len(a) < minBootstrap || len(b) < minBootstrap {
		return Interval{N: len(a) + len(b), X: x, Lo: -math.MaxFloat64, Hi: math.MaxFloat64}
	}
	const rounds = 10000
	rng := rand.New(rand.NewPCG(28, uint64(len(a)*1000+len(b))))
	ra, rb := make([]float64, len(a)), make([]float64, len(b))
	out := make([]float64, rounds)
	for i := range out {
		for j := range ra {
			ra[j] = a[rng.IntN(len(a))]
		}
		for j := range rb {
			rb[j] = b[rng.IntN(len(b))]
		}
		out[i] = stat(ra, rb)
	}
	slices.Sort(out)
	return Interval{N: len(a) + len(b), X: x, Lo: out[int(0.025*rounds)], Hi: out[int(0.975*rounds)-1]}
}

// mean of xs, 0 if empty.
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// medianDiff and meanDiff are statistics for bootstrap.
func medianDiff(a, b []float64) float64 { return median(a) - median(b) }
func meanDiff(a, b []float64) float64   { return mean(a) - mean(b) }

// repeatInterval is a RATIO line's interval: where the median of another
// run of the same code, with as many repetitions, is expected to fall
// (95%), never narrower than benchmath's interval for this run's median
// (kept in CILo and CIHi). A confidence interval of a median does not say
// that: two runs drawn from one distribution find each other's median
// inside their own interval only about 80% of the time, at any number of
// repetitions (TestRepeatInterval). The spread between two runs' medians is
// estimated from this run's repetitions, on the logarithm of the ratios:
// benchmath's Student-t interval of the mean, widened by sqrt(pi/2) (a
// median's spread against a mean's, for normal values) and by sqrt(2) (the
// difference of two runs' medians).
func repeatInterval(xs []float64) Interval {
	iv := medianInterval(xs)
	iv.CILo, iv.CIHi, iv.Repeat = iv.Lo, iv.Hi, true
	logs := make([]float64, 0, len(xs))
	for _, x := range xs {
		if x <= 0 {
			return iv
		}
		logs = append(logs, math.Log(x))
	}
	if len(logs) < 2 {
		return iv
	}
	sum := benchmath.AssumeNormal.Summary(benchmath.NewSample(logs, &benchmath.DefaultThresholds), confidence)
	half := (sum.Hi - sum.Center) * math.Sqrt(math.Pi/2) * math.Sqrt2
	if math.IsNaN(half) || math.IsInf(half, 0) {
		return iv
	}
	m := math.Log(iv.X)
	iv.Lo, iv.Hi = min(iv.Lo, math.Exp(m-half)), max(iv.Hi, math.Exp(m+half))
	return iv
}
