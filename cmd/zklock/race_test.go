//go:build race

package main

// raceEnabled: the tests run under -race, so the zklock binary they run is
// built with -race too, and its stderr is checked for race reports.
const raceEnabled = true
