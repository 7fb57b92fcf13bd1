package zktest

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mkJar writes a jar at path whose manifest names classPath.
func mkJar(t *testing.T, path string, classPath ...string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	w, err := zw.Create("META-INF/MANIFEST.MF")
	require.NoError(t, err)
	mf := "Manifest-Version: 1.0\r\n"
	if len(classPath) > 0 {
		// Wrapped at 72 bytes as jar tools do: continuation lines start with a space.
		line := "Class-Path: " + strings.Join(classPath, " ")
		for len(line) > 70 {
			mf += line[:70] + "\r\n"
			line = " " + line[70:]
		}
		mf += line + "\r\n"
	}
	_, err = w.Write([]byte(mf + "\r\n"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
}

func touch(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
	}
}

func symlink(t *testing.T, target, name string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
	require.NoError(t, os.Symlink(target, name))
}

func base(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// Each layout users have ZooKeeper in is found, with its release and a
// class path that puts the jute jar first.
func TestFindLayouts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, root string) // makes the layout under root
		home    string                          // ZOOKEEPER_HOME, under root; "" unset
		path    string                          // PATH, under root
		version string
		jars    []string
		where   string // a part of install.where
	}{{
		name: "release in ZOOKEEPER_HOME",
		setup: func(t *testing.T, r string) {
			touch(t, r+"/zk/lib/zookeeper-3.9.2.jar", r+"/zk/lib/zookeeper-jute-3.9.2.jar", r+"/zk/lib/slf4j-api-1.7.30.jar", r+"/zk/bin/zkServer.sh")
		},
		home: "zk", version: "3.9.2",
		jars:  []string{"zookeeper-jute-3.9.2.jar", "slf4j-api-1.7.30.jar", "zookeeper-3.9.2.jar"},
		where: "ZOOKEEPER_HOME=",
	}, {
		name: "3.4 release: server jar beside lib",
		setup: func(t *testing.T, r string) {
			touch(t, r+"/zk/zookeeper-3.4.14.jar", r+"/zk/lib/log4j-1.2.17.jar")
		},
		home: "zk", version: "3.4.14", jars: []string{"log4j-1.2.17.jar", "zookeeper-3.4.14.jar"},
	}, {
		name: "Homebrew prefix in ZOOKEEPER_HOME",
		setup: func(t *testing.T, r string) {
			touch(t, r+"/Cellar/zookeeper/3.9.3/libexec/lib/zookeeper-3.9.3.jar")
		},
		home: "Cellar/zookeeper/3.9.3", version: "3.9.3", jars: []string{"zookeeper-3.9.3.jar"},
	}, {
		name: "tarball: bin/zkServer.sh on PATH",
		setup: func(t *testing.T, r string) {
			touch(t, r+"/opt/zk/bin/zkServer.sh", r+"/opt/zk/lib/zookeeper-3.8.4.jar", r+"/opt/zk/lib/zookeeper-jute-3.8.4.jar")
		},
		path: "opt/zk/bin", version: "3.8.4", jars: []string{"zookeeper-jute-3.8.4.jar", "zookeeper-3.8.4.jar"},
		where: "zkServer.sh",
	}, {
		name: "Homebrew: bin/zkServer.sh linked into libexec",
		setup: func(t *testing.T, r string) {
			touch(t, r+"/brew/Cellar/zookeeper/3.9.3/libexec/bin/zkServer.sh", r+"/brew/Cellar/zookeeper/3.9.3/libexec/lib/zookeeper-3.9.3.jar")
			symlink(t, "../Cellar/zookeeper/3.9.3/libexec/bin/zkServer.sh", r+"/brew/bin/zkServer.sh")
		},
		path: "brew/bin", version: "3.9.3", jars: []string{"zookeeper-3.9.3.jar"},
	}, {
		name: "Homebrew: zkServer wrapper beside libexec",
		setup: func(t *testing.T, r string) {
			touch(t, r+"/brew/Cellar/zookeeper/3.9.3/bin/zkServer", r+"/brew/Cellar/zookeeper/3.9.3/libexec/lib/zookeeper-3.9.3.jar")
			symlink(t, "../Cellar/zookeeper/3.9.3/bin/zkServer", r+"/brew/bin/zkServer")
		},
		path: "brew/bin", version: "3.9.3", jars: []string{"zookeeper-3.9.3.jar"},
	}, {
		name: "Debian 3.8 layout in ZOOKEEPER_HOME",
		setup: func(t *testing.T, r string) {
			mkJar(t, r+"/java/slf4j-api.jar")
			mkJar(t, r+"/java/zookeeper.jar", r+"/java/slf4j-api.jar", r+"/java/zookeeper-jute.jar")
			mkJar(t, r+"/java/zookeeper-jute.jar")
			symlink(t, "zookeeper.jar", r+"/java/zookeeper-3.8.0.jar")
		},
		home: "java", version: "3.8.0", jars: []string{"zookeeper-jute.jar", "zookeeper.jar"},
	}, {
		name: "Debian 3.9 layout: zookeeper.jar links to the versioned jar",
		setup: func(t *testing.T, r string) {
			mkJar(t, r+"/java/zookeeper-3.9.6.jar", r+"/java/zookeeper-jute.jar")
			mkJar(t, r+"/java/zookeeper-jute-3.9.6.jar")
			symlink(t, "zookeeper-3.9.6.jar", r+"/java/zookeeper.jar")
			symlink(t, "zookeeper-jute-3.9.6.jar", r+"/java/zookeeper-jute.jar")
		},
		home: "java", version: "3.9.6", jars: []string{"zookeeper-jute.jar", "zookeeper.jar"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			tc.setup(t, root)
			t.Setenv(EnvSearch, "home,path")
			t.Setenv(EnvHome, "")
			if tc.home != "" {
				t.Setenv(EnvHome, filepath.Join(root, tc.home))
			}
			t.Setenv("PATH", filepath.Join(root, tc.path))
			in, err := findServer("", "")
			require.NoError(t, err)
			assert.Equal(t, tc.version, in.version)
			assert.Equal(t, tc.jars, base(in.jars))
			assert.Contains(t, in.where, tc.where)
			require.NoError(t, in.fits(tc.version[:3]))
		})
	}
}

// The same installation through the option, with the search left out.
func TestWithServerHome(t *testing.T) {
	root := t.TempDir()
	touch(t, root+"/lib/zookeeper-3.9.2.jar")
	t.Setenv(EnvSearch, "home")
	t.Setenv(EnvHome, "")
	in, err := findServer(root, "3.9")
	require.NoError(t, err)
	assert.Equal(t, "3.9.2", in.version)
	assert.Equal(t, "WithServerHome("+root+")", in.where)

	_, err = findServer(root, "3.8")
	require.ErrorIs(t, err, ErrNoServer)
	assert.Contains(t, err.Error(), "WithServerHome("+root+"): WithServerHome("+root+"): ZooKeeper 3.9.2, want 3.8")

	empty := t.TempDir()
	_, err = findServer(empty, "")
	require.ErrorIs(t, err, ErrNoServer)
	assert.Contains(t, err.Error(), "no zookeeper-<version>.jar in "+empty+"/lib, "+empty+" or "+empty+"/libexec/lib")
}

// With nothing installed, the error lists every place and why it did not
// fit, and how to install a server; it names nothing of this repository.
func TestNoServerError(t *testing.T) {
	root := t.TempDir()
	t.Setenv(EnvHome, "")
	t.Setenv("PATH", root)
	t.Setenv(EnvCache, filepath.Join(root, "cache"))
	t.Setenv(EnvSearch, "home, cache,path")
	_, err := findServer("", "3.8")
	require.ErrorIs(t, err, ErrNoServer)
	msg := err.Error()
	for _, want := range []string{
		"zktest: no ZooKeeper server to run: looked for ZooKeeper 3.8 in:\n",
		"  ZOOKEEPER_HOME: not set\n",
		"  zklock's development cache " + root + "/cache/zookeeper-3.9 (ZKLOCK_CACHE): stat " + root + "/cache/zookeeper-3.9/usr/share/java/zookeeper.jar: no such file or directory\n",
		"  zkServer.sh on PATH: neither zkServer.sh nor zkServer is on PATH\n",
		"  (not searched, as ZKTEST_SEARCH says: debian)\n",
		"sudo apt install zookeeper", "brew install zookeeper", "apache-zookeeper-<version>-bin.tar.gz",
		"set ZOOKEEPER_HOME to its directory", "zktest/containers", "ZKTEST_IMAGE=zookeeper:3.9",
	} {
		assert.Contains(t, msg, want)
	}
	assert.NotContains(t, msg, "make")
	assert.NotContains(t, msg, "scripts/")

	t.Setenv(EnvSearch, "home,nowhere")
	_, err = findServer("", "")
	assert.ErrorContains(t, err, `ZKTEST_SEARCH="home,nowhere": "nowhere" is not one of home, cache, path, debian`)
}

// A zkServer.sh whose release has no server jar and a release of another
// version do not fit, and the error says why.
func TestFindMisfits(t *testing.T) {
	root := t.TempDir()
	touch(t, root+"/bin/zkServer.sh")
	touch(t, root+"/zk/lib/zookeeper-3.9.2.jar")
	t.Setenv("PATH", root+"/bin")
	t.Setenv(EnvHome, root+"/zk")
	t.Setenv(EnvSearch, "home,path")
	_, err := findServer("", "3.8")
	require.ErrorIs(t, err, ErrNoServer)
	assert.Contains(t, err.Error(), "ZOOKEEPER_HOME: ZOOKEEPER_HOME="+root+"/zk: ZooKeeper 3.9.2, want 3.8")
	assert.Contains(t, err.Error(), "zkServer.sh on PATH: found a zkServer script, but no zookeeper-<version>.jar in lib/ of "+root)
}

// zklock's cache holds Debian's 3.9 in Debian's layout: its jute jar comes
// first, or the server jar's manifest brings bookworm's 3.8 jute classes.
func TestCacheLayout(t *testing.T) {
	dir := filepath.Join(CacheDir(), "zookeeper-3.9", "usr", "share", "java")
	if !fileExists(filepath.Join(dir, "zookeeper.jar")) {
		t.Skipf("no ZooKeeper 3.9 in %s", dir)
	}
	t.Setenv(EnvSearch, "cache")
	in, err := findServer("", "3.9")
	require.NoError(t, err)
	assert.Equal(t, []string{dir + "/zookeeper-jute.jar", dir + "/zookeeper.jar"}, in.jars)
	assert.True(t, strings.HasPrefix(in.version, "3.9."), in.version)
	assert.True(t, in.debian)
}

// releaseFromCache lays out an Apache release's lib/ in a fresh directory
// from zklock's cached 3.9 jars and the system jars they need, or skips.
func releaseFromCache(t *testing.T) string {
	t.Helper()
	cache := filepath.Join(CacheDir(), "zookeeper-3.9", "usr", "share", "java")
	jars, _ := filepath.Glob(filepath.Join(cache, "zookeeper-*3.9*.jar"))
	if len(jars) == 0 || !fileExists(debianSLF4JSimple) {
		t.Skipf("no ZooKeeper 3.9 in %s, or no %s", cache, debianSLF4JSimple)
	}
	home := t.TempDir()
	for _, j := range append(jars, debianSLF4JSimple) {
		symlink(t, j, filepath.Join(home, "lib", filepath.Base(j)))
	}
	return home
}

// A release in ZOOKEEPER_HOME runs, with no other place searched.
func TestIntegration_ZooKeeperHome(t *testing.T) {
	if os.Getenv(envClasspath) != "" || os.Getenv(EnvServers) != "" {
		t.Skipf("zktest: %s or %s chooses the server", envClasspath, EnvServers)
	}
	home := releaseFromCache(t)
	t.Setenv(EnvHome, home)
	t.Setenv(EnvSearch, "home")
	t.Setenv(EnvVersion, "")
	c := Start(t)
	v, err := c.ServerVersion(0)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(v, "3.9."), v)
	assert.Equal(t, EnvHome+"="+home, c.origin)
}
