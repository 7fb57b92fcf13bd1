# zklock: every target installs what it needs (Debian/Ubuntu, as root).
GO ?= go
export PATH := $(PATH):/usr/local/go/bin
# A race build sleeps 1 s as it exits (atexit_sleep_ms, so that a report under way in
# another goroutine is finished); 50 ms does that too. The tests start hundreds of
# race-built processes (workers, examples, the command), each paying it.
GORACE ?= atexit_sleep_ms=50
export GORACE

.PHONY: all deps test test-stages unittest vet demo zk-start zk-stop zk-version zk-image bench bench-full bench-ab reliability reliability-negative reliability-containers soak fmt release dist image deploy-test

all: test

## deps: install ZooKeeper, a JDK, Curator, kazoo and PostgreSQL when missing
deps:
	@scripts/install-deps.sh

## test: go vet and the whole test suite with the race detector (real ZooKeeper),
## the root module on ZooKeeper 3.9 (the default), then again on bookworm's 3.8.0 what
## the server's release can change (ZK38_ROOT, ZK38_CLI: the wire, sessions and their
## expiry, notifications, ACL checks, TLS, CONTAINER nodes, one Curator peer on the wire)
## and zktest's server-facing tests (ZK38_ZKTEST), contrib/prometheus and
## contrib/otel, then the containers backend's tests (its own module) on the local Docker
## engine (they skip, saying why, without one), then make deploy-test (make dist, the image
## and three deployed containers), then the release check (internal/release:
## every published module fetched with go get from a module proxy built from this tree,
## offline). The 3.9 pass runs beside the others, which run one at a time (TEST_JOBS=2
## stages at once; TEST_JOBS=1 runs them in turn). Each stage prints its output whole when
## it ends, with its wall time; the last line gives the whole run's.
test:
	@start=$$(date +%s); $(MAKE) --no-print-directory test-stages; rc=$$?; \
	echo "make test: $$(($$(date +%s) - start)) s"; exit $$rc

# The root package's and the CLI's tests that make test runs again on ZooKeeper 3.8:
# those whose outcome can depend on the server's release. The rest is the client's own
# logic, the same on either server.
ZK38_ROOT = ^TestIntegration_(MutualExclusionAndTokens|CreatorOnlyACL|ReplyOverTheBound|NegotiatedSessionTimeout|ReconnectPacing|SilentServerIsLeft|NodeDeleted|OwnReleaseIsNotLoss|DeletionZxid|WaiterBehindUnreadable|ObserversOnUnreadable|TLS|CreateUnderUnseen|AmbiguousCreate|OwnNodeAhead|FindAdopts|ReapedDirectory|LatchDirectoryGone|Era|PipelinedListing|CuratorMutexInterop|LossOnServerSideExpiry|WaiterStopsOnExpiry|DroppedCreateReply|SemaphoreWireLayout|AcquireRidesOutAnOutage)
ZK38_ROOT_SKIP = TLSCurator
ZK38_CLI = ^TestIntegration_(StatusJSON|Ls|ACLCreatorKeepsIntruderOut|WaitBehindUnreadableNode|ObserveUnreadableNode|TLSFlags|TLSServerNames|UIEnsembleBrowser|ReapedDirectoryIsEmpty|Auth|CredentialsRefused|NodeDeletedStopsChild)
# zktest's own on 3.8: finding and starting the server, ensembles and their faults, expiry,
# TLS; the proxies are the client's side, the same on either server.
ZK38_ZKTEST = ^Test(Integration_(ServerVersion|Standalone|WithVersion|ZooKeeperHome|EnsembleServes|KillLeader|PauseFollower|SetLag|ResyncRestartsASnapshotFollower|Expire|ExpireConnectedSession|TLSServer|TLSClientAuth|ExampleService)|Find.*|CacheLayout|SelectedVersion|WantedVersion)$$

T = scripts/timed.sh
TEST_JOBS ?= 2
# In the order make starts them: with TEST_JOBS=2 the 3.9 pass (the longest) runs from the
# start and the rest follow one another beside it. The suite waits on servers more than it
# computes: run in turn, these stages kept the 2 cores 55% busy.
STAGES = stage-3.9 stage-3.8-root stage-3.8-cli stage-3.8-zktest stage-prometheus stage-otel \
	stage-containers stage-deploy stage-release
.PHONY: $(STAGES)

test-stages: deps vet
	@scripts/zk-image.sh --if-engine >/dev/null
	@$(MAKE) --no-print-directory -k -j$(TEST_JOBS) -Otarget $(STAGES)

stage-3.9:
	@$(MAKE) --no-print-directory zk-version ZKTEST_ZK_VERSION=3.9
	$(T) "3.9 ./..." $(GO) test -race -count=1 -p 3 -timeout 20m ./...
stage-3.8-root:
	@$(MAKE) --no-print-directory zk-version ZKTEST_ZK_VERSION=3.8
	ZKTEST_ZK_VERSION=3.8 $(T) "3.8 root" $(GO) test -race -count=1 -timeout 15m -run '$(ZK38_ROOT)' -skip '$(ZK38_ROOT_SKIP)' .
stage-3.8-cli:
	ZKTEST_ZK_VERSION=3.8 $(T) "3.8 cmd/zklock" $(GO) test -race -count=1 -timeout 15m -run '$(ZK38_CLI)' ./cmd/zklock
stage-3.8-zktest:
	ZKTEST_ZK_VERSION=3.8 $(T) "3.8 zktest" $(GO) test -race -count=1 -timeout 15m -run '$(ZK38_ZKTEST)' ./zktest
stage-prometheus:
	cd contrib/prometheus && ../../$(T) "contrib/prometheus" $(GO) test -race -count=1 ./...
stage-otel:
	cd contrib/otel && ../../$(T) "contrib/otel" $(GO) test -race -count=1 ./...
stage-containers:
	cd zktest/containers && ../../$(T) "zktest/containers" $(GO) test -race -count=1 -timeout 10m .
stage-deploy:
	@$(T) "deploy-test" $(MAKE) --no-print-directory deploy-test
stage-release:
	cd internal/release && ../../$(T) "internal/release" $(GO) test -count=1 .

## unittest: the tests that need no ZooKeeper
unittest:
	$(GO) test -count=1 -skip Integration ./...

vet:
	@test -z "$$(git ls-files -z -- '*.go' | xargs -0 gofmt -l)" || { echo "gofmt needed:"; git ls-files -z -- '*.go' | xargs -0 gofmt -l; exit 1; }
	$(GO) vet ./...
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum not tidy: run go mod tidy"; exit 1; }
	cd contrib/prometheus && $(GO) vet ./...
	@cd contrib/prometheus && $(GO) mod tidy -diff || { echo "contrib/prometheus: go.mod/go.sum not tidy: run go mod tidy there"; exit 1; }
	cd contrib/otel && $(GO) vet ./...
	@cd contrib/otel && $(GO) mod tidy -diff || { echo "contrib/otel: go.mod/go.sum not tidy: run go mod tidy there"; exit 1; }
	cd zktest/containers && $(GO) vet ./...
	@cd zktest/containers && $(GO) mod tidy -diff || { echo "zktest/containers: go.mod/go.sum not tidy: run go mod tidy there"; exit 1; }
	cd reliability/containers && $(GO) vet ./...
	@cd reliability/containers && $(GO) mod tidy -diff || { echo "reliability/containers: go.mod/go.sum not tidy: run go mod tidy there"; exit 1; }
	cd internal/release && $(GO) vet ./...
	@cd internal/release && $(GO) mod tidy -diff || { echo "internal/release: go.mod/go.sum not tidy: run go mod tidy there"; exit 1; }
	cd internal/deploytest && $(GO) vet ./...
	@cd internal/deploytest && $(GO) mod tidy -diff || { echo "internal/deploytest: go.mod/go.sum not tidy: run go mod tidy there"; exit 1; }

## demo: leader-only job runners against a local ZooKeeper it starts itself
demo: deps
	@scripts/demo.sh

## zk-start / zk-stop: a development ZooKeeper on 127.0.0.1:2181
zk-start: deps
	@scripts/zk-dev.sh start
zk-stop:
	@scripts/zk-dev.sh stop

## zk-version: the release ZKTEST_ZK_VERSION selects (3.9 by default), as its server reports it
zk-version:
	@$(GO) test -count=1 -run '^TestIntegration_ServerVersion$$' -v ./zktest | sed -n 's/.*: ZooKeeper \([0-9.]*\)$$/== ZooKeeper \1 (ZKTEST_ZK_VERSION=$(or $(ZKTEST_ZK_VERSION),3.9))/p'

## zk-image: the ZooKeeper 3.9 and 3.8 images of the containers backend, from Debian packages (no registry)
zk-image:
	@scripts/zk-image.sh >/dev/null

## bench: zklock against Curator, kazoo, go-zookeeper and the ZooKeeper floors,
## and the time without a leader (< 15 min)
bench: deps
	@scripts/bench.sh

## bench-full: the same with 10 longer repetitions and 60 failover events per case
bench-full: deps
	@BENCH_SIZE=full scripts/bench.sh

## bench-ab OLD=<rev>: this tree's locks against revision OLD's, interleaved on one server
bench-ab: deps
	@scripts/bench-ab.sh $(OLD)

## reliability: the fault-injection suite at short durations (<= 10 min)
reliability: deps
	@scripts/reliability.sh short

## reliability-negative: deliberately broken variants the checkers must catch
reliability-negative: deps
	@scripts/reliability.sh negative

## reliability-containers: S18-S20 (partitions, rolling restarts) on an ensemble in containers
reliability-containers: deps zk-image
	@scripts/reliability.sh containers

## soak: every scenario round-robin for SOAK_BUDGET (default 4h; checkpointed to soak.jsonl,
## resumable with the same RELIABILITY_OUT), then FuzzAPI for FUZZ_BUDGET (default 10m), then
## make reliability-containers when a Docker engine answers; ends with the table and the line
## soak: acquisitions=N fault_exposed=M faults=F violations=V upper95=X
soak: deps zk-image
	@scripts/reliability.sh soak

fmt:
	gofmt -w .

## dist: static binaries of cmd/zklock for linux and darwin, amd64 and arm64, into dist/
## with SHA256SUMS, stamped with VERSION (default: git describe --tags --always)
dist:
	@VERSION=$(VERSION) scripts/dist.sh >/dev/null

## image: the container image zklock/zklock:VERSION and :latest (examples/deploy/Dockerfile)
## from dist's linux/amd64 binary, on a Debian base built from Debian packages (no registry)
image: dist
	@scripts/image.sh >/dev/null

## deploy-test: make dist, then internal/deploytest: the dist files, and the image built and run
## as three zklock elect containers against ZooKeeper in a container (docker stop and kill of the
## leader, /leader and the HEALTHCHECK watched from the host; skips without a Docker engine; < 4 min)
deploy-test: dist
	@scripts/zk-image.sh --if-engine 3.9 >/dev/null
	cd internal/deploytest && VERSION=$(VERSION) $(GO) test -race -count=1 -v -timeout 8m .

## release: check the tree for the release of CHANGELOG.md's version and print the tags to push
release:
	@scripts/release.sh
