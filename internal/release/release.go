// Package release checks the repository's published modules as their
// users fetch them: each at the release version, zipped as the Go module
// proxy serves it, resolved with go get in a module of its own. It is its
// own module (unpublished) so that golang.org/x/mod is no requirement of
// the library's; scripts/release.sh runs its test before printing the
// tags to push.
package release

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"
)

// Root is the library's module path.
const Root = "github.com/zklock/zklock"

// A Module is one published module of the repository: its path, and its
// directory relative to the repository's root.
type Module struct {
	Path, Dir string
}

// Modules are the published modules, the root first. A nested module's tag
// is its directory followed by the version (zktest/containers/v0.1.0).
var Modules = []Module{
	{Root, "."},
	{Root + "/zktest/containers", "zktest/containers"},
	{Root + "/contrib/prometheus", "contrib/prometheus"},
	{Root + "/contrib/otel", "contrib/otel"},
}

// Tag is the tag that publishes m at version.
func (m Module) Tag(version string) string {
	if m.Dir == "." {
		return version
	}
	return m.Dir + "/" + version
}

var heading = regexp.MustCompile(`^## (v\d+\.\d+\.\d+)\b`)

// Version is the release version: the first "## vX.Y.Z" heading of root's
// CHANGELOG.md.
func Version(root string) (string, error) {
	f, err := os.Open(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := heading.FindStringSubmatch(sc.Text()); m != nil {
			if !semver.IsValid(m[1]) {
				return "", fmt.Errorf("release: CHANGELOG.md: %s is not a semantic version", m[1])
			}
			return m[1], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("release: CHANGELOG.md has no \"## vX.Y.Z\" heading")
}

// BuildProxy writes, in dir, a module proxy (the layout GOPROXY=file://dir
// reads) serving every module of Modules at version, zipped from root's
// files with golang.org/x/mod/zip: the files git tracks or would track
// (uncommitted changes included, ignored files left out), or every file if
// root is not a git work tree.
func BuildProxy(root, dir, version string) error {
	files, err := gitFiles(root)
	if err != nil {
		return err
	}
	at := time.Now().UTC().Format(time.RFC3339)
	for _, m := range Modules {
		esc, err := module.EscapePath(m.Path)
		if err != nil {
			return err
		}
		vdir := filepath.Join(dir, filepath.FromSlash(esc), "@v")
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			return err
		}
		mod, err := os.ReadFile(filepath.Join(root, m.Dir, "go.mod"))
		if err != nil {
			return err
		}
		info, _ := json.Marshal(map[string]string{"Version": version, "Time": at})
		for name, b := range map[string][]byte{"list": []byte(version + "\n"), version + ".info": info, version + ".mod": mod} {
			if err := os.WriteFile(filepath.Join(vdir, name), b, 0o644); err != nil {
				return err
			}
		}
		if err := writeZip(filepath.Join(vdir, version+".zip"), module.Version{Path: m.Path, Version: version}, root, m.Dir, files); err != nil {
			return fmt.Errorf("release: zip %s: %w", m.Path, err)
		}
	}
	return nil
}

// writeZip zips module m from root/dir: the files listed (paths relative to
// root), or, with none listed, the whole directory.
func writeZip(name string, m module.Version, root, dir string, files []string) (err error) {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	base := filepath.Join(root, dir)
	if files == nil {
		return zip.CreateFromDir(f, m, base)
	}
	prefix := ""
	if dir != "." {
		prefix = dir + "/"
	}
	var in []zip.File
	for _, p := range files {
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		rel := strings.TrimPrefix(p, prefix)
		if _, err := os.Lstat(filepath.Join(base, rel)); err != nil {
			continue // deleted in the work tree
		}
		in = append(in, diskFile{rel: rel, path: filepath.Join(base, rel)})
	}
	return zip.Create(f, m, in) // leaves out the nested modules' files
}

// gitFiles lists root's files as git sees them (tracked, and untracked but
// not ignored), relative to root; nil if root is not a git work tree.
func gitFiles(root string) ([]string, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) || errors.Is(err, exec.ErrNotFound) {
			return nil, nil // not a work tree, or no git: the whole directory
		}
		return nil, err
	}
	var files []string
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			files = append(files, string(p))
		}
	}
	return files, nil
}

// diskFile is a zip.File read from the file system.
type diskFile struct{ rel, path string }

func (f diskFile) Path() string                 { return f.rel }
func (f diskFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.path) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.path) }
