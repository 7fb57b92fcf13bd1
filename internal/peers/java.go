package peers

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ClassPath is the class path of the Newest generation; see
// Generation.ClassPath.
func ClassPath() string { return Newest().ClassPath() }

// CompileJava compiles class against the Newest generation; see
// Generation.CompileJava.
func CompileJava(class string, source []byte) (string, error) {
	return Newest().CompileJava(class, source)
}

// compileJava compiles the Java source of class (one file) against cp into
// a class directory under os.TempDir named by a digest of both.
func compileJava(class string, source []byte, cp string) (string, error) {
	javac, err := exec.LookPath("javac")
	if err != nil {
		return "", fmt.Errorf("javac not found (run `make deps`): %w", err)
	}
	dir := filepath.Join(os.TempDir(), "zklock-"+strings.ToLower(class)+"-"+Digest(source, []byte(cp)))
	if _, err := os.Stat(filepath.Join(dir, class+".class")); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "zklock-"+strings.ToLower(class)+"-build-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	src := filepath.Join(tmp, class+".java")
	if err := os.WriteFile(src, source, 0o600); err != nil {
		return "", err
	}
	classes := filepath.Join(tmp, "classes")
	out, err := exec.Command(javac, "-encoding", "UTF-8", "-Xlint:-path", "-cp", cp, "-d", classes, src).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("javac: %w\n%s", err, out)
	}
	// Another process may have won the race; its result is as good.
	if err := os.Rename(classes, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, class+".class")); statErr != nil {
			return "", err
		}
	}
	return dir, nil
}

// Digest is a short content hash, for cache file names.
func Digest(parts ...[]byte) string {
	h := sha256.New()
	for _, b := range parts {
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
