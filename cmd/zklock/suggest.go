package main

import (
	"fmt"
	"strings"
)

// suggest returns " (did you mean X?)" for the candidate nearest to s by
// edit distance, if one is near enough (at most a third of its length,
// and at most 2 edits), else "".
func suggest(s string, candidates []string, show func(string) string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), c)
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD == 0 || bestD > 2 || bestD*3 > max(len(best), len(s)) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", show(best))
}

// editDistance is the Damerau-Levenshtein distance of a and b (optimal
// string alignment: a swap of two neighbours counts one), bounded in cost
// by the lengths of command-line words.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 { // hostile input: bounded cost
		return 1 << 20
	}
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
