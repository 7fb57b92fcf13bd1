package bench

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMedianInterval(t *testing.T) {
	// benchmath needs 6 values for a two-sided 95% interval of a median
	// (with 5 the lower end is unbounded); with 6 it is the smallest and
	// the largest.
	five := medianInterval([]float64{1.0, 1.1, 0.9, 1.2, 1.05})
	require.Equal(t, 1.05, five.X)
	require.True(t, unbounded(five.Lo))
	require.Equal(t, "1.05 [-inf, 1.20]", five.String())
	require.Equal(t, "1.00 [-inf, +inf]", medianInterval([]float64{1}).String())
	six := medianInterval([]float64{1.0, 1.1, 0.9, 1.2, 1.05, 0.95})
	require.Equal(t, 0.9, six.Lo)
	require.Equal(t, 1.2, six.Hi)
	require.Equal(t, 6, six.N)
	require.Zero(t, medianInterval(nil).N)
}

// TestJudge: the goals' verdicts on intervals, both directions.
func TestJudge(t *testing.T) {
	spread := []float64{0.90, 0.95, 1.00, 1.05, 1.10, 1.15} // median 1.025, interval [0.90, 1.15]
	for _, tc := range []struct {
		name    string
		iv      Interval
		goal    float64
		atLeast bool
		verdict string
		need    func(int) bool
	}{
		{"met: the lower end clears it", medianInterval([]float64{1.1, 1.2, 1.15, 1.3, 1.25, 1.12}), 1.0, true, Met, nil},
		{"met at the goal itself", medianInterval([]float64{1, 1, 1, 1, 1, 1}), 1.0, true, Met, nil},
		{"not met: the upper end is below", medianInterval([]float64{0.8, 0.85, 0.9, 0.82, 0.88, 0.86}), 1.0, true, NotMet, nil},
		{"unresolved: straddles, more repetitions resolve it", medianInterval(spread), 0.95, true, Unresolved,
			func(n int) bool { return n > 6 && n <= maxProjected }},
		{"unresolved: the median sits on the goal", medianInterval([]float64{0.9, 0.95, 1.0, 1.0, 1.05, 1.1}), 1.0, true, Unresolved,
			func(n int) bool { return n == 0 }},
		{"unresolved: too few repetitions for any interval", medianInterval([]float64{1.3, 1.4, 1.35}), 1.0, true, Unresolved,
			func(n int) bool { return n == 6 }},
		{"at most, met: the upper end is below", medianInterval([]float64{3, 4, 3.5, 4.2, 3.8, 3.1}), 5, false, Met, nil},
		{"at most, not met: the lower end is above", medianInterval([]float64{6, 7, 6.5, 7.2, 6.8, 6.1}), 5, false, NotMet, nil},
		{"at most, unresolved", medianInterval([]float64{4, 4.5, 5, 5.5, 6, 6.5}), 4.5, false, Unresolved,
			func(n int) bool { return n > 6 && n <= 20 }},
		{"a bootstrap interval straddling: no projection", Interval{N: 30, X: 0.5, Lo: -1, Hi: 2}, 0, false, Unresolved,
			func(n int) bool { return n == 0 }},
		{"nothing measured", Interval{}, 1, true, Unresolved, func(n int) bool { return n == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, need := judge(tc.iv, tc.goal, tc.atLeast)
			require.Equal(t, tc.verdict, v)
			if tc.need == nil {
				require.Zero(t, need)
			} else {
				require.True(t, tc.need(need), "need %d", need)
			}
		})
	}
}

// TestJudgeProjection: the projected sample size does resolve the goal.
func TestJudgeProjection(t *testing.T) {
	vals := []float64{0.90, 0.95, 1.00, 1.05, 1.10, 1.15}
	_, need := judge(medianInterval(vals), 0.95, true)
	v, _ := judge(medianInterval(atQuantiles(vals, need)), 0.95, true)
	require.Equal(t, Met, v)
	v, _ = judge(medianInterval(atQuantiles(vals, need-1)), 0.95, true)
	require.Equal(t, Unresolved, v)
}

func TestBootstrap(t *testing.T) {
	a := []float64{5, 5.2, 4.9, 5.1, 5.3, 5.0, 4.8, 5.2}
	b := []float64{10, 10.5, 9.8, 10.2, 10.1, 9.9, 10.3, 10.0}
	iv := bootstrap(a, b, medianDiff)
	require.InDelta(t, -5, iv.X, 0.2)
	require.Less(t, iv.Hi, 0.0)
	require.Equal(t, iv, bootstrap(a, b, medianDiff), "a fixed seed")
	ones := []float64{1, 1, 1, 1, 1, 1}
	same := bootstrap(ones, ones, meanDiff)
	require.Equal(t, [3]float64{0, 0, 0}, [3]float64{same.X, same.Lo, same.Hi})
	few := bootstrap(ones[:3], ones, meanDiff)
	require.True(t, unbounded(few.Lo) && unbounded(few.Hi), "too few to resample")
	require.Zero(t, bootstrap(nil, b, medianDiff).N)
}

func TestAgreement(t *testing.T) {
	a := map[string]Interval{"x": {N: 6, X: 1, Lo: 0.9, Hi: 1.1}, "y": {N: 6, X: 2, Lo: 1.9, Hi: 2.1}, "only-a": {N: 6, X: 1}}
	b := map[string]Interval{"x": {N: 6, X: 1.05, Lo: 0.95, Hi: 1.2}, "y": {N: 6, X: 2.5, Lo: 2.4, Hi: 2.6}}
	in, n, misses := agreement(a, b)
	require.Equal(t, 1, in)
	require.Equal(t, 2, n)
	require.Len(t, misses, 1)
	require.Contains(t, misses[0], "y")
}

// TestRatioIntervals: ratios pair repetition i with repetition i.
func TestRatioIntervals(t *testing.T) {
	var recs []Record
	for rep := range 6 {
		slow := 1 + float64(rep%2) // every other repetition the machine is twice as slow
		recs = append(recs,
			Record{Target: ZklockMutex, Measure: measureCont, Setup: Standalone, Rep: rep, Run: &Run{PerSec: 1200 / slow}},
			Record{Target: GoZKLock, Measure: measureCont, Setup: Standalone, Rep: rep, Run: &Run{PerSec: 1000 / slow}})
	}
	iv := ratioIntervals(recs)["contended zklock/gozk"]
	require.InDelta(t, 1.2, iv.X, 1e-9)
	require.InDelta(t, 1.2, iv.Lo, 1e-9)
	require.InDelta(t, 1.2, iv.Hi, 1e-9)
	require.False(t, math.IsNaN(iv.X))
}

// TestRepeatInterval: two runs whose repetitions come from one and the
// same distribution (a machine that does not change between runs) find
// each other's median inside their own interval, both ways, for the
// honesty goal's share of the ratios with repeatInterval, and not with
// benchmath's interval of the median alone, at any number of repetitions.
func TestRepeatInterval(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 90))
	draw := map[string]func() float64{
		"normal":    func() float64 { return 1 + 0.1*r.NormFloat64() },
		"lognormal": func() float64 { return math.Exp(0.3 * r.NormFloat64()) },
		"bursts": func() float64 { // now and then a repetition hit by a burst of load
			if r.IntN(8) == 0 {
				return 0.6 + 0.1*r.Float64()
			}
			return 1 + 0.05*r.NormFloat64()
		},
	}
	agree := func(n int, interval func([]float64) Interval, x func() float64) float64 {
		const trials = 1500
		in := 0
		for range trials {
			var a, b []float64
			for range n {
				a, b = append(a, x()), append(b, x())
			}
			p, q := interval(a), interval(b)
			if p.X >= q.Lo && p.X <= q.Hi && q.X >= p.Lo && q.X <= p.Hi {
				in++
			}
		}
		return float64(in) / trials
	}
	for _, n := range []int{6, 8, 10} {
		for name, x := range draw {
			ci, rep := agree(n, medianInterval, x), agree(n, repeatInterval, x)
			t.Logf("%d repetitions, %s: %.1f%% agree with benchmath's interval, %.1f%% with repeatInterval", n, name, 100*ci, 100*rep)
			require.Less(t, ci, honestShare, "%d %s: benchmath's interval", n, name)
			require.GreaterOrEqual(t, rep, honestShare, "%d %s: repeatInterval", n, name)
		}
	}
	iv := repeatInterval([]float64{1, 2, 3, 4, 5, 6})
	require.Equal(t, [2]float64{1, 6}, [2]float64{iv.CILo, iv.CIHi}, "benchmath's interval is kept")
	require.LessOrEqual(t, iv.Lo, iv.CILo)
	require.GreaterOrEqual(t, iv.Hi, iv.CIHi)
}
