package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/modfile"
)

const repo = "../.."

// goCmd runs the go command in dir with env (nil: this process's), and
// returns its combined output, failing the test if it fails.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go %s in %s:\n%s", strings.Join(args, " "), dir, out)
	return string(out)
}

// withoutOurs returns a view of the module cache's download directory
// (a proxy's layout) without github.com/zklock: symbolic links to
// everything else in it, so that no version of ours can come from there.
func withoutOurs(t *testing.T, download string) string {
	t.Helper()
	view := t.TempDir()
	hosts, err := os.ReadDir(download)
	require.NoError(t, err)
	for _, h := range hosts {
		if h.Name() != "github.com" {
			require.NoError(t, os.Symlink(filepath.Join(download, h.Name()), filepath.Join(view, h.Name())))
			continue
		}
		owners, err := os.ReadDir(filepath.Join(download, "github.com"))
		require.NoError(t, err)
		require.NoError(t, os.Mkdir(filepath.Join(view, "github.com"), 0o755))
		for _, o := range owners {
			if o.Name() != "zklock" {
				require.NoError(t, os.Symlink(filepath.Join(download, "github.com", o.Name()), filepath.Join(view, "github.com", o.Name())))
			}
		}
	}
	return view
}

// offline returns the release version and the go command's environment
// for a user's module that fetches the repository's modules at that
// version, offline: GOPROXY is a directory that BuildProxy fills from this
// work tree, then the local module cache's download directory for the
// third-party modules, and nothing else; the module cache is a fresh one,
// so nothing comes from an earlier run.
func offline(t *testing.T) (string, []string) {
	t.Helper()
	version, err := Version(repo)
	require.NoError(t, err)
	root, err := filepath.Abs(repo)
	require.NoError(t, err)
	// The third-party modules the published ones need, in the local cache
	// (already there after the modules' own builds; fetched otherwise).
	for _, m := range Modules {
		goCmd(t, filepath.Join(root, m.Dir), nil, "mod", "download")
	}
	cache := strings.TrimSpace(goCmd(t, root, nil, "env", "GOMODCACHE"))
	thirdParty := withoutOurs(t, filepath.Join(cache, "cache", "download"))

	proxy := t.TempDir()
	require.NoError(t, BuildProxy(root, proxy, version))
	return version, append(os.Environ(),
		"GOPROXY=file://"+proxy+",file://"+thirdParty,
		"GOFLAGS=-mod=mod -modcacherw -trimpath", "GOSUMDB=off", "GONOSUMDB=", "GOPRIVATE=", "GONOPROXY=", "GOWORK=off",
		"GOTOOLCHAIN=local", "GOMODCACHE="+t.TempDir())
}

// The nested modules require the root module at the release version: a
// version the proxy will have once the tags are pushed, not a placeholder
// that only their replace directives (which Go ignores in a dependency)
// made work.
func TestNestedModulesRequireTheRelease(t *testing.T) {
	version, err := Version(repo)
	require.NoError(t, err)
	for _, m := range Modules[1:] {
		b, err := os.ReadFile(filepath.Join(repo, m.Dir, "go.mod"))
		require.NoError(t, err)
		f, err := modfile.Parse(m.Dir+"/go.mod", b, nil)
		require.NoError(t, err)
		require.Equal(t, m.Path, f.Module.Mod.Path)
		var got string
		for _, r := range f.Require {
			if r.Mod.Path == Root {
				got = r.Mod.Version
			}
		}
		require.Equal(t, version, got, "%s must require %s %s", m.Dir, Root, version)
	}
}

// Every published module resolves and builds for a user: the repository's
// modules at the release version are zipped into a module proxy directory,
// and in a fresh module of its own each is fetched with go get (the nested
// ones alone, as their users fetch them, without the root module asked
// for) and built, offline (see offline). The command installs with
// @latest and reports the version.
func TestPublishedModulesResolveOffline(t *testing.T) {
	version, env := offline(t)
	gobin := t.TempDir()
	env = append(env, "GOBIN="+gobin)

	for i, m := range Modules {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/user\n\ngo 1.26\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nimport _ \""+m.Path+"\"\n\nfunc main() {}\n"), 0o644))
		goCmd(t, dir, env, "get", m.Path+"@"+version)
		goCmd(t, dir, env, "build", "./...")
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		require.NoError(t, err)
		f, err := modfile.Parse("go.mod", b, nil)
		require.NoError(t, err)
		want := map[string]bool{m.Path: true, Root: true}
		for _, r := range f.Require {
			if want[r.Mod.Path] {
				require.Equal(t, version, r.Mod.Version, "module %d: %s in the user's go.mod", i, r.Mod.Path)
				delete(want, r.Mod.Path)
			}
		}
		require.Empty(t, want, "the user's go.mod lacks them:\n%s", b)
	}

	goCmd(t, gobin, env, "install", Root+"/cmd/zklock@latest")
	out, err := exec.Command(filepath.Join(gobin, "zklock"), "--version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.True(t, strings.HasPrefix(string(out), "zklock "+version+" "), "%s", out)
}

// scripts/release.sh, on a copy of this work tree committed in a fresh
// repository: it prints the commands that tag the root and the nested
// modules at the release version and push the tags; it refuses a dirty
// tree, library code the release soak did not run, and a version already
// tagged.
func TestReleaseScript(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is needed (make vet)")
	}
	version, err := Version(repo)
	require.NoError(t, err)
	files, err := gitFiles(repo)
	require.NoError(t, err)
	if files == nil {
		t.Skip("not a git work tree")
	}
	dir := t.TempDir()
	for _, p := range files {
		src := filepath.Join(repo, p)
		st, err := os.Lstat(src)
		if err != nil || !st.Mode().IsRegular() {
			continue // deleted in the work tree, or not a file
		}
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), b, st.Mode().Perm()))
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return string(out)
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "release test")
	// The release soak of this copy ran on its first commit's library code.
	results := filepath.Join(dir, "docs", "reliability-results.md")
	b, err := os.ReadFile(results)
	require.NoError(t, err)
	head := strings.TrimSpace(git("rev-parse", "HEAD"))
	soak := regexp.MustCompile(`(?m)^(\s*soak: code=)[0-9a-f]{40}`)
	require.Regexp(t, soak, string(b))
	require.NoError(t, os.WriteFile(results, soak.ReplaceAll(b, []byte("${1}"+head)), 0o644))
	git("commit", "-q", "-am", "the soak line")
	release := func() (string, error) {
		cmd := exec.Command(filepath.Join(dir, "scripts", "release.sh"), "--no-test")
		cmd.Env = append(ownMake(os.Environ()), "PLATFORMS="+runtime.GOOS+"/"+runtime.GOARCH) // one platform: make dist's own test builds all four
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := release()
	require.NoError(t, err, out)
	// The release's files, at its version.
	require.Contains(t, out, "release: dist/ holds 5 files of "+version+"; SHA256SUMS checked")
	bin := filepath.Join(dir, "dist", "zklock-"+runtime.GOOS+"-"+runtime.GOARCH)
	v, err := exec.Command(bin, "--version").CombinedOutput()
	require.NoError(t, err, "%s", v)
	require.True(t, strings.HasPrefix(string(v), "zklock "+version+" "), "%s", v)
	var want strings.Builder
	for _, m := range Modules {
		want.WriteString("  git tag -a " + m.Tag(version) + " -m 'zklock " + m.Tag(version) + "'\n")
	}
	require.Contains(t, out, "release: "+version+" at ")
	require.Contains(t, out, want.String())
	require.Contains(t, out, "  git push origin "+version+" zktest/containers/"+version+" contrib/prometheus/"+version+" contrib/otel/"+version+"\n")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "stray.txt"), []byte("x"), 0o644))
	out, err = release()
	require.Error(t, err)
	require.Contains(t, out, "release: the work tree is not clean")
	require.NoError(t, os.Remove(filepath.Join(dir, "stray.txt")))

	// Library code the soak did not run refuses the release.
	f, err := os.OpenFile(filepath.Join(dir, "doc.go"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("\n// A change after the soak.\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	git("commit", "-q", "-am", "library change")
	out, err = release()
	require.Error(t, err)
	require.Contains(t, out, "release: the library changed after the release soak on "+head[:12])
	git("reset", "-q", "--hard", "HEAD~1")

	git("tag", "zktest/containers/"+version)
	out, err = release()
	require.Error(t, err)
	require.Contains(t, out, "release: tag zktest/containers/"+version+" exists already")
}

// ownMake returns env without the variables by which a make passes its
// jobs and options to the makes it runs (make test runs this test as one
// of its stages, with -j and -O): the copy's make runs on its own, as a
// user's would, not as a job of ours waiting on our output lock.
func ownMake(env []string) []string {
	var out []string
	for _, kv := range env {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES":
		default:
			out = append(out, kv)
		}
	}
	return out
}
