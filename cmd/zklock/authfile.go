package main

import (
	"errors"
	"strings"
)

// maxAuthFile bounds what --auth-file reads: one SCHEME:CRED line.
const maxAuthFile = 64 << 10

// applyAuthFile reads --auth-file: one line SCHEME:CRED (a final newline
// allowed) from a regular file that the user running zklock (or root) owns
// and that no one else may read or write, as ssh requires of its keys.
// Together with --auth or ZKLOCK_AUTH it is a usage error. Errors name the
// file, never what is in it.
func applyAuthFile(c *config, file string) error {
	if file == "" {
		return nil
	}
	if c.auth != nil {
		return errors.New("give --auth (or ZKLOCK_AUTH) or --auth-file, not both")
	}
	b, err := readPrivate(file, maxAuthFile)
	if err != nil {
		return err
	}
	line := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if strings.ContainsAny(line, "\r\n") {
		return errors.New("more than one line: want one line SCHEME:CRED")
	}
	a, err := parseAuth(line)
	if err != nil {
		return err
	}
	c.auth = a
	return nil
}
