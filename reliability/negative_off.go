//go:build !zklock_negative

package reliability

// NegativeBuild reports whether the negative controls are compiled in
// (build tag zklock_negative). Test-only: see negative_on.go.
const NegativeBuild = false

func setNegative(string) {}
