package main

import (
	"errors"
	"fmt"
	"io"
	"os"
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
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := checkPrivate(f); err != nil {
		return err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxAuthFile+1))
	switch {
	case err != nil:
		return err
	case len(b) > maxAuthFile:
		return fmt.Errorf("longer than %d bytes: want one line SCHEME:CRED", maxAuthFile)
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

// checkPrivate refuses a credentials file that is not a regular file, is
// owned by another user than the one running zklock (root excepted), or
// that its group or others may read or write.
func checkPrivate(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	if uid, ok := fileOwner(fi); ok && uid != os.Getuid() && uid != 0 {
		return fmt.Errorf("owned by uid %d, not by this user (uid %d) or root", uid, os.Getuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("permissions %04o are too open: it must be readable by its owner only (chmod 600 %s)", perm, f.Name())
	}
	return nil
}
