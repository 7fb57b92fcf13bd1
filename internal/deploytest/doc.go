// Package deploytest checks zklock as it is shipped and deployed: the
// release binaries make dist leaves in dist/, and the container image
// scripts/image.sh builds from them, run as three `zklock elect`
// containers against a ZooKeeper container on a Docker network of the
// test's own, stopped (SIGTERM) and killed as platforms do, and watched
// from the host through their /leader and /healthz endpoints.
//
// It is a module of its own, using the docker CLI and the Engine API
// (standard library only), so that the library's go.mod gains nothing.
// make test runs it after make dist (make deploy-test). Without a Docker
// engine the container test skips, saying why.
package deploytest
