package main

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// shellWords splits a command line of the README: words separated by
// spaces, a double-quoted word kept whole (its quotes dropped), a "#"
// comment at the end dropped.
func shellWords(line string) []string {
	var words []string
	var w strings.Builder
	quoted, inWord := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case r == '#' && !quoted && !inWord:
			return words
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// Every zklock command line in the README's shell blocks is one the
// command accepts: it parses (flags, verb, PATH, CMD) and passes the
// verb's checks, as zklock would before connecting.
func TestREADMECommandLines(t *testing.T) {
	f, err := os.Open("../../README.md")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	in, n := false, 0
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "```sh":
			in = true
		case line == "```":
			in = false
		case in && strings.HasPrefix(line, "zklock "):
			n++
			args := shellWords(line)[1:]
			inv, err := parseArgs(args, envMap(nil))
			require.NoError(t, err, line)
			if inv.verb.check != nil {
				require.NoError(t, inv.verb.check(&inv.opts), line)
			}
		}
	}
	require.NoError(t, sc.Err())
	require.GreaterOrEqual(t, n, 5, "the README's zklock command lines")
}
