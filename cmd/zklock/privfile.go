package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"syscall"
)

// openNonblock opens name for reading without blocking (O_NONBLOCK: a
// FIFO with no writer, or a device, does not hang the start-up) and
// refuses what is not a regular file at once.
func openNonblock(name string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is not a regular file (%s)", name, fileKind(fi.Mode()))
	}
	return f, fi, nil
}

// fileKind names what a file that is not a regular one is.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m.IsDir():
		return "a directory"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// readRegular reads at most max bytes of the regular file name, opened
// without blocking.
func readRegular(name string, max int64) ([]byte, error) {
	f, _, err := openNonblock(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readMax(f, max)
}

func readMax(f *os.File, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is longer than %d bytes", f.Name(), max)
	}
	return b, nil
}

// readPrivate reads at most max bytes of a credentials file: a regular
// file (opened without blocking), owned by the user running zklock or
// root, that its group and others may not read or write.
func readPrivate(name string, max int64) ([]byte, error) {
	f, fi, err := openNonblock(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := checkPrivate(name, fi); err != nil {
		return nil, err
	}
	return readMax(f, max)
}

// checkPrivate refuses a credentials file owned by another user than the
// one running zklock (root excepted), or that its group or others may
// read or write.
func checkPrivate(name string, fi os.FileInfo) error {
	if uid, ok := fileOwner(fi); ok && uid != os.Getuid() && uid != 0 {
		return fmt.Errorf("%s is owned by uid %d, not by this user (uid %d) or root", name, uid, os.Getuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("permissions %04o for %s are too open: it must not be accessible by group or others (chmod 600 %s)", perm, name, name)
	}
	return nil
}

// maxPEMFile bounds what a certificate, key or CA file reads.
const maxPEMFile = 4 << 20

// loadKeyPair is tls.LoadX509KeyPair, its files opened without blocking.
func loadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := readRegular(certFile, maxPEMFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := readRegular(keyFile, maxPEMFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}
