//go:build !zktest_docker

package zktest

import "testing"

// startDocker without the zktest_docker build tag: the docker backend is not
// compiled in, so ZKTEST_BACKEND=docker skips the test with a message.
func startDocker(t testing.TB, _ config) *Cluster {
	t.Helper()
	t.Skipf("zktest: %s=docker needs the build tag zktest_docker (go test -tags zktest_docker ./...) and a Docker engine; unset it to use local ZooKeeper processes", EnvBackend)
	return nil
}
