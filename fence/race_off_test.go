//go:build !race

package fence_test

const raceDetector = false
